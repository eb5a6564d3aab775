"""Breakpoints in the studio window (pytest-qt): a step breakpoint pauses exactly there, action and goal breakpoints
fire and Play moves on past the hit it stopped at, and every breakpoint edit (dock checkbox, undo, redo) is an
unsaved change."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.studio import WAIT, default_config, run_sim, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402


def test_breakpoint_at_step_pauses_exactly_there(studio, qtbot):
    from core.sim.events import Breakpoint

    studio.add_breakpoint(Breakpoint("step", step=9))
    assert studio.timeline.bar.breakpoints == [9]
    studio.set_speed(0)
    studio.play()
    qtbot.waitUntil(lambda: not studio.playing and studio.num_steps >= 9, timeout=WAIT)
    qtbot.wait(100)
    assert studio.num_steps == 9 and studio.cursor == 9
    assert "Breakpoint" in studio.last_message
    studio.undo_stack.undo()
    assert studio.breakpoints == [] and studio.timeline.bar.breakpoints == []
    studio.undo_stack.redo()
    assert len(studio.breakpoints) == 1


def test_breakpoint_when_agent_does_an_action(studio, qtbot):
    from core.base.codes import ACTION_INDEX

    simulate(qtbot, studio, 3)
    # the action this agent takes most often in a reference run: it will happen soon
    ref = run_sim(default_config(), seed=studio.project.seed, steps=60)
    dec = np.asarray(ref.buffer.array("decided"))
    agent = 0
    target = int(np.argmin(dec[3:, agent] == dec[3, agent]) if (dec[3:, agent] != dec[3, agent]).any() else 0)
    action = ["Slow", "Normal", "Fast", "Stop"][int(dec[3 + target, agent])]
    studio.select_agent(agent)
    studio.add_agent_breakpoint(action)
    name = studio.history.agents.names[agent]
    assert studio.breakpoints[-1].describe() == f"pause while {name} does {action}"   # level: every such step
    studio.set_speed(0)
    studio.play()
    qtbot.waitUntil(lambda: not studio.playing and "Breakpoint" in studio.last_message, timeout=WAIT)
    k = studio.cursor
    assert int(studio.history.step_record(k).decided[agent]) == ACTION_INDEX[action]
    assert studio.num_steps == k + 1          # paused right after the step in which it happened


@pytest.mark.parametrize("bp_args", [dict(kind="action", agent="Car_3", action="Stop"), dict(kind="goal")])
def test_play_continues_past_an_action_or_goal_breakpoint(studio, qtbot, bp_args):
    from core.sim.events import Breakpoint

    win = studio
    win.add_breakpoint(Breakpoint(**bp_args))
    win.set_speed(0)
    win.window.status("")
    win.play()
    qtbot.waitUntil(lambda: not win.playing and win.last_message.startswith("Breakpoint:"), timeout=WAIT)
    first = win.cursor
    assert first < win.num_steps
    seen = [first]
    win.set_speed(50)
    for _ in range(3):            # each Play moves on: to a later hit of the same breakpoint, never the same one
        win.window.status("")
        win.play()
        qtbot.waitUntil(lambda: win.cursor > seen[-1] or not win.playing, timeout=WAIT)
        qtbot.waitUntil(lambda: not win.playing or win.cursor > seen[-1] + 3, timeout=WAIT)
        win.pause()
        assert win.cursor > seen[-1], (seen, win.cursor, win.last_message)
        seen.append(win.cursor)
    # scrubbing back to the first hit and pressing Play also moves on
    win.set_cursor(first)
    win.play()
    qtbot.waitUntil(lambda: win.cursor > first or not win.playing, timeout=WAIT)
    win.pause()
    assert win.cursor > first


def test_breakpoint_edits_mark_the_project_modified(studio, qtbot, tmp_path):
    from core.sim.events import Breakpoint

    win = studio
    simulate(qtbot, win, 3)
    win.add_breakpoint(Breakpoint("step", step=50))
    assert win.dirty
    assert win.save_to(tmp_path / "p") and not win.dirty and not win.window.isWindowModified()
    win.bp_list.item(0).setCheckState(QtCore.Qt.CheckState.Unchecked)      # disable it in the dock
    assert not win.breakpoints[0].enabled
    assert win.dirty and win.window.isWindowModified()
    win.answers["unsaved"] = "cancel"
    assert not win.open_path(tmp_path / "p")                               # the unsaved-changes question came
    win.undo_stack.undo()                                                        # back to the saved state
    assert win.breakpoints[0].enabled and not win.dirty and not win.window.isWindowModified()
    win.undo_stack.redo()
    assert not win.breakpoints[0].enabled and win.dirty
    assert win.save_to(tmp_path / "p") and not win.dirty
    win.undo_stack.undo()                                                        # undo past the save point
    assert win.breakpoints[0].enabled and win.dirty and win.window.isWindowModified()
    assert win.save_to(tmp_path / "p") and not win.dirty
    simulate(qtbot, win, win.num_steps + 1)                               # other changes stay unsaved
    win.add_breakpoint(Breakpoint("goal"))
    win.undo_stack.undo()
    assert win.dirty
