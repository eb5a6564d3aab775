"""Two engines, one answer: compiled (numpy) vs z3 on random truth tables for every bundled rule set;
explanations, constraints/unsat, threads."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.codes import Action
from core.logic.engines.compiled import CompiledEngine
from core.logic.engines.z3engine import Z3Engine
from core.logic.grounding.grounder import Grounder, TableInterpretation
from core.logic.lang.program import load_rules, parse_program
from tests.support.logic import CAR, PED, RULES, D, N, R, blank_city, ontology, random_tables, snap
from tests.support.paths import ROOT

BUNDLED = [("sim_easy", "easy", "main"), ("sim_expert", "full", "main"),
           ("spf_easy", "easy", "sim"), ("spf_easy", "easy", "expert"),
           ("spf_medium", "medium", "sim"), ("spf_medium", "medium", "expert"),
           ("spf_hard", "full", "sim"), ("spf_hard", "full", "expert"),
           ("spf_expert", "full", "sim"), ("spf_expert", "full", "expert"),
           ("vap_easy", "vap", "main"), ("vap_hard", "vap", "main")]
EGOS_PER_EXAMPLE = 30
EXAMPLES = 75  # 75 × 30 = 2250 ego problems per rule set


def program(name, onto, section):
    return load_rules(RULES / f"{name}.rules", ontology(onto)).program(section)


@pytest.mark.parametrize("name,onto,section", BUNDLED, ids=[f"{a}:{c}" for a, _, c in BUNDLED])
def test_compiled_and_z3_agree_on_random_truth_tables(name, onto, section):
    prog = program(name, onto, section)
    comp, z3e = CompiledEngine(prog), Z3Engine(prog)
    stats = {"cases": 0, "fired": np.zeros(4, int), "default": 0}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(seed=st.integers(0, 2**32 - 1), density=st.floats(0.15, 0.85), kmax=st.integers(1, 6))
    def check(seed, density, kmax):
        interp = random_tables(prog.ontology, np.random.default_rng(seed), EGOS_PER_EXAMPLE, kmax, density)
        a, b = comp.decide(interp), z3e.decide(interp)
        assert np.array_equal(a.holds, b.holds)
        assert np.array_equal(a.unsat, b.unsat)
        assert np.array_equal(a.clause, b.clause), "same fired clause"
        assert np.array_equal(a.witness, b.witness), "same witness binding"
        stats["cases"] += len(a)
        stats["fired"] += a.holds.sum(axis=0)
        stats["default"] += int(a.default_normal.sum())

    check()
    assert stats["cases"] >= 2000
    for h in prog.heads:  # every head both fired and did not fire somewhere
        assert 0 < stats["fired"][Action[h.upper()]] < stats["cases"], (h, stats)
    if "Normal" not in prog.heads:
        assert stats["default"] > 0, "the default Normal also occurs"


def test_explanation_text_and_data():
    city = blank_city()
    city.intersections[0, 30, 30] = 1  # car "at" line
    city.intersections[2, 30, 40] = 1  # "in" box
    onto = ontology("full")
    prog = program("sim_expert", "full", "main")
    s = snap([(CAR, (30, 30), R, 4, []), (PED, (30, 40), N, 0, []), (CAR, (10, 10), N, 2, [])])
    g = Grounder(city, onto).ground(s, np.random.default_rng(0))
    d = CompiledEngine(prog).decide(g)
    e = d.explain(0)
    assert str(e) == ("Stop ← clause 1: Not(IsAmbulance(X=Car_1)), Not(IsOld(X=Car_1)), IsAtInter(X=Car_1), "
                      "IsInInter(Y=Pedestrian_1)")
    assert e.to_dict()["firings"][0]["binding"] == [{"variable": "X", "agent": 0, "name": "Car_1"},
                                                    {"variable": "Y", "agent": 1, "name": "Pedestrian_1"}]
    assert d.actions(0) == (Action.STOP,)
    assert str(d.explain(2)) == "Normal (default: no action derived)" and d.actions(2) == (Action.NORMAL,)
    assert d.explain(2).default_normal and d.effective[2].tolist() == [False, True, False, False]
    assert Z3Engine(prog).decide(g).explain(0).to_dict() == e.to_dict()


def test_police_slow_and_fast_both_hold():
    """docs/reference.md#choosing-the-move: with sim expert rules a police ego with two young pedestrians next to each
    other and a reckless agent in view derives both Slow and Fast."""
    prog = program("sim_expert", "full", "main")
    s = snap([(CAR, (30, 30), R, 1, ["police"]), (PED, (30, 45), N, 0, ["young"]),
              (PED, (31, 45), N, 0, ["young"]), (CAR, (10, 30), N, 2, ["reckless"])])
    g = Grounder(blank_city(), ontology("full")).ground(s, np.random.default_rng(0))
    for eng in (CompiledEngine(prog), Z3Engine(prog)):
        d = eng.decide(g)
        assert d.actions(0) == (Action.SLOW, Action.FAST)
        assert "Slow ← clause 3: Not(Stop(X=Car_1)), IsPolice(X=Car_1), IsYoung(Y=Pedestrian_1), " \
               "IsYoung(Z=Pedestrian_1), NextTo(Y=Pedestrian_1, Z=Pedestrian_2)" not in str(d.explain(0))
        assert "IsYoung(Y=Pedestrian_1), IsYoung(Z=Pedestrian_2), NextTo(Y=Pedestrian_1, Z=Pedestrian_2)" in \
            str(d.explain(0))


def test_existentials_include_the_ego():
    """Vis hard: 'IsPolice(Y)' is satisfied by a police ego itself
    (docs/reference.md#who-counts-in-a-rule)."""
    prog = program("vap_hard", "vap", "main")
    s = snap([(CAR, (30, 30), D, 1, ["police"])])
    g = Grounder(blank_city(), ontology("vap")).ground(s, np.random.default_rng(0))
    d = CompiledEngine(prog).decide(g)
    assert d.actions(0) == (Action.SLOW,)
    assert "IsPolice(Y=Car_1)" in str(d.explain(0))


def test_constraint_violation_gives_unsat_default():
    onto = ontology("full")
    prog = parse_program("Slow(X) :- IsTiro(X).\nFast(X) :- IsBus(X).\nno_mix: :- Slow(X), Fast(X).", onto)
    valid = np.ones((3, 1), bool)
    interp = TableInterpretation(onto, valid, {"IsTiro": np.array([[1], [1], [0]], bool),
                                               "IsBus": np.array([[1], [0], [1]], bool)}, {})
    for eng in (CompiledEngine(prog), Z3Engine(prog)):
        d = eng.decide(interp)
        assert d.unsat.tolist() == [True, False, False]
        assert d.holds.tolist() == [[False] * 4, [True, False, False, False], [False, False, True, False]]
        assert d.violated.tolist() == [2, -1, -1]
        assert "unsat ← constraint 1 'no_mix': Slow(X=E0), Fast(X=E0)" in str(d.explain(0))
        assert "Normal (default: a constraint is violated" in str(d.explain(0))


def test_undefined_action_in_body_is_false():
    onto = ontology("full")
    prog = parse_program("Fast(X) :- Not(Slow(X)), IsBus(X).", onto)
    interp = TableInterpretation(onto, np.ones((1, 1), bool), {"IsBus": np.ones((1, 1), bool)}, {})
    assert CompiledEngine(prog).decide(interp).actions(0) == (Action.FAST,)
    assert Z3Engine(prog).decide(interp).actions(0) == (Action.FAST,)


def test_engines_from_background_threads():
    prog = program("sim_expert", "full", "main")
    interp = random_tables(prog.ontology, np.random.default_rng(11), 200, 6, 0.5)
    z3e, comp = Z3Engine(prog), CompiledEngine(prog)
    expected = comp.decide(interp).holds
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        results[i] = (z3e if i % 2 else comp).decide(interp).holds

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(results[i], expected) for i in range(4))


