"""The rule-analysis API (``core.analysis.static``): stratification, conflicts with witnesses and cores, dead clauses
(constraints that can fire, clauses blocked by constraints, undefined actions), undefined predicates, cycles."""
from __future__ import annotations

import numpy as np
import pytest

from core.analysis.static import analyze, conflicts, dead_clauses, stratification, undefined_predicates
from core.base.codes import Action
from core.base.errors import RuleError
from core.logic.grounding.grounder import TableInterpretation
from core.logic.lang.ontology import loads_ontology
from core.logic.lang.program import load_rules, parse_program
from tests.support.logic import RULES, ontology

FULL = ontology("full")


def test_stratification_report():
    p = load_rules(RULES / "spf_expert.rules", FULL).program("expert")
    rep = stratification(p)
    assert rep.stratified and rep.strata == (("Stop",), ("Slow",), ("Fast",), ("Normal",))
    assert any(e.head == "Fast" and e.body == "Slow" and e.negative for e in rep.edges)
    cyc = parse_program("Stop(X) :- Not(Slow(X)), IsCar(X).\nSlow(X) :- Stop(X).\nFast(X) :- Fast(X).", FULL,
                        strict=False)
    assert not cyc.stratified
    rep = stratification(cyc)
    assert not rep.stratified
    assert sorted(map(sorted, rep.cycles)) == [["Fast"], ["Slow", "Stop"]]
    assert [sorted(c) for c in rep.negative_cycles] == [["Slow", "Stop"]]
    assert "negative cycle" in str(rep)
    assert analyze(cyc).conflicts == ()


def test_conflicts_with_witness_and_cores():
    p = load_rules(RULES / "sim_expert.rules", FULL).program()
    res = {r.heads: r for r in conflicts(p)}
    sf = res[("Slow", "Fast")]
    assert sf.conflict and set(sf.witness.actions) >= {"Slow", "Fast"}
    assert sf.witness.types[0] == "Car"
    stop_slow = res[("Slow", "Stop")]
    assert not stop_slow.conflict and set(stop_slow.core) == {"clause Slow#1", "clause Slow#2", "clause Slow#3"}
    # the witness is a real scene: the compiled engine derives both actions on it
    w = sf.witness
    k = len(w.entities)
    unary = {pn.name: np.array([[pn.name in w.unary[i] for i in range(k)]]) for pn in FULL.unary}
    binary = {pn.name: np.zeros((1, k, k), bool) for pn in FULL.binary}
    for pred, a, b in w.binary:
        binary[pred][0, w.entities.index(a), w.entities.index(b)] = True
    from core.logic.engines.compiled import CompiledEngine
    d = CompiledEngine(p).decide(TableInterpretation(FULL, np.ones((1, k), bool), unary, binary))
    assert d.holds[0, Action.SLOW] and d.holds[0, Action.FAST]


def test_conflict_core_names_ontology_constraints():
    p = parse_program("Stop(X) :- IsCar(X).\nSlow(X) :- IsOld(X).", FULL)
    (r,) = conflicts(p)
    assert not r.conflict
    assert "ontology: pedestrian concepts only on pedestrians" in r.core
    assert "ontology: an entity is one type" in r.core


def test_dead_clauses_and_undefined_predicates():
    onto = loads_ontology("ontology: t\npredicates:\n"
                          "  - {name: IsCar, arity: 1, kind: semantic, grounding: is_car}\n"
                          "  - {name: IsPedestrian, arity: 1, kind: semantic, grounding: is_pedestrian}\n"
                          "  - {name: IsTruck, arity: 1, kind: semantic, grounding: null}\n"
                          "  - {name: NextTo, arity: 2, kind: spatial, grounding: next_to}\n"
                          "  - {name: Stop, arity: 1, kind: action}\n  - {name: Fast, arity: 1, kind: action}\n"
                          "  - {name: Slow, arity: 1, kind: action}\n")
    p = parse_program("Stop(X) :- IsCar(X), IsPedestrian(X).\nStop(X) :- NextTo(X, X).\n"
                      "Fast(X) :- IsTruck(X).\nFast(X) :- Not(Slow(X)), NextTo(X, Y).", onto)
    dead = {d.clause: d for d in dead_clauses(p)}
    assert set(dead) == {"Stop#1", "Stop#2", "Fast#1"}
    assert dead["Stop#2"].core == ("ontology: relations are irreflexive",)
    und = {u.predicate: u for u in undefined_predicates(p)}
    assert set(und) == {"IsTruck", "Slow"} and und["Slow"].clauses == ("Fast#2",)
    assert "always false" in str(analyze(p))


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
