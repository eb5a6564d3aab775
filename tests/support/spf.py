"""Hand-made SPF scenes: a StartState with chosen positions, straight synthetic paths and everyone else far away."""
from __future__ import annotations

import numpy as np

from core.base.world import KNOWN_CONCEPTS
from core.tasks.spf.state import StartState

FAR = (200, 200)  # more than a field of view away from every scene cell used in the tests


def line(start, direction=(0, 1), length=12) -> np.ndarray:
    r, c = start
    dr, dc = direction
    return np.array([(r + k * dr, c + k * dc) for k in range(length)], np.int32)


def scene(env, ego_pos, *, ego_dir=(0, 1), ego_len=12, others=None, headings=None, concepts=None,
          priorities=None, seed=0) -> StartState:
    """``others``: {agent index: (row, col)} placed in the scene (the rest sit at FAR); ``headings``: {index:
    heading}; ``concepts``: {index: [names]} (replacing the file's); ``priorities``: {index: p}."""
    sim = env.sim
    n = len(sim.agents)
    base = sim.config.agents.table()
    pos = np.array([FAR] * n, np.int32)
    pos[0] = ego_pos
    for i, p in (others or {}).items():
        pos[i] = p
    paths = [line(ego_pos, ego_dir, ego_len)] + [line(tuple(pos[i]), (0, 1), 3) for i in range(1, n)]
    head = np.full(n, -1, np.int8)
    for i, h in (headings or {}).items():
        head[i] = h
    pri = np.array(base.priorities, np.int32)
    for i, p in (priorities or {}).items():
        pri[i] = p
    cons = {c: np.array(base.concepts[c], bool) for c in KNOWN_CONCEPTS}
    for i, names in (concepts or {}).items():
        for c in KNOWN_CONCEPTS:
            cons[c][i] = c in names
    goals = np.array([p[-1] for p in paths], np.int32)
    return StartState(pos, head, goals, np.zeros(n, np.int32), np.zeros(n, bool), np.zeros(n, np.int32),
                      tuple(paths), pri, cons, seed, {"concept": "test"})


def at_and_box(city):
    """A car 'at intersection' cell and a nearby 'in intersection' box cell (a few cells apart)."""
    at = np.argwhere(city.intersections[0] != 0)
    box = np.argwhere(city.intersections[2] != 0)
    a = at[len(at) // 2]
    d = np.abs(box - a).sum(axis=1)
    b = box[np.argmin(np.where(d >= 3, d, 10 ** 6))]
    return tuple(int(x) for x in a), tuple(int(x) for x in b)


def plain_cell(city, near=(60, 60)):
    """A drivable cell that is neither 'at' nor 'in' an intersection, close to ``near``."""
    inter = (city.intersections != 0).any(axis=0)
    ok = np.argwhere(city.drivable & ~inter)
    d = np.abs(ok - np.asarray(near)).sum(axis=1)
    return tuple(int(x) for x in ok[np.argmin(d)])


# ---- the SPF play window (pytest-qt) ---------------------------------------------------------------------------

def open_spf_window(qtbot, size: tuple[int, int] = (1200, 780)):
    """A shown ``app.features.spf.play.SPFPlayWindow`` of ``size`` whose questions ``w.dialogs.answers`` answers
    (closing without asking about an unsaved run)."""
    from app.features.spf.play import SPFPlayWindow
    from tests.support.driver import ScriptedDialogs
    from tests.support.qt import shown

    w = SPFPlayWindow(dialogs=ScriptedDialogs())
    w.dialogs.answers["unsaved_run"] = "discard"   # closing at teardown must not wait on a question
    return shown(qtbot, w, *size)
