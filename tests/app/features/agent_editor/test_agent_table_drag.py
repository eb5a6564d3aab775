"""Reorder by drag and drop: rows of the agent table dragged onto another place of the table are
moved there as a block, in one undoable step (Edit ▸ Undo restores the order). The drop is delivered to the real
table view as Qt delivers a drag: drag-enter, drag-move and drop events on its viewport, carrying the mime data the
view's model gives for the selected rows."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from tests.support.studio import WAIT

Qt = QtCore.Qt


def _drop(view: QtWidgets.QTableView, data: QtCore.QMimeData, pos: QtCore.QPoint) -> None:
    vp = view.viewport()
    posf = QtCore.QPointF(pos)
    buttons, mods = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    enter = QtGui.QDragEnterEvent(pos, Qt.DropAction.MoveAction, data, buttons, mods)
    QtWidgets.QApplication.sendEvent(vp, enter)
    assert enter.isAccepted()
    move = QtGui.QDragMoveEvent(pos, Qt.DropAction.MoveAction, data, buttons, mods)
    QtWidgets.QApplication.sendEvent(vp, move)
    assert move.isAccepted()
    QtWidgets.QApplication.sendEvent(vp, QtGui.QDropEvent(posf, Qt.DropAction.MoveAction, data, buttons, mods))


def test_drag_rows_to_reorder_then_undo(studio, qtbot):
    win = studio
    ctl = win.features["agent_editor"]
    qtbot.keyClick(win.window, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: win.docks["agent_editor"].isVisible(), timeout=WAIT)
    panel = ctl.panel
    view = panel.table
    names = [a.name for a in win.session.project.config.agents]
    assert len(names) >= 6
    assert view.dragEnabled() and view.acceptDrops()
    panel.select_rows([0, 1])
    data = panel.model.mimeData(view.selectionModel().selectedIndexes())   # what dragging the selection carries
    rect = view.visualRect(panel.model.index(4, 1))
    _drop(view, data, QtCore.QPoint(rect.center().x(), rect.bottom() - 3))   # lower half of row 4: below it
    qtbot.waitUntil(lambda: [a.name for a in win.session.project.config.agents] != names, timeout=WAIT)
    assert [a.name for a in win.session.project.config.agents] == names[2:5] + names[0:2] + names[5:]
    assert [panel.model.agents[i].name for i in range(len(names))] == names[2:5] + names[0:2] + names[5:]
    assert panel.selected_rows() == [3, 4]
    assert win.session.stack.undo_text().startswith("Move")
    # the upper half of the first row: the dragged block goes back to the top
    data = panel.model.mimeData(view.selectionModel().selectedIndexes())
    rect = view.visualRect(panel.model.index(0, 1))
    _drop(view, data, QtCore.QPoint(rect.center().x(), rect.top() + 3))
    qtbot.waitUntil(lambda: [a.name for a in win.session.project.config.agents] == names, timeout=WAIT)
    assert panel.selected_rows() == [0, 1]
    win.action("Edit", "Undo").trigger()       # each drop is one undo step
    assert [a.name for a in win.session.project.config.agents] == names[2:5] + names[0:2] + names[5:]
    win.action("Edit", "Undo").trigger()
    assert [a.name for a in win.session.project.config.agents] == names
    assert not win.session.modified
    # rows dragged from another table (another window or program) are refused
    foreign = QtCore.QMimeData()
    foreign.setData("application/x-logicity-agent-rows", QtCore.QByteArray(b"12345:0,1"))
    _drop(view, foreign, QtCore.QPoint(rect.center().x(), view.visualRect(panel.model.index(4, 1)).bottom() - 3))
    qtbot.wait(50)
    assert [a.name for a in win.session.project.config.agents] == names and not win.session.modified