def test_empty_world():
    prog = program("sim_easy", "easy", "main")
    g = Grounder(blank_city(), ontology("easy")).ground(snap([]), np.random.default_rng(0))
    for eng in (CompiledEngine(prog), Z3Engine(prog)):
        assert eng.decide(g).holds.shape == (0, 4)


def test_z3_interrupt_from_another_thread():
    from core.logic.engines.z3engine import Z3Interrupted
    prog = program("sim_expert", "full", "main")
    small = random_tables(prog.ontology, np.random.default_rng(5), 50, 6, 0.5)
    big = random_tables(prog.ontology, np.random.default_rng(6), 20000, 6, 0.5)  # still deciding when the interrupt comes
    eng = Z3Engine(prog)
    started, out = threading.Event(), {}

    def work() -> None:
        eng.decide(small)  # builds this thread's templates
        started.set()
        t = time.monotonic()
        try:
            eng.decide(big)
            out["result"] = "not interrupted"
        except Z3Interrupted as exc:
            out["result"] = exc
        out["seconds"] = time.monotonic() - t
        out["again"] = eng.decide(small).holds  # the same thread's context works after the interrupt

    th = threading.Thread(target=work)
    th.start()
    started.wait()
    time.sleep(0.2)
    eng.interrupt()  # from the main thread, reaching the worker's own z3 context
    th.join()
    assert isinstance(out["result"], Z3Interrupted), out
    assert np.array_equal(out["again"], CompiledEngine(prog).decide(small).holds)
    assert np.array_equal(eng.decide(small).holds, CompiledEngine(prog).decide(small).holds), "usable again"


def test_logic_core_never_evaluates_text():
    """Security (docs/reference.md#security): no eval/exec/compile/dynamic import anywhere in core/logic."""
    import ast
    bad = []
    for path in (ROOT / "core" / "logic").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("eval", "exec", "compile", "__import__"):
                bad.append(f"{path.name}:{node.lineno} {node.func.id}")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
                if any(n.split(".")[0] in ("importlib", "pickle") for n in names):
                    bad.append(f"{path.name}:{node.lineno} imports {names}")
    assert not bad, bad
