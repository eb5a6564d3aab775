"""Helpers of the rule editor tests in tests/app (pytest-qt): the studio's rules page with the text cursor placed,
a rule typed at the top of the rules with real key events, and the editor's errors."""
from __future__ import annotations

from PySide6 import QtCore, QtGui

from tests.support.studio import WAIT

_MOVES = {"start": QtGui.QTextCursor.MoveOperation.Start, "end": QtGui.QTextCursor.MoveOperation.End}


def place_cursor(page, at: str = "end") -> None:
    """Keyboard focus in the rules page's editor, the text cursor at the ``at`` ("start" or "end") of its text."""
    page.editor.setFocus()
    cur = page.editor.textCursor()
    cur.movePosition(_MOVES[at])
    page.editor.setTextCursor(cur)


def rules_page(win, at: str = "end"):
    """Show the rule editor of the studio ``win``: (its controller, the rules page), the cursor placed at ``at``."""
    ctl = win.features["rule_editor"]
    ctl.show_panel("rule_editor")
    page = ctl.editor.page("rules")
    place_cursor(page, at)
    return ctl, page


def rule_errors(ctl) -> list:
    """The error diagnostics of the rules page."""
    return [d for d in ctl.diagnostics.get("rules", []) if d.severity == "error"]


def type_rule_at_top(qtbot, win, rule: str):
    """Type ``rule`` and a line break at the top of the rules and wait until the editor has checked the text and
    found no error; (controller, rules page)."""
    ctl, page = rules_page(win, "start")
    qtbot.keyClicks(page.editor, rule)
    qtbot.keyClick(page.editor, QtCore.Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "rules" in ctl.diagnostics and not ctl._timer.isActive() and not rule_errors(ctl),
                    timeout=WAIT)
    return ctl, page
