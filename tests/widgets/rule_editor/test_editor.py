"""The rule editor widget (widgets/rule_editor/editor.py) driven by real key and mouse events: comment toggling, find and
replace, go to line, per-clause enable/disable from the gutter and the shortcut, completion, and the contract with
the session's undo (every change announced once, the document's own undo off, model texts applied in place)."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtGui  # noqa: E402

from core.logic.lang.highlight_tokens import DISABLED_PREFIX  # noqa: E402
from widgets.rule_editor.editor import RuleEditorPage  # noqa: E402

Key = QtCore.Qt.Key
Ctrl = QtCore.Qt.KeyboardModifier.ControlModifier
Shift = QtCore.Qt.KeyboardModifier.ShiftModifier

TEXT = "% rules\nStop(X) :- IsCar(Y),\n    NextTo(X, Y).\nSlow(X) :- IsOld(Y).\n"


@pytest.fixture
def page(qtbot):
    p = RuleEditorPage("rules", "test.rules")
    qtbot.addWidget(p)
    p.resize(700, 400)
    p.set_text(TEXT)
    p.editor.set_completions(["IsCar", "IsOld", "IsAmbulance", "NextTo", "Stop", "Slow"])
    p.editor.highlighter.set_predicates({"IsCar": False, "IsOld": False, "IsAmbulance": False, "NextTo": False,
                                         "Stop": True, "Slow": True})
    p.show()
    qtbot.waitExposed(p)
    p.activateWindow()
    p.editor.setFocus()
    edits = []
    p.edited.connect(lambda key, before, after, typing: edits.append((before, after, typing)))
    p.edits = edits
    return p


def put_cursor(page, line, col=0):
    block = page.editor.document().findBlockByNumber(line - 1)
    cur = QtGui.QTextCursor(block)
    cur.setPosition(block.position() + col)
    page.editor.setTextCursor(cur)


def test_typing_is_announced_once_per_key_and_the_document_keeps_no_undo(qtbot, page):
    assert not page.editor.document().isUndoRedoEnabled()
    put_cursor(page, 4, len("Slow(X) :- IsOld(Y)"))
    qtbot.keyClicks(page.editor, ", IsCar(Z)")
    assert len(page.edits) == len(", IsCar(Z)") and all(typing for _, _, typing in page.edits)
    assert page.edits[0][0] == TEXT and page.text() == page.edits[-1][1]
    # a text from the model (an undo) is applied in place: no announcement, the caret stays on its line
    page.set_text(TEXT)
    assert page.text() == TEXT and len(page.edits) == len(", IsCar(Z)")
    assert page.current_line() == 4


def test_ctrl_slash_toggles_comments_on_the_selected_lines(qtbot, page):
    put_cursor(page, 2)
    cur = page.editor.textCursor()
    cur.movePosition(QtGui.QTextCursor.MoveOperation.Down, QtGui.QTextCursor.MoveMode.KeepAnchor)
    cur.movePosition(QtGui.QTextCursor.MoveOperation.EndOfBlock, QtGui.QTextCursor.MoveMode.KeepAnchor)
    page.editor.setTextCursor(cur)
    qtbot.keyClick(page.editor, Key.Key_Slash, Ctrl)
    lines = page.text().split("\n")
    assert lines[1].startswith("% Stop(X)") and lines[2].startswith("%     NextTo") and lines[3].startswith("Slow")
    assert page.edits[-1][2] is False          # one non-typing edit: its own undo step
    put_cursor(page, 2)
    cur = page.editor.textCursor()
    cur.movePosition(QtGui.QTextCursor.MoveOperation.Down, QtGui.QTextCursor.MoveMode.KeepAnchor)
    page.editor.setTextCursor(cur)      # ends at the start of line 4: line 4 is not taken
    qtbot.keyClick(page.editor, Key.Key_Slash, Ctrl)
    assert page.text().split("\n")[3] == "Slow(X) :- IsOld(Y)."
    assert page.text().split("\n")[1] == "Stop(X) :- IsCar(Y),"
    put_cursor(page, 3)
    qtbot.keyClick(page.editor, Key.Key_Slash, Ctrl)
    assert page.text() == TEXT


def test_find_replace_and_go_to_line(qtbot, page):
    qtbot.keyClick(page.editor, Key.Key_F, Ctrl)
    assert page.bar.isVisible() and page.bar.find.hasFocus()
    qtbot.keyClicks(page.bar.find, "isold")
    qtbot.keyClick(page.bar.find, Key.Key_Return)
    assert page.editor.textCursor().selectedText() == "IsOld" and page.current_line() == 4
    qtbot.keyClick(page.editor, Key.Key_H, Ctrl)
    assert page.bar.replace.isVisible()
    page.bar.find.setText("Y")
    page.bar.case.setChecked(True)
    qtbot.keyClicks(page.bar.replace, "W")
    qtbot.mouseClick(page.bar.buttons["all"], QtCore.Qt.MouseButton.LeftButton)
    assert page.text() == TEXT.replace("Y", "W") and page.bar.status.text() == "3 replaced"
    assert len(page.edits) == 1 and page.edits[0][2] is False     # replace all = one edit
    qtbot.keyClick(page.bar.find, Key.Key_Escape)
    assert not page.bar.isVisible()
    page.editor.setFocus()
    qtbot.keyClick(page.editor, Key.Key_L, Ctrl)
    assert page.bar.goto.isVisible()
    qtbot.keyClicks(page.bar.goto, "3")
    qtbot.keyClick(page.bar.goto, Key.Key_Return)
    assert page.current_line() == 3 and page.editor.hasFocus()


def test_clauses_are_disabled_and_enabled_from_the_gutter_and_the_shortcut(qtbot, page):
    assert [(c.first, c.last, c.enabled) for c in page.editor.clauses] == [(2, 3, True), (4, 4, True)]
    block = page.editor.document().findBlockByNumber(2)      # line 3: inside the first clause
    y = int(page.editor.blockBoundingGeometry(block).translated(page.editor.contentOffset()).center().y())
    qtbot.mouseClick(page.editor.gutter, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(5, y))
    lines = page.text().split("\n")
    assert lines[1].startswith(DISABLED_PREFIX) and lines[2].startswith(DISABLED_PREFIX)
    assert [(c.first, c.enabled) for c in page.editor.clauses] == [(2, False), (4, True)]
    put_cursor(page, 2)
    qtbot.keyClick(page.editor, Key.Key_D, Ctrl | Shift)
    assert page.text() == TEXT and len(page.edits) == 2


def test_completion_of_predicate_names(qtbot, page):
    put_cursor(page, 4, len("Slow(X) :- IsOld(Y)"))
    qtbot.keyClicks(page.editor, ", IsAm")
    popup = page.editor.completer.popup()
    qtbot.waitUntil(popup.isVisible)
    assert page.editor.completer.currentCompletion() == "IsAmbulance"
    qtbot.keyClick(popup, Key.Key_Return)
    assert page.text().split("\n")[3] == "Slow(X) :- IsOld(Y), IsAmbulance."


def test_squiggles_and_tooltips_follow_diagnostics(qtbot, page):
    from core.analysis.diagnostics import Diagnostic

    d = Diagnostic("error", "unknown-predicate", "unknown predicate 'IsOld'", 4, 12, 5)
    page.set_diagnostics([d])
    sels = page.editor.extraSelections()
    assert len(sels) == 1 and sels[0].cursor.selectedText() == "IsOld"
    assert sels[0].format.underlineStyle() == QtGui.QTextCharFormat.UnderlineStyle.WaveUnderline
    assert page.summary.text() == "1 error, 0 warnings"
    block = page.editor.document().findBlockByNumber(3)
    assert page.editor.diagnostic_at(block.position() + 13) is d
    qtbot.mouseClick(page.problems.viewport(), QtCore.Qt.MouseButton.LeftButton,
                     pos=page.problems.visualItemRect(page.problems.item(0)).center())
    assert page.current_line() == 4
    page.set_diagnostics([])
    assert not page.editor.extraSelections() and page.summary.text() == "No problems"
