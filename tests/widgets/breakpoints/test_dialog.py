"""The breakpoint condition builder and the Breakpoints panel on their own (pytest-qt): Edit shows every kind of
breakpoint so that OK returns it unchanged, fields that do not belong to a condition are hidden, and the panel's
buttons announce what was asked for (widgets/breakpoints/dialog.py, widgets/breakpoints/breakpoint_list.py)."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.sim.breakpoints import Breakpoint  # noqa: E402
from widgets.breakpoints.breakpoint_list import BreakpointList  # noqa: E402
from widgets.breakpoints.dialog import BreakpointDialog  # noqa: E402

NAMES = ("Car_1", "Car_2", "Pedestrian_1")
ALL = [Breakpoint("step", step=17), Breakpoint("goal"), Breakpoint("goal", agent="Car_2"),
       Breakpoint("goal", type="Pedestrian", enabled=False),
       Breakpoint("action", agent="Car_2", action="Stop", mode="when"),
       Breakpoint("action", concept="bus", action="Slow", mode="while"),
       Breakpoint("action", action="Fast"),
       Breakpoint("clause", type="Car", clause="Stop#7", mode="when"), Breakpoint("clause", clause=3),
       Breakpoint("gridlock"), Breakpoint("gridlock", agent="Car_1", mode="while"),
       Breakpoint("action", agent="Car_77", action="Stop")]      # an agent this city does not have is kept


@pytest.mark.parametrize("bp", ALL, ids=lambda b: b.describe())
def test_edit_shows_a_breakpoint_and_ok_returns_it(qtbot, bp):
    dlg = BreakpointDialog(NAMES, ["Stop#1", "Stop#7"], bp)
    qtbot.addWidget(dlg)
    dlg.show()
    assert dlg.breakpoint() == bp
    assert dlg.preview.text() == bp.explain()
    assert dlg.action.isVisible() == (bp.kind == "action") and dlg.step.isVisible() == (bp.kind == "step")
    assert dlg.clause.isVisible() == (bp.kind == "clause")
    assert dlg.mode_box.isVisible() == (bp.kind in ("action", "clause", "gridlock"))


def test_a_new_breakpoint_starts_as_when_and_subject_choices_follow_the_subject(qtbot):
    dlg = BreakpointDialog(NAMES)
    qtbot.addWidget(dlg)
    dlg.show()
    assert dlg.breakpoint() == Breakpoint("action", action="Stop", mode="when")
    assert not dlg.who.isVisible()
    dlg.subject.setCurrentIndex(dlg.subject.findData("concept"))
    assert dlg.who.isVisible() and "police" in [dlg.who.itemText(i) for i in range(dlg.who.count())]
    dlg.subject.setCurrentIndex(dlg.subject.findData("agent"))
    assert [dlg.who.itemText(i) for i in range(dlg.who.count())] == list(NAMES)


def test_panel_buttons_and_rows(qtbot):
    panel = BreakpointList()
    qtbot.addWidget(panel)
    panel.show()
    assert panel.sizeHint().width() >= 300
    bps = ALL[:3]
    panel.set_rows((b.describe(), b.enabled, b.explain()) for b in bps)
    assert panel.list.item(2).text() == "pause when Car_2 reaches its goal"
    assert not panel.edit_btn.isEnabled() and not panel.remove_btn.isEnabled() and panel.clear_btn.isEnabled()
    with qtbot.waitSignal(panel.addRequested):
        qtbot.mouseClick(panel.add_btn, QtCore.Qt.MouseButton.LeftButton)
    panel.list.setCurrentRow(1)
    with qtbot.waitSignal(panel.editRequested) as sig:
        qtbot.mouseClick(panel.edit_btn, QtCore.Qt.MouseButton.LeftButton)
    assert sig.args == [1]
    with qtbot.waitSignal(panel.toggled) as sig:
        panel.list.item(0).setCheckState(QtCore.Qt.CheckState.Unchecked)
    assert sig.args == [0, False]
    panel.set_rows((b.describe(), b.enabled) for b in bps)          # refilled: the current row stays
    assert panel.list.currentRow() == 1 and panel.list.item(1).toolTip() == bps[1].describe()
    assert panel.entry_width() > panel.list.fontMetrics().horizontalAdvance(bps[2].describe())
