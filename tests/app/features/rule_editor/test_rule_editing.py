"""The rule editor in the studio: type a broken rule with real key events, see the squiggle and the
Problems entry, fix it, undo per typing burst, analyse with F7 and load the conflict witness as a scene."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtGui  # noqa: E402

from core.base.codes import ACTION_INDEX  # noqa: E402
from core.studio import problems as problem_registry  # noqa: E402
from tests.support.rule_editor import rules_page  # noqa: E402
from tests.support.studio import WAIT  # noqa: E402

Key = QtCore.Qt.Key


def _waves(page) -> list[tuple[int, str]]:
    out = []
    for sel in page.editor.extraSelections():
        if sel.format.underlineStyle() == QtGui.QTextCharFormat.UnderlineStyle.WaveUnderline:
            out.append((sel.cursor.blockNumber() + 1, sel.cursor.selectedText()))
    return out


def test_type_a_broken_rule_fix_it_analyse_and_load_the_witness(qtbot, studio):
    win = studio
    ctl, page = rules_page(win)
    qtbot.waitUntil(lambda: "rules" in ctl.diagnostics, timeout=WAIT)
    assert not [d for d in ctl.diagnostics["rules"] if d.severity == "error"]   # the bundled set is clean
    original = page.text()
    line = original.count("\n") + 2
    qtbot.keyClick(page.editor, Key.Key_Return)
    qtbot.keyClicks(page.editor, "Slow(X) :- IsAmbulanc(X).")
    # the squiggle under the unknown predicate, the editor's list and the Problems checker
    qtbot.waitUntil(lambda: (line, "IsAmbulanc") in _waves(page), timeout=WAIT)
    diag = next(d for d in ctl.diagnostics["rules"] if d.code == "unknown-predicate")
    assert (diag.line, diag.col) == (line, 12) and "IsAmbulance" in diag.message
    assert page.problems.count() >= 1 and "IsAmbulanc" in page.problems.item(0).text()
    probs = [p for p in problem_registry.collect(win.session) if p.source == "rules"]
    assert any(p.line == line and p.column == 12 and p.is_error for p in probs)
    # the Problems panel lists it (not blocking: the simulation runs the applied rules); a click shows the line
    problems_panel = win.window.panels.widget("problems")
    qtbot.waitUntil(lambda: any("IsAmbulanc" in m for m, _, _ in problems_panel.row_texts()), timeout=WAIT)
    assert "blocked" not in problems_panel.summary.text()
    page.goto_line(1)
    row = next(i for i, (m, _, _) in enumerate(problems_panel.row_texts()) if "IsAmbulanc" in m)
    problems_panel.activate_row(row)
    assert page.current_line() == line
    cur = page.editor.textCursor()
    cur.movePosition(QtGui.QTextCursor.MoveOperation.End)
    page.editor.setTextCursor(cur)
    # semantic colouring: the head is an action, the unknown name is marked as unknown
    block = page.editor.document().findBlockByNumber(line - 1)
    assert page.editor.highlighter.kind_at(block, 0) == "head"
    assert page.editor.highlighter.kind_at(block, 12) == "unknown"
    # fix it: backspace over "c(X)." and type "ce(X)."
    for _ in range(5):
        qtbot.keyClick(page.editor, Key.Key_Backspace)
    qtbot.keyClicks(page.editor, "ce(X).")
    qtbot.waitUntil(lambda: not _waves(page) or all(ln != line for ln, _ in _waves(page)), timeout=WAIT)
    assert not [d for d in ctl.diagnostics["rules"] if d.severity == "error"]
    assert page.editor.highlighter.kind_at(block, 12) == "predicate"
    assert page.text() == original + "\nSlow(X) :- IsAmbulance(X)."
    # undo goes through the session's stack: the line break, then the typed burst(s), back to the bundled text
    assert win.session.stack.count <= 4
    win.window.activateWindow()
    page.editor.setFocus()
    while win.session.stack.can_undo():
        qtbot.keyClick(page.editor, Key.Key_Z, QtCore.Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: page.text() == original, timeout=WAIT)
    assert not win.session.modified
    qtbot.keyClick(page.editor, Key.Key_Z,
                   QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.ShiftModifier)
    assert page.text() == original + "\n"

    # F7 analyses (no deadlock search here, to stay fast), off the GUI thread
    panel = ctl.analysis
    panel.deadlock_k.setCurrentIndex(panel.deadlock_k.findData(0))
    qtbot.keyClick(win.window, Key.Key_F7)
    qtbot.waitUntil(lambda: panel.analysis is not None and not panel.cancel_button.isEnabled(), timeout=WAIT)
    conflicts = panel.items_with("CONFLICT")
    assert conflicts, "sim_expert's Slow + Fast conflict"
    # clicking a finding shows its clause line in the editor
    item = conflicts[0]
    clause_line = int(item.text(1))
    panel.tree.setCurrentItem(item)
    rect = panel.tree.visualItemRect(item)
    qtbot.mouseClick(panel.tree.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: page.current_line() == clause_line, timeout=WAIT)
    # Load as scene: a new recording whose state 0 is the witness, then step it
    assert panel.load_button.isEnabled()
    win.answers["load_scene"] = "load"
    qtbot.mouseClick(panel.load_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.history is not None and win.history.meta.get("start") == "scene"
                    and win.num_steps == 0, timeout=WAIT)
    scene_agents = len(item.data(0, QtCore.Qt.ItemDataRole.UserRole)["scene"][1].agents)
    assert len(win.history.agents) == scene_agents
    win.playback.simulate_step()
    qtbot.waitUntil(lambda: win.num_steps >= 1, timeout=WAIT)
    a, b = item.text(0).split()[1], item.text(0).split()[3]
    holds = win.history.array("holds")[0, 0]
    assert holds[ACTION_INDEX[a]] and holds[ACTION_INDEX[b]], f"the ego derives both {a} and {b} in the witness"
