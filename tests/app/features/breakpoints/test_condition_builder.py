"""The breakpoint condition builder, driven through the Breakpoints dock's buttons and the dialog (pytest-qt): an
edge-triggered breakpoint pauses at the step where the recorded action changes to Stop, Edit… changes it, undo
restores it, the check box disables it (playback then runs past the next such step), and entries are readable."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.studio import WAIT, default_config, run_sim

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

STEPS = 120


def edges(dec: np.ndarray, a: int, action: int) -> list[int]:
    return [k for k in range(len(dec)) if dec[k, a] == action and (k == 0 or dec[k - 1, a] != action)]


def pick(dialog, combo: QtWidgets.QComboBox, data=None, text=None) -> None:
    combo.setCurrentIndex(combo.findData(data) if data is not None else combo.findText(text))
    assert combo.currentIndex() >= 0


def click(qtbot, button: QtWidgets.QAbstractButton) -> None:
    assert button.isEnabled() and button.isVisible(), button.text()
    qtbot.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)


def ok(dialog) -> QtWidgets.QPushButton:
    return dialog.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)


def test_build_play_edit_undo_and_disable_an_edge_breakpoint(studio, qtbot):
    from core.base.codes import ACTION_INDEX
    from core.sim.breakpoints import Breakpoint

    win = studio
    stop = ACTION_INDEX["Stop"]
    ref = run_sim(default_config(), seed=win.project.seed, steps=STEPS)
    dec = np.asarray(ref.buffer.array("decided"))
    names = ref.buffer.agents.names
    # an agent that starts to Stop at least twice, the first time after a few steps of moving
    a = next(a for a in range(len(names)) if len(edges(dec, a, stop)) >= 2 and edges(dec, a, stop)[0] >= 3)
    first, second = edges(dec, a, stop)[:2]
    name = names[a]
    win.docks["breakpoints"].show()
    win.docks["breakpoints"].raise_()
    panel = win.bp_panel

    # Add… → condition builder: action Stop, subject this agent, "when it starts"
    click(qtbot, panel.add_btn)
    dlg = win.feature("breakpoints").dialog
    assert dlg is not None and dlg.isVisible() and dlg.windowTitle() == "Add breakpoint"
    pick(dlg, dlg.condition, "action")
    pick(dlg, dlg.subject, "agent")
    pick(dlg, dlg.who, text=name)
    pick(dlg, dlg.action, text="Stop")
    dlg.when.setChecked(True)
    assert dlg.preview.text().startswith(f"pause when {name} starts to Stop")
    click(qtbot, ok(dlg))
    qtbot.waitUntil(lambda: win.feature("breakpoints").dialog is None, timeout=WAIT)
    want = Breakpoint("action", agent=name, action="Stop", mode="when")
    assert win.breakpoints == [want]
    item = win.bp_list.item(0)
    assert item.text() == f"pause when {name} starts to Stop" and "edge-triggered" in item.toolTip()
    # the dock is wide enough for its entry, in a window of this size
    qtbot.waitUntil(lambda: win.bp_panel.width() >= win.bp_panel.entry_width(), timeout=WAIT)

    # play from the start: it pauses where the recorded decision changes to Stop (the reference run's step)
    win.set_cursor(0)
    win.set_speed(0)
    win.window.status("")
    win.play()
    qtbot.waitUntil(lambda: not win.playing and win.last_message.startswith("Breakpoint:"), timeout=WAIT)
    assert win.cursor == first and win.num_steps == first + 1
    rec = np.asarray(win.history.array("decided"))
    assert rec[first, a] == stop and rec[first - 1, a] != stop
    assert np.array_equal(rec[:first + 1], dec[:first + 1])
    assert f"{name} starts to Stop at step {first}" in win.last_message

    # Edit… → while; one undo step puts the edge breakpoint back
    win.bp_list.setCurrentRow(0)
    click(qtbot, panel.edit_btn)
    dlg = win.feature("breakpoints").dialog
    assert dlg.windowTitle() == "Edit breakpoint" and dlg.when.isChecked() and dlg.who.currentText() == name
    dlg.while_.setChecked(True)
    click(qtbot, ok(dlg))
    qtbot.waitUntil(lambda: win.feature("breakpoints").dialog is None, timeout=WAIT)
    assert win.breakpoints == [Breakpoint("action", agent=name, action="Stop", mode="while")]
    assert win.bp_list.item(0).text() == f"pause while {name} does Stop"
    assert win.undo_stack.undoText().startswith("Edit breakpoint")
    win.undo_stack.undo()
    assert win.breakpoints == [want] and win.bp_list.item(0).text() == f"pause when {name} starts to Stop"

    # disable it with its check box: playing on runs past the next step at which the agent starts to Stop
    win.bp_list.item(0).setCheckState(QtCore.Qt.CheckState.Unchecked)
    assert win.breakpoints == [Breakpoint("action", agent=name, action="Stop", mode="when", enabled=False)]
    assert "disabled" in win.bp_list.item(0).toolTip()
    win.window.status("")
    win.set_cursor(win.num_steps)
    win.play()
    qtbot.waitUntil(lambda: win.num_steps >= second + 5 or not win.playing, timeout=WAIT)
    win.pause()
    assert win.num_steps >= second + 5 and not win.last_message.startswith("Breakpoint:")
    # enabled again (undo of the check box), it would have fired there: the recorded steps say so
    win.undo_stack.undo()
    assert win.breakpoints == [want]
    assert want.check(win.history, second) is not None and want.check(win.history, second - 1) is None


def test_builder_offers_type_concept_clause_and_gridlock_and_refuses_duplicates(studio, qtbot):
    from core.sim.breakpoints import Breakpoint

    win = studio
    win.docks["breakpoints"].show()
    click(qtbot, win.bp_panel.add_btn)
    dlg = win.feature("breakpoints").dialog
    pick(dlg, dlg.condition, "clause")
    labels = [dlg.clause.itemText(i) for i in range(dlg.clause.count())]
    assert "Stop#1" in labels                          # the recording's clauses are offered
    pick(dlg, dlg.clause, text="Stop#1")
    pick(dlg, dlg.subject, "concept")
    pick(dlg, dlg.who, text="police")
    assert not dlg.action.isVisible() and dlg.mode_box.isVisible()
    click(qtbot, ok(dlg))
    qtbot.waitUntil(lambda: win.feature("breakpoints").dialog is None, timeout=WAIT)
    assert win.breakpoints[-1] == Breakpoint("clause", concept="police", clause="Stop#1", mode="when")

    click(qtbot, win.bp_panel.add_btn)
    dlg = win.feature("breakpoints").dialog
    pick(dlg, dlg.condition, "gridlock")
    pick(dlg, dlg.subject, "type")
    pick(dlg, dlg.who, text="Car")
    assert dlg.preview.text().startswith("pause when any Car gets stuck in a gridlock")
    click(qtbot, ok(dlg))
    qtbot.waitUntil(lambda: win.feature("breakpoints").dialog is None, timeout=WAIT)
    assert win.breakpoints[-1] == Breakpoint("gridlock", type="Car")
    assert [win.bp_list.item(i).text() for i in range(win.bp_list.count())] == [
        "pause when clause Stop#1 starts to fire for any police agent", "pause when any Car gets stuck in a gridlock"]

    # an empty clause is not a breakpoint: OK stays disabled and the preview says why
    click(qtbot, win.bp_panel.add_btn)
    dlg = win.feature("breakpoints").dialog
    pick(dlg, dlg.condition, "clause")
    dlg.clause.setCurrentText("")
    assert not ok(dlg).isEnabled() and "needs a clause" in dlg.preview.text()
    # the same condition again: nothing is added, the status line says so
    pick(dlg, dlg.condition, "gridlock")
    pick(dlg, dlg.subject, "type")
    pick(dlg, dlg.who, text="Car")
    click(qtbot, ok(dlg))
    qtbot.waitUntil(lambda: win.feature("breakpoints").dialog is None, timeout=WAIT)
    assert len(win.breakpoints) == 2 and "Already a breakpoint" in win.last_message

    # Remove with nothing selected is disabled; select and remove (undoable)
    win.bp_list.setCurrentRow(-1)
    assert not win.bp_panel.remove_btn.isEnabled() and not win.bp_panel.edit_btn.isEnabled()
    win.bp_list.setCurrentRow(1)
    click(qtbot, win.bp_panel.remove_btn)
    assert win.breakpoints == [Breakpoint("clause", concept="police", clause="Stop#1", mode="when")]
    win.undo_stack.undo()
    assert len(win.breakpoints) == 2


def test_play_from_a_paused_state_does_not_stop_at_once_for_the_step_it_simulates_first(studio, qtbot):
    """Paused by hand at state k (not at a breakpoint), with a breakpoint that fires in step k: Play simulates step k
    live and moves on instead of showing state k again (a hit for the state playback resumes from is skipped, as
    when replaying)."""
    from core.base.codes import ACTION_INDEX
    from core.sim.breakpoints import Breakpoint

    win = studio
    stop = ACTION_INDEX["Stop"]
    ref = run_sim(default_config(), seed=win.project.seed, steps=STEPS)
    dec = np.asarray(ref.buffer.array("decided"))
    names = ref.buffer.agents.names
    a, k, later = next((a, e[0], e[1]) for a in range(len(names)) for e in [edges(dec, a, stop)]
                       if len(e) >= 2 and 3 <= e[0] <= 40)
    while win.num_steps < k:
        n = win.num_steps
        win.simulate_step()
        qtbot.waitUntil(lambda n=n: win.num_steps == n + 1 and not win.playing, timeout=WAIT)
    assert win.num_steps == k and win.cursor == k
    win.add_breakpoint(Breakpoint("action", agent=names[a], action="Stop", mode="when"))
    win.set_speed(0)
    win.window.status("")
    win.play()
    qtbot.waitUntil(lambda: not win.playing, timeout=WAIT)
    assert win.cursor == later and f"at step {later}" in win.last_message, (k, later, win.cursor, win.last_message)
