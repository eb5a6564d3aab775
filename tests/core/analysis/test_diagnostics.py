"""Rule diagnostics (core/analysis/diagnostics.py): every problem of a rule text at file:line:col, in one pass."""
from __future__ import annotations

import pytest

from core.analysis.diagnostics import ERROR, WARNING, diagnose, has_errors
from core.base.errors import RuleError
from core.logic.lang.program import parse_rules
from tests.support.logic import RULES, ontology

FULL = ontology("full")
BUNDLED = sorted(RULES.glob("*.rules"))


def codes(text: str) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.col) for d in diagnose(text, FULL, "t.rules")]


def test_syntax_error_is_the_only_diagnostic_and_located():
    d = diagnose("Stop(X) :- IsCar(X).\nSlow(X) :- IsCar(X.\n", FULL, "t.rules")
    assert [(x.severity, x.code, x.line, x.col) for x in d] == [(ERROR, "syntax", 2, 19)]
    assert str(d[0]).startswith("t.rules:2:19: error: expected ',' or ')'")


def test_every_unknown_predicate_and_arity_error_is_reported_with_its_position():
    text = "Stop(X) :- IsCarr(X), NextTo(X).\nSlow(X) :- IsAmbulanc(X), IsBus(X, X).\n"
    d = diagnose(text, FULL, "t.rules")
    assert [(x.code, x.line, x.col, x.length) for x in d] == [
        ("unknown-predicate", 1, 12, 6), ("arity", 1, 23, 6), ("unknown-predicate", 2, 12, 10), ("arity", 2, 27, 5)]
    assert "did you mean IsCar?" in d[0].message and "did you mean IsAmbulance?" in d[2].message
    assert "NextTo takes 2 arguments, got 1" in d[1].message


def test_head_errors():
    assert codes("IsCar(X) :- IsBus(X).") == [("head-not-action", 1, 1)]
    assert codes("Stop(Y) :- IsBus(Y).") == [("head-not-ego", 1, 1)]
    assert codes("Stop(X) :- Slow(Y), IsCar(Y).") == [("action-not-ego", 1, 12)]
    assert codes("Stopp(X) :- IsBus(X).") == [("unknown-predicate", 1, 1)]


def test_unused_variable_is_a_warning_only_where_variables_link_literals():
    assert codes("Stop(X) :- IsAtInter(X), IsInInter(Y).") == []          # the "someone is in" idiom
    d = diagnose("Stop(X) :- IsYoung(Y), IsYoung(Z), NextTo(Y, W).", FULL)
    assert [(x.severity, x.code, x.message.split()[1]) for x in d] == [
        (WARNING, "unused-variable", "Z"), (WARNING, "unused-variable", "W")]
    assert codes("Stop(X) :- IsYoung(Y), IsYoung(_), NextTo(Y, Y).") == []


def test_unsafe_negation_warning():
    d = diagnose("Stop(X) :- IsCar(X), Not(IsPedestrian(Y)).", FULL)
    assert [(x.severity, x.code, x.col) for x in d] == [(WARNING, "unsafe-negation", 26)]
    assert codes("Stop(X) :- IsCar(Y), Not(IsPedestrian(Y)).") == []


def test_stratification_error_is_reported_once_the_literals_are_fine():
    d = diagnose("Stop(X) :- Not(Slow(X)).\nSlow(X) :- Stop(X).\n", FULL, "t.rules")
    assert [(x.code, x.line) for x in d] == [("stratification", 1)]
    assert "unstratified negation" in d[0].message


def test_task_section_errors_come_from_the_loader():
    text = "#section sim.\nStop(X) :- IsCar(X).\n#section task.\n#task \"T\" dead=true.\nStop(X) :- IsCar(X).\n"
    d = diagnose(text, FULL, "t.rules")
    assert [(x.code, x.line) for x in d] == [("semantic", 4)] and "needs reward" in d[0].message


@pytest.mark.parametrize("text", [
    "Stop(X) :- IsCar(X).", "Stop(X) :- IsCarr(X).", "Stop(X) :- Not(Slow(X)).\nSlow(X) :- Stop(X).",
    "Stop(X) :- IsCar(X", "Stop(X) :- NextTo(X).", "Stop(X) :- IsCar(Y), Not(IsBus(Z)).", "x: Stop(X).\nx: Slow(X).",
])
def test_errors_exactly_when_the_loader_refuses(text):
    try:
        parse_rules(text, FULL)
        loads = True
    except RuleError:
        loads = False
    assert has_errors(diagnose(text, FULL)) == (not loads)


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name for p in BUNDLED])
def test_bundled_rule_sets_are_clean(path):
    text = path.read_text(encoding="utf-8")
    hint = next(line.split()[1].rstrip(".") for line in text.splitlines() if line.startswith("#ontology"))
    assert diagnose(text, ontology(hint), str(path)) == []
