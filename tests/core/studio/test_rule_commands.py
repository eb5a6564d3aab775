"""Rule editor commands (core.studio.rule_commands): typing bursts merge, undo restores, ontology edits validate."""
from __future__ import annotations

import pytest

from core.analysis.diagnostics import diagnose
from core.base.errors import ConfigError
from core.sim.config import load_mode
from core.studio.rule_commands import (
    AddConceptPredicate,
    EditRuleText,
    RemovePredicate,
    RuleWorkspace,
    SetPredicateParams,
    text_diff,
)
from core.studio.session import Session
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def config():
    return load_mode(ROOT / "configs" / "modes" / "default.yaml")


def test_text_diff():
    assert text_diff("abcd", "abXcd") == (2, "", "X")
    assert text_diff("abcd", "ad") == (1, "bc", "")
    assert text_diff("same", "same") == (4, "", "")


def type_chars(session, ws, chars, start_when=0.0, dt=0.1, at=None):
    when = start_when
    for ch in chars:
        before = ws.text()
        pos = len(before) if at is None else at
        session.execute(EditRuleText(ws, "rules", before, before[:pos] + ch + before[pos:], when=when))
        if at is not None:
            at += 1
        when += dt
    return when


def test_a_typing_burst_is_one_undo_step(config):
    s = Session()
    ws = RuleWorkspace.from_config(config)
    orig = ws.text()
    end = type_chars(s, ws, "% hello")
    assert s.stack.count == 1 and ws.text() == orig + "% hello"
    # a pause longer than the burst starts a new step
    type_chars(s, ws, "ab", start_when=end + 5)
    assert s.stack.count == 2
    # a line break ends the burst
    type_chars(s, ws, "\nx", start_when=end + 5.3)
    assert s.stack.count == 4
    # typing somewhere else is a new step even when fast
    when = end + 6.0
    type_chars(s, ws, "Q", start_when=when, at=0)
    assert s.stack.count == 5
    s.stack.undo()
    assert not ws.text().startswith("Q")
    while s.stack.can_undo():
        s.stack.undo()
    assert ws.text() == orig and not s.modified
    s.stack.redo()
    assert ws.text() == orig + "% hello"


def test_backspace_continues_the_burst(config):
    s = Session()
    ws = RuleWorkspace.from_config(config)
    orig = ws.text()
    when = type_chars(s, ws, "abc")
    t = ws.text()
    s.execute(EditRuleText(ws, "rules", t, t[:-1], when=when))
    assert s.stack.count == 1 and ws.text() == orig + "ab"
    t = ws.text()
    s.execute(EditRuleText(ws, "rules", t, "% pasted\n" + t, typing=False, when=when + 0.1))
    assert s.stack.count == 2


def test_ontology_edits_update_diagnostics_and_undo(config):
    s = Session()
    ws = RuleWorkspace.from_config(config)
    text = ws.text() + "\nSlow(X) :- IsOld2(X).\n"
    assert any(d.code == "unknown-predicate" for d in diagnose(text, ws.ontology))
    s.execute(AddConceptPredicate(ws, "IsOld2", "is_old"))
    assert ws.ontology["IsOld2"].grounding == "is_old" and ws.ontology_changed
    assert not [d for d in diagnose(text, ws.ontology) if d.severity == "error"]
    assert "IsOld2" in ws.texts()["ontology"]
    s.stack.undo()
    assert "IsOld2" not in ws.ontology and not ws.ontology_changed
    with pytest.raises(ConfigError, match="already has"):
        AddConceptPredicate(ws, "IsCar", "is_car")
    with pytest.raises(ConfigError, match="not a concept grounding"):
        AddConceptPredicate(ws, "Near", "is_close")
    with pytest.raises(ConfigError, match="action"):
        RemovePredicate(ws, "Stop")
    s.execute(RemovePredicate(ws, "IsCar"))
    assert any(d.code == "unknown-predicate" and "IsCar" in d.message for d in diagnose(ws.text(), ws.ontology))


