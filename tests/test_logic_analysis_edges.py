"""Analysis API edge cases found in review: constraints in dead-clause checks, cyclic programs, cycle messages."""
from __future__ import annotations

import pytest

from core.logic import analyze, dead_clauses, parse_program, undefined_predicates
from core.errors import RuleError
from tests.logic_support import ontology


@pytest.fixture(scope="module")
def onto():
    return ontology("full")


def test_constraint_that_can_fire_is_not_dead(onto):
    prog = parse_program("Stop(X) :- IsBus(X).\n:- IsCar(X).", onto)
    labels = {d.clause: d for d in dead_clauses(prog)}
    assert "constraint#1" not in labels  # a car ego violates it: its body can hold


def test_clause_blocked_by_constraint_is_reported_as_such(onto):
    prog = parse_program("Stop(X) :- IsBus(X).\n:- IsCar(X).", onto)
    (d,) = dead_clauses(prog)
    assert d.clause == "Stop#1" and d.only_with_violation
    assert d.core == ("constraint constraint#1",)
    assert "only in scenes that violate constraint#1" in str(d)


def test_clause_with_satisfiable_body_and_harmless_constraint_is_live(onto):
    prog = parse_program("Stop(X) :- IsBus(X).\n:- IsPedestrian(X), IsCar(X).", onto)
    assert [d.clause for d in dead_clauses(prog)] == ["constraint#1"]  # only the contradictory constraint


def test_contradictory_body_still_dead(onto):
    prog = parse_program("Stop(X) :- IsPedestrian(X), IsCar(X).", onto)
    (d,) = dead_clauses(prog)
    assert d.clause == "Stop#1" and not d.only_with_violation and d.core


def test_dead_because_of_undefined_action_names_it(onto):
    prog = parse_program("Stop(X) :- Slow(X).", onto)
    (d,) = dead_clauses(prog)
    assert d.core == ("no clauses for Slow",)


def test_undefined_predicates_on_cyclic_program(onto):
    prog = parse_program("Stop(X) :- Not(Fast(X)).\nFast(X) :- Not(Stop(X)).", onto, strict=False)
    assert undefined_predicates(prog) == []
    assert analyze(prog).undefined == ()


def test_negation_cycle_message_shows_the_negative_cycle(onto):
    text = "Stop(X) :- Slow(X).\nSlow(X) :- Stop(X).\nStop(X) :- Not(Fast(X)).\nFast(X) :- Stop(X)."
    with pytest.raises(RuleError) as err:
        parse_program(text, onto, "f.rules")
    msg = str(err.value)
    assert "unstratified negation: Stop → Fast → Stop" in msg and "Stop#2" in msg
