"""Rule editor in the studio, part 2: the ontology editor (add a concept predicate, bad parameters
refused, undo), Apply from step 0 and from the shown step with the inspector showing the new rule's explanation,
and saving the project writes the rule text as typed."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.project.load import load_project  # noqa: E402
from tests.support.rule_editor import place_cursor, rule_errors, rules_page, type_rule_at_top  # noqa: E402
from tests.support.studio import WAIT, simulate  # noqa: E402

Key = QtCore.Qt.Key


def _type_at_end(qtbot, page, text):
    place_cursor(page, "end")
    qtbot.keyClick(page.editor, Key.Key_Return)
    qtbot.keyClicks(page.editor, text)


def test_ontology_editor_updates_diagnostics_at_once_and_undoes(qtbot, studio):
    win = studio
    ctl, page = rules_page(win)
    _type_at_end(qtbot, page, "Slow(X) :- IsElderly(Y), NextTo(X, Y).")
    qtbot.waitUntil(lambda: any("IsElderly" in d.message for d in rule_errors(ctl)), timeout=WAIT)
    onto = ctl.ontology_editor
    ctl.show_panel("ontology_editor")
    qtbot.keyClicks(onto.new_name, "IsElderly")
    onto.new_grounding.setCurrentText("is_old")
    qtbot.mouseClick(onto.add_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not rule_errors(ctl), timeout=WAIT)
    assert onto.row_of("IsElderly") >= 0 and ctl.workspace.ontology["IsElderly"].grounding == "is_old"
    block = page.editor.document().findBlockByNumber(page.editor.blockCount() - 1)
    assert page.editor.highlighter.kind_at(block, 11) == "predicate"
    win.undo_stack.undo()     # Edit ▸ Undo: the predicate goes, the error comes back
    qtbot.waitUntil(lambda: any("IsElderly" in d.message for d in rule_errors(ctl)), timeout=WAIT)
    assert onto.row_of("IsElderly") < 0
    # parameters are validated before anything changes
    row = onto.row_of("IsClose")
    onto.table.item(row, 4).setText("min: 30, max: 20")
    assert "min" in onto.status.text() and ctl.workspace.ontology["IsClose"].params["min"] == 12
    assert onto.table.item(onto.row_of("IsClose"), 4).text() == "min: 12, max: 20"
    onto.table.item(onto.row_of("IsClose"), 4).setText("min: 10, max: 20")
    assert ctl.workspace.ontology["IsClose"].params["min"] == 10
    combo = onto.grounding_combo("IsClose")
    combo.setCurrentIndex(combo.findData("next_to"))       # another registry function: its default parameters
    assert ctl.workspace.ontology["IsClose"].grounding == "next_to"
    assert onto.table.item(onto.row_of("IsClose"), 4).text() == "max: 12"
    win.undo_stack.undo()
    assert ctl.workspace.ontology["IsClose"].grounding == "is_close"
    assert onto.grounding_combo("IsClose").currentData() == "is_close"
    qtbot.mouseClick(onto.remove_button, QtCore.Qt.MouseButton.LeftButton)   # nothing selected: nothing removed
    onto.table.selectRow(onto.row_of("IsCar"))
    qtbot.mouseClick(onto.remove_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any("IsCar" in d.message for d in rule_errors(ctl)), timeout=WAIT)


def test_apply_rules_from_zero_and_from_the_shown_step_then_save(qtbot, studio, tmp_path):
    win = studio
    # a rule that fires first for every car: put it at the top so it is the first Stop clause in file order
    ctl, page = type_rule_at_top(qtbot, win, "allstop: Stop(X) :- IsCar(X).")
    win.answers["apply_rules"] = "apply"
    ctl.apply_reset_action.trigger()
    qtbot.waitUntil(lambda: any(c.get("label") == "allstop" for c in win.history.meta.get("clauses", [])),
                    timeout=WAIT)
    simulate(qtbot, win, 2)
    labels = {c["id"]: c["label"] for c in win.history.meta["clauses"]}
    car = next(i for i, n in enumerate(win.session.agent_names) if n.startswith("Car"))
    assert labels[int(win.history.step_record(0).fired[car])] == "allstop"
    win.session.select(car)
    win.set_cursor(1)
    win.flush_redraw()
    assert "allstop" in win.inspector.summary.parts.why and "IsCar" in win.inspector.summary.parts.why
    # coverage of the shown recording in the analysis (F7 through its action); then an analysis cancelled
    panel = ctl.analysis
    panel.deadlock_k.setCurrentIndex(panel.deadlock_k.findData(0))
    ctl.analyze_action.trigger()
    qtbot.waitUntil(lambda: panel.analysis is not None and not panel.cancel_button.isEnabled(), timeout=WAIT)
    assert panel.analysis.coverage is not None and panel.analysis.coverage.steps == win.num_steps
    counts = {i.text(0).split(":")[0]: int(i.text(0).split(": ")[1].split()[0]) for i in panel.items_with("allstop:")}
    assert counts["allstop"] >= 2          # at least one car per step
    panel.deadlock_k.setCurrentIndex(panel.deadlock_k.findData(3))
    ctl.analyze_action.trigger()
    assert panel.cancel_button.isEnabled()
    qtbot.mouseClick(panel.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.status.text() == "Analysis cancelled.", timeout=WAIT)
    assert panel.analyze_button.isEnabled()

    # remove the rule again and re-decide from the shown step (1): a branch of the same recording, step 0 kept with
    # its allstop explanation, the original rules deciding from step 1 on
    positions_01 = win.history.array("positions")[:2].copy()
    n_allstop = len(win.history.meta["clauses"])
    for _ in range(len("allstop: Stop(X) :- IsCar(X).") + 1):
        qtbot.keyClick(page.editor, Key.Key_Backspace)
    qtbot.waitUntil(lambda: not page.text().startswith("allstop"), timeout=WAIT)
    win.answers["apply_rules_here"] = "apply"
    win.set_cursor(1)
    ctl.apply_branch_action.trigger()
    qtbot.waitUntil(lambda: "rule_segments" in win.history.meta and not win.playback.syncing, timeout=WAIT)
    assert win.num_steps == 1 and (win.history.array("positions") == positions_01).all()
    assert [(e["step"], e["offset"]) for e in win.history.meta["rule_segments"]] == [(0, 0), (1, n_allstop)]
    win.playback.step_forward()                  # the newest state: simulates one step with the edited rules
    qtbot.waitUntil(lambda: win.num_steps == 2, timeout=WAIT)
    labels = {c["id"]: c["label"] for c in win.history.meta["clauses"]}
    assert labels[int(win.history.step_record(0).fired[car])] == "allstop"      # kept, explained as recorded
    fired_1 = int(win.history.step_record(1).fired[car])
    assert fired_1 == -1 or (fired_1 >= n_allstop and labels[fired_1] != "allstop")
    win.set_cursor(0)
    win.flush_redraw()
    assert "allstop" in win.inspector.summary.parts.why
    win.set_cursor(1)
    win.flush_redraw()
    assert "allstop" not in win.inspector.summary.parts.why

    # saving writes the rule text exactly as typed (a comment and a disabled clause stay)
    _type_at_end(qtbot, page, "% my note")
    page.toggle_clause(8)
    text = page.text()
    folder = tmp_path / "proj"
    assert win.projects.save_to(folder)
    project = load_project(folder)
    assert (folder / project.parts["rules"]).read_text(encoding="utf-8") == text
    assert "% my note" in text and "\n%- " in text