def test_parameters_are_validated(config):
    ws = RuleWorkspace.from_config(config)
    name = next(p.name for p in ws.ontology.predicates if p.grounding == "is_close")
    with pytest.raises(ConfigError, match="min"):
        SetPredicateParams(ws, name, {"min": 30, "max": 20})
    with pytest.raises(ConfigError, match="unknown parameter"):
        SetPredicateParams(ws, name, {"mni": 3})
    s = Session()
    s.execute(SetPredicateParams(ws, name, {"min": 10, "max": 20}))
    assert ws.ontology[name].params["min"] == 10


def test_config_for_runs_the_edited_rules(config):
    ws = RuleWorkspace.from_config(config)
    s = Session()
    t = ws.text()
    s.execute(EditRuleText(ws, "rules", t, t + "\nFast(X) :- IsCar(X).\n", typing=False))
    cfg = ws.config_for(config)
    assert any(c.head == "Fast" and str(c) == "Fast(X) :- IsCar(X)." for c in cfg.program.clauses)
    assert "rules" not in cfg.files and "map" in cfg.files
    s.execute(EditRuleText(ws, "rules", ws.text(), ws.text() + "Fast(X) :- Oops(X).", typing=False))
    with pytest.raises(Exception, match="Oops"):
        ws.config_for(config)


def test_undoing_any_sequence_of_rule_edits_restores_the_workspace(config):
    """Random typing (merged or not), pastes, clause toggles and ontology edits: undoing all of them gives back the
    original text and ontology; redoing all gives the final state again."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from core.logic.lang.highlight_tokens import set_clause_enabled

    ops = st.lists(st.tuples(st.sampled_from(["type", "delete", "paste", "clause", "add", "remove", "params"]),
                             st.integers(0, 10_000), st.sampled_from("abXY(),.\n"), st.floats(0, 2)),
                   min_size=1, max_size=25)

    @settings(max_examples=25, deadline=None)
    @given(ops)
    def run(seq):
        s = Session()
        ws = RuleWorkspace.from_config(config)
        text0, onto0 = ws.text(), ws.ontology.to_yaml()
        when = 0.0
        for op, n, ch, dt in seq:
            when += dt
            t = ws.text()
            pos = n % (len(t) + 1)
            if op == "type":
                s.execute(EditRuleText(ws, "rules", t, t[:pos] + ch + t[pos:], when=when))
            elif op == "delete" and pos > 0:
                s.execute(EditRuleText(ws, "rules", t, t[:pos - 1] + t[pos:], when=when))
            elif op == "paste":
                s.execute(EditRuleText(ws, "rules", t, t[:pos] + "Slow(X) :- IsCar(X).\n" + t[pos:], typing=False,
                                       when=when))
            elif op == "clause":
                res = set_clause_enabled(t, 1 + n % max(1, t.count("\n")), bool(n % 2))
                if res is not None:
                    s.execute(EditRuleText(ws, "rules", t, res[0], typing=False, when=when))
            elif op == "add" and f"IsNew{n % 3}" not in ws.ontology:
                s.execute(AddConceptPredicate(ws, f"IsNew{n % 3}", "is_old"))
            elif op == "remove":
                names = [p.name for p in ws.ontology.predicates if not p.is_action]
                s.execute(RemovePredicate(ws, names[n % len(names)]))
            elif op == "params" and "NextTo" in ws.ontology:
                s.execute(SetPredicateParams(ws, "NextTo", {"max": 1 + n % 30}))
        final_text, final_onto = ws.text(), ws.ontology.to_yaml()
        while s.stack.can_undo():
            assert s.stack.undo()
        assert ws.text() == text0 and ws.ontology.to_yaml() == onto0 and not ws.ontology_changed
        while s.stack.can_redo():
            assert s.stack.redo()
        assert ws.text() == final_text and ws.ontology.to_yaml() == final_onto

    run()
