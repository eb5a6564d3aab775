"""SPF task-rule semantics (docs/reference.md#task-rule-semantics): which action each task rule requires, rule
rewards, and the vectorised task check agreeing with the single-ego one and with a grounded scene."""
from __future__ import annotations

import numpy as np

from core.base.codes import Action
from core.logic.engines.compiled import TaskChecker, check_task
from core.logic.grounding.grounder import Grounder, TableInterpretation
from core.logic.lang.program import load_rules
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
