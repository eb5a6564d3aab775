"""Rule analysis for the editor and the CLI (core/analysis/report.py, witness.py): conflicts with cores at
clause lines and witness scenes that really ground to the conflict, dead clauses, the dependency graph."""
from __future__ import annotations

from dataclasses import replace

import pytest

from core.analysis.report import analyze_rules, core_items, dependency_graph
from core.analysis.static import conflicts
from core.analysis.witness import witness_scene
from core.base.codes import ACTION_NAMES
from core.logic.lang.program import load_rules, parse_rules
from core.sim.scene import build_simulation
from tests.support.logic import RULES, ontology
from tests.support.studio import default_config

FULL = ontology("full")
# a bus at the intersection's line with someone in the box must both stop and go fast
CONFLICT = "Stop(X) :- IsAtInter(X), IsInInter(Y).\nFast(X) :- IsBus(X).\n"
NO_CONFLICT = "Stop(X) :- IsAtInter(X), IsInInter(Y).\nFast(X) :- Not(Stop(X)), IsBus(X).\n"
DEAD = ("Stop(X) :- IsAtInter(X), IsInInter(Y).\n"
        "Slow(X) :- IsCar(X), IsPedestrian(X).\n"          # line 2: an entity has one type
        "Fast(X) :- IsBus(X).\n"
        ":- IsBus(X), IsAmbulance(Y).\n"
        "Slow(X) :- IsBus(X), IsAmbulance(X).\n")           # line 5: car concepts can combine, but ... see test


def cfg_for(rules):
    return replace(default_config(), ontology=rules.ontology, rules=rules, rule_section=None, files={})


def derives(config, program, scene, heads) -> bool:
    """The simulator's own grounding of the scene's first state, decided by the program's engine."""
    sim = build_simulation(config, scene, seed=3, record=False)
    _, d = sim.decide()
    return all(d.holds[0, ACTION_NAMES.index(h)] for h in heads)


def test_known_conflict_gets_a_witness_scene_that_really_grounds_to_it():
    rules = parse_rules(CONFLICT, FULL, "c.rules")
    prog = rules.program()
    cfg = cfg_for(rules)
    (res,) = conflicts(prog, pairs=[("Fast", "Stop")])
    assert res.conflict
    ws = witness_scene(cfg, prog, res.heads, res.witness)
    assert ws is not None and ws.verified
    assert ws.clauses == (("Fast#1", 2), ("Stop#1", 1))
    ego = ws.scene.agents[0]
    assert "bus" in ego.concepts
    assert derives(cfg, prog, ws.scene, ("Stop", "Fast"))
    # and the placement matters: the same agents elsewhere (ego moved off the line) do not conflict
    moved = ws.scene.replace_agent(0, position=None, path=None, path_index=None, goal=None, heading=-1)
    assert not derives(cfg, prog, moved, ("Stop", "Fast"))


def test_bundled_conflict_witness_sim_expert():
    rules = load_rules(RULES / "sim_expert.rules", FULL)
    prog = rules.program()
    cfg = cfg_for(rules)
    (res,) = conflicts(prog, pairs=[("Slow", "Fast")])
    ws = witness_scene(cfg, prog, res.heads, res.witness)
    assert ws is not None and ws.verified and derives(cfg, prog, ws.scene, ("Slow", "Fast"))


def test_impossible_conflict_core_names_clause_lines():
    rules = parse_rules(NO_CONFLICT, FULL, "n.rules")
    rep = analyze_rules(rules, config=None)
    (sec,) = rep.sections
    (c,) = [c for c in sec.conflicts if set(c.result.heads) == {"Stop", "Fast"}]
    assert not c.result.conflict and c.scene is None
    assert ("clause Fast#1", 2) in [(i.name, i.line) for i in c.core]
    assert "line 2" in str(c)


def test_dead_clauses_and_only_with_violation_with_lines():
    rules = parse_rules(DEAD, FULL, "d.rules")
    rep = analyze_rules(rules, config=None)
    dead = {d.dead.clause: d for d in rep.sections[0].dead}
    assert dead["Slow#1"].line == 2 and not dead["Slow#1"].dead.only_with_violation
    assert any("one type" in i.name for i in dead["Slow#1"].core)
    # a bus that is an ambulance violates the constraint (some Y, the ego itself, is an ambulance)
    assert dead["Slow#2"].line == 5 and dead["Slow#2"].dead.only_with_violation
    assert [(i.name, i.line) for i in dead["Slow#2"].core] == [("constraint constraint#1", 4)]
    assert "Fast#1" not in dead and "Stop#1" not in dead
    assert rep.problems >= 2


def test_dependency_graph_with_polarity_and_negative_cycle():
    rules = parse_rules("Stop(X) :- Not(Slow(X)), IsCar(X).\nSlow(X) :- Stop(X).\nFast(X) :- IsBus(X).\n",
                        FULL, "g.rules", strict=False)
    g = dependency_graph(rules.program())
    assert [(e.head, e.body, e.negative, e.line) for e in g.edges] == [("Stop", "Slow", True, 1),
                                                                       ("Slow", "Stop", False, 2)]
    assert not g.stratified and g.negative_cycles
    assert {n.name: n.stratum for n in g.nodes} == {"Stop": None, "Slow": None, "Fast": None}
    rep = analyze_rules(rules)
    assert rep.sections[0].conflicts == () and "not stratified" in rep.notes[0]
    ok = dependency_graph(parse_rules(NO_CONFLICT, FULL).program())
    assert ok.stratified and {n.name: n.stratum for n in ok.nodes} == {"Stop": 0, "Fast": 1}
    assert ok.to_dict()["edges"][0]["negative"] is True


def test_core_items_map_labels_to_lines():
    prog = parse_rules(DEAD, FULL).program()
    items = core_items(prog, ("clause Fast#1", "constraint constraint#1", "ontology: an entity is one type"))
    assert [i.line for i in items] == [3, 4, None]


@pytest.mark.parametrize("name", sorted(p.name for p in RULES.glob("*.rules")))
def test_bundled_rule_sets_analyse(name):
    text = (RULES / name).read_text(encoding="utf-8")
    hint = next(line.split()[1].rstrip(".") for line in text.splitlines() if line.startswith("#ontology"))
    rules = parse_rules(text, ontology(hint), name)
    rep = analyze_rules(rules, config=None)
    assert [s.section for s in rep.sections] == [n for n, s in rules.sections.items() if n != "task"]
    for s in rep.sections:
        assert s.graph.stratified
        assert not s.undefined
        assert all(not c.result.unknown for c in s.conflicts)
    assert rep.to_dict()["file"] == name


def test_status_and_cancel_hooks_for_a_background_job():
    rules = parse_rules(DEAD, FULL, "d.rules")
    seen = []
    analyze_rules(rules, status=seen.append)
    assert seen == ["[main] dependency graph", "[main] conflicts", "[main] dead clauses"]

    class Cancelled(Exception):
        pass

    calls = []

    def check():
        calls.append(1)
        if len(calls) == 2:
            raise Cancelled

    with pytest.raises(Cancelled):
        analyze_rules(rules, check=check)
    assert len(calls) == 2      # stopped before the dead-clause phase


def test_a_map_without_intersections_skips_scenes_with_a_note():
    from tests.support.logic import blank_city

    rules = parse_rules(CONFLICT, FULL, "c.rules")
    cfg = replace(cfg_for(rules), city=blank_city())
    rep = analyze_rules(rules, config=cfg)
    assert rep.sections[0].deadlocks is None
    assert all(c.scene is None for c in rep.sections[0].conflicts)
    assert "no intersection" in rep.notes[0]
