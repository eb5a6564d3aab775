"""SPF task-rule semantics (docs/reference.md#task-rule-semantics) and the analysis API (stratification, conflicts,
dead clauses, undefined predicates)."""
from __future__ import annotations

import numpy as np
import pytest

from core.codes import Action
from core.errors import RuleError
from core.logic.analysis import analyze, conflicts, dead_clauses, stratification, undefined_predicates
from core.logic.compiled import TaskChecker, check_task
from core.logic.grounding import Grounder, TableInterpretation
from core.logic.ontology import loads_ontology
from core.logic.program import load_rules, parse_program
from tests.support.logic import CAR, RULES, R, blank_city, ontology, random_tables, snap

FULL = ontology("full")
EXPERT_TASK = load_rules(RULES / "spf_expert.rules", FULL).task()


def one_ego(**true_unary):
    """A single-ego, two-entity table: entity 0 = ego, entity 1 = another; keyword = predicate -> [e0, e1]."""
    valid = np.ones((1, 2), bool)
    unary = {k: np.array([v], bool) for k, v in true_unary.items() if not k.startswith("b_")}
    binary = {k[2:]: np.array([v], bool) for k, v in true_unary.items() if k.startswith("b_")}
    return TableInterpretation(FULL, valid, unary, binary)


def test_stop_required():
    interp = one_ego(IsCar=[1, 0], IsAtInter=[1, 0], IsInInter=[0, 1])
    ok = check_task(EXPERT_TASK, interp, 0, Action.STOP)
    assert ok.violations == () and ok.reward == 0 and not ok.fail
    bad = check_task(EXPERT_TASK, interp, 0, Action.NORMAL)
    assert bad.violated_rules == ("Stop",) and bad.reward == -5 and bad.fail
    assert bad.violations[0].clause == "Stop#1"
    assert ("Y", 1, "E1") in bad.violations[0].witness


def test_slow_required():
    # tiro car with a pedestrian close: Slow body (needs Not(Stop))
    interp = one_ego(IsCar=[1, 0], IsTiro=[1, 0], IsPedestrian=[0, 1], b_IsClose=[[0, 1], [1, 0]])
    assert check_task(EXPERT_TASK, interp, 0, Action.SLOW).violations == ()
    assert check_task(EXPERT_TASK, interp, 0, Action.STOP).violations == (), "Stop satisfies every task rule"
    assert check_task(EXPERT_TASK, interp, 0, Action.FAST).violated_rules == ("Slow",)
    assert check_task(EXPERT_TASK, interp, 0, Action.NORMAL).violated_rules == ("Slow",)


def test_fast_required():
    interp = one_ego(IsCar=[1, 0], IsBus=[1, 0])
    assert check_task(EXPERT_TASK, interp, 0, Action.FAST).violations == ()
    assert check_task(EXPERT_TASK, interp, 0, Action.SLOW).violations == (), "Fast body needs Not(Slow)"
    bad = check_task(EXPERT_TASK, interp, 0, Action.NORMAL)
    assert bad.violated_rules == ("Fast",) and bad.reward == -5 and bad.fail
    assert "Fast ← clause 2: Not(Stop(X=E0)), Not(Slow(X=E0)), IsBus(X=E0)" == bad.violations[0].text


def test_reward_counts_each_rule_once_and_easy_values():
    task = load_rules(RULES / "spf_easy.rules", ontology("easy")).task()
    o = ontology("easy")
    interp = TableInterpretation(o, np.ones((1, 2), bool),
                                 {"IsAtInter": np.array([[1, 1]], bool), "IsInInter": np.array([[0, 1]], bool)},
                                 {"HigherPri": np.array([[[0, 0], [1, 0]]], bool)})
    res = check_task(task, interp, 0, Action.FAST)
    assert len(res.violations) == 2 and res.reward == -10 and res.fail
    assert res.to_dict()["violations"][0]["rule"] == "Collision and Intersection"


def test_vectorised_task_check_matches_single():
    interp = random_tables(FULL, np.random.default_rng(2), 300, 5, 0.5)
    checker = TaskChecker(EXPERT_TASK)
    actions = np.random.default_rng(3).integers(0, 4, 300)
    reward, fail = checker.check_all(interp, actions)
    for e in range(300):
        one = checker.check(interp, e, int(actions[e]))
        assert one.reward == reward[e] and one.fail == fail[e]
    assert fail.any() and not fail.all()


def test_task_check_on_a_grounded_scene():
    city = blank_city()
    city.intersections[0, 30, 30] = 1
    s = snap([(CAR, (30, 30), R, 3, []), (CAR, (30, 33), R, 1, [])])
    g = Grounder(city, FULL).ground(s, np.random.default_rng(0), view_limits={0: 5})
    res = check_task(EXPERT_TASK, g, 0, Action.NORMAL)
    # Car_2 is 3 cells straight ahead of the moving Car_1 (CollidingClose) → Stop required
    assert res.violated_rules == ("Stop",)
    assert any(v.clause == "Stop#7" and ("Y", 1, "Car_2") in v.witness for v in res.violations)


# -- analysis ----------------------------------------------------------------------------------------------
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
    from core.logic.compiled import CompiledEngine
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


# -- analysis edge cases: constraints in dead-clause checks, cyclic programs, cycle messages --------------------
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
