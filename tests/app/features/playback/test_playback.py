"""Playing, scrubbing, replaying and branching in the studio window (pytest-qt): the recorded run is the
deterministic one, stepping from the past offers a branch, a forced action changes it, typing a step pauses there."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.studio import (
    WAIT,
    close_window,
    default_config,
    force_then_simulate,
    open_window,
    run_sim,
    shown_positions,
    simulate,
)

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402


def test_play_records_the_deterministic_run_and_scrubbing_shows_it(studio, qtbot):
    simulate(qtbot, studio, 25)
    t = studio.num_steps
    assert t >= 25 and studio.cursor == t
    # the GUI's copy equals a fresh headless run with the same seed
    ref = run_sim(default_config(), seed=studio.project.seed, steps=t)
    for f in ("positions", "headings", "goals", "decided", "realised", "fired", "reached"):
        assert np.array_equal(np.asarray(studio.history.array(f)), np.asarray(ref.buffer.array(f))), f
    # scrub back and forward: the view shows exactly the recorded state
    for k in (0, 7, t - 3, 3, t):
        studio.timeline.bar.stepRequested.emit(k)
        studio.flush_redraw()
        assert studio.cursor == k and studio.map.scene_data.step == k
        assert np.array_equal(shown_positions(studio), studio.history.snapshot(k).positions)
        sel_goals = studio.map.goal_item.getData()
        assert np.array_equal(np.floor(sel_goals[1]).astype(int), studio.history.goals(k)[:, 0])
    # typing a step
    studio.timeline.spin.setValue(5)
    studio.flush_redraw()
    assert studio.cursor == 5 and np.array_equal(shown_positions(studio), studio.history.snapshot(5).positions)
    # a drag on the painted bar
    bar = studio.timeline.bar
    x = int(bar.x_of(t // 2))
    qtbot.mousePress(bar, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(x, 20))
    qtbot.mouseRelease(bar, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(x, 20))
    assert abs(studio.cursor - t // 2) <= 1


def test_replay_from_the_past_then_continue_live(studio, qtbot):
    simulate(qtbot, studio, 10)
    t = studio.num_steps
    studio.set_cursor(2)
    studio.set_speed(50)
    studio.play()
    assert studio.replaying
    qtbot.waitUntil(lambda: studio.num_steps >= t + 3, timeout=WAIT)   # replayed, then simulated on
    studio.pause()
    assert studio.history.num_steps >= t + 3


def test_typing_a_step_while_playing_pauses_there(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path / "studio.ini")
    try:
        win.set_speed(20)
        win.play()
        qtbot.waitUntil(lambda: win.num_steps >= 6, timeout=WAIT)
        win.timeline.spin.setValue(3)          # what typing 3 + Enter does (keyboard tracking is off)
        qtbot.wait(400)                         # frames still in flight must not move the view
        assert not win.playing and win.cursor == 3
        assert win.timeline.value == 3
    finally:
        close_window(win)


def test_stepping_from_the_past_offers_to_branch(studio, qtbot):
    simulate(qtbot, studio, 12)
    t = studio.num_steps
    studio.set_cursor(5)
    studio.answers["branch"] = "cancel"
    studio.simulate_step()
    qtbot.wait(100)
    assert studio.num_steps == t and studio.cursor == 5          # nothing overwritten
    studio.answers["branch"] = "newest"
    studio.simulate_step()
    qtbot.waitUntil(lambda: studio.num_steps == t + 1, timeout=WAIT)
    studio.set_cursor(5)
    studio.answers["branch"] = "branch"
    studio.simulate_step()
    qtbot.waitUntil(lambda: studio.num_steps == 6, timeout=WAIT)
    assert studio.cursor == 6
    ref = run_sim(default_config(), seed=studio.project.seed, steps=6)   # the branch continues the same run
    assert np.array_equal(np.asarray(studio.history.array("positions")), np.asarray(ref.buffer.array("positions")))
    studio.set_cursor(studio.num_steps)
    simulate(qtbot, studio, 10)
    assert studio.timeline.bar.maximum == studio.num_steps


def test_forcing_an_action_changes_the_branch(studio, qtbot):
    from core.base.codes import Action

    simulate(qtbot, studio, 4)
    t = force_then_simulate(qtbot, studio, 0, int(Action.STOP), steps=2)
    assert all(int(studio.history.step_record(k).decided[0]) == int(Action.STOP) for k in (t, t + 1))
    assert all(int(studio.history.step_record(k).realised[0]) == int(Action.STOP) for k in (t, t + 1))
    assert studio.history.meta["interventions"] == [{"step": t, "agent": 0, "action": int(Action.STOP)}]
    studio.force_action(None)
    studio.simulate_step()
    qtbot.waitUntil(lambda: studio.num_steps == t + 3, timeout=WAIT)
    assert studio.history.meta["interventions"][-1] == {"step": t + 2, "agent": 0, "action": None}
