"""Helpers shared by the studio tests: the bundled default city, a headless reference run, episode comparison, and
(for the pytest-qt tests in tests/app) opening, driving (tests/support/driver.py) and closing the main window.

Qt and the application are imported inside the window helpers only, so the Qt-free tests can use this module
without PySide6.
"""
from __future__ import annotations

import numpy as np

from tests.support.paths import DEFAULT_MODE, MODES, ROOT

__all__ = ["DEFAULT_MODE", "ROOT", "RUN_STEPS", "WAIT", "assert_same_episode", "close_window", "default_config",
           "force_then_simulate", "open_window", "recorded_run", "recorded_session", "run_sim", "save_default_project",
           "shown_positions", "simulate"]

#: Steps of the recorded default-city run the Qt-free studio tests share (fixture ``sim`` in tests/core).
RUN_STEPS = 40
WAIT = 60_000   # ms; a slow 2-core CI box must never time out


def default_config():
    from core.sim.config import load_mode

    return load_mode(DEFAULT_MODE)


def run_sim(config, seed: int = 0, steps: int = 20):
    from core.sim.simulation import Simulation

    sim = Simulation(config, seed=seed, record=True)
    for _ in range(steps):
        sim.step()
    return sim


def record_groundings(config, seed: int, steps: int):
    """(a simulation run ``steps`` steps, the grounding its engine decided each step on)."""
    from core.sim.simulation import Simulation

    sim = Simulation(config, seed=seed)
    groundings = []
    decide = sim.decide

    def keep(snap=None):
        g, d = decide(snap)
        groundings.append(g)
        return g, d

    sim.decide = keep
    sim.run(steps)
    return sim, groundings


def recorded_run(mode: str, steps: int, seed: int = 0, force=None):
    """(config, recording) of ``steps`` recorded steps of the bundled mode ``configs/modes/<mode>.yaml``;
    ``force(k)``: the actions forced at step ``k`` (``{agent: action}`` or None)."""
    from core.sim.config import load_mode
    from core.sim.simulation import Simulation

    config = load_mode(MODES / f"{mode}.yaml")
    sim = Simulation(config, seed=seed)
    for k in range(steps):
        sim.step(None if force is None else force(k))
    return config, sim.buffer


def assert_same_episode(a, b, upto: int | None = None, coins: bool = True):
    """Every state/step array and every planned path of two episode buffers are equal (up to ``upto``), and so are
    the recorded CollidingClose coins of every step (unless ``coins`` is False: one side is a file of the format
    without them)."""
    from core.sim.episode import STATE_FIELDS, STEP_FIELDS

    for f in STATE_FIELDS + STEP_FIELDS:
        x, y = np.asarray(a.array(f)), np.asarray(b.array(f))
        if upto is not None:
            x, y = x[:upto], y[:upto]
        assert np.array_equal(x, y), f
    for k in range(a.num_states if upto is None else min(upto, a.num_states)):
        for i in range(len(a.agents)):
            pa, ia = a.plan(k, i)
            pb, ib = b.plan(k, i)
            assert ia == ib and np.array_equal(pa, pb)
    if coins:
        assert a.coins_from_step == b.coins_from_step
        for k in range(a.num_steps if upto is None else min(upto, a.num_steps)):
            ca, cb = a.coins(k), b.coins(k)
            assert (ca is None) == (cb is None), k
            if ca is not None:
                drawn = {name for c in (ca, cb) for name, (_, v) in c.items() if len(v)}
                for name in drawn:
                    assert name in ca and name in cb, (k, name)
                    assert np.array_equal(ca[name][0], cb[name][0]) and np.array_equal(ca[name][1], cb[name][1]), \
                        (k, name)


def save_default_project(root):
    """A saved project of the default city with a ``studio:`` block (step 7, Car_3 selected, one breakpoint)."""
    from core.project.model import new_project
    from core.project.save import save_project

    cfg = default_config()
    p = new_project(cfg)
    p.studio = {"colour_by": "Type", "step": 7, "selected": "Car_3", "breakpoints": [{"kind": "step", "step": 40}]}
    save_project(p, root, episode=run_sim(cfg, steps=10).buffer)
    return root


def recorded_session(config, frames, saved: bool = False):
    """A ``core.studio.session.Session`` of a new project of ``config`` (seed 3) whose recording holds ``frames[0]``
    (state 0) and then the steps of ``frames[1:5]``; ``saved``: marked saved (not modified) after that."""
    from core.project.model import new_project
    from core.sim.episode import EpisodeBuffer
    from core.sim.frames import apply_frame
    from core.studio.session import Session

    s = Session()
    s.open(new_project(config, seed=3))
    buf = EpisodeBuffer(frames[0].agents, {"seed": 3}, witness_vars=frames[1].step["witness"].shape[-1])
    apply_frame(buf, frames[0])
    s.set_history(buf)
    s.record(frames[1:5])
    if saved:
        s.mark_saved()
    return s


# ---- the studio window (pytest-qt) ---------------------------------------------------------------------------

def open_window(qtbot, settings_path, path=DEFAULT_MODE, size=(1280, 820), unattended: bool = False):
    """A :class:`~tests.support.driver.StudioDriver` of a shown main window with ``path`` opened and its first
    state synced (``path=None``: nothing opened); ``unattended``: the window a ``--screenshot`` run makes (its
    questions answer themselves)."""
    from app.shell.dialogs import UnattendedDialogs
    from app.shell.settings import make_settings
    from app.shell.window import MainWindow
    from tests.support.driver import ScriptedDialogs, StudioDriver

    dialogs = ScriptedDialogs()
    win = MainWindow(make_settings(settings_path), dialogs=UnattendedDialogs() if unattended else dialogs,
                     unattended=unattended)
    qtbot.addWidget(win)
    studio = StudioDriver(win, dialogs)
    studio.answers["unsaved"] = "discard"
    win.resize(*size)
    win.show()
    if path is not None:
        assert studio.open_path(path)
        qtbot.waitUntil(lambda: studio.history is not None and not studio.syncing, timeout=WAIT)
    return studio


def close_window(studio):
    """Close without questions and check the simulation thread really ended."""
    studio.answers["unsaved"] = "discard"
    studio.window.close()
    assert studio.simulation.thread.wait(10_000)
    assert studio.simulation.thread.isFinished()


def simulate(qtbot, studio, steps: int):
    """Simulate until ``steps`` steps are recorded (as fast as possible) and pause."""
    studio.set_speed(0)
    studio.set_cursor(studio.num_steps)
    studio.play()
    qtbot.waitUntil(lambda: studio.num_steps >= steps, timeout=WAIT)
    studio.pause()
    qtbot.waitUntil(lambda: not studio.simulation.worker.playing, timeout=WAIT)
    qtbot.wait(50)   # frames already in flight arrive


def force_then_simulate(qtbot, studio, agent: int, action: int, steps: int = 1) -> int:
    """Select ``agent``, force ``action`` on it and simulate ``steps`` more steps; returns the first forced step."""
    t = studio.num_steps
    studio.select_agent(agent)
    studio.force_action(action)
    for _ in range(steps):
        studio.simulate_step()
    qtbot.waitUntil(lambda: studio.num_steps == t + steps, timeout=WAIT)
    return t


def shown_positions(studio) -> np.ndarray:
    """Cell (row, col) of every glyph the map view holds."""
    x, y = studio.map.agent_item.getData()
    return np.stack([np.floor(y), np.floor(x)], axis=1).astype(int)
