"""The agent editor's pure edit functions and problem checks (core/agents/edit.py), without Qt or a session."""
from __future__ import annotations

import pytest

from core.agents.edit import (
    add_agent,
    agent_problems,
    concepts_for,
    delete_agents,
    duplicate_agents,
    edit_agents,
    generate_composition,
    move_agents,
    parse_name,
    reorder_agents,
    set_cells,
)
from core.agents.io import dumps_agent_set, loads_agent_set
from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind
from core.logic.lang.ontology import load_ontology
from tests.support.paths import CONFIGS

C, P = Kind.CAR, Kind.PEDESTRIAN


def small() -> AgentSet:
    return AgentSet((AgentSpec(C, 1, 1), AgentSpec(P, 1, 0, ("old",)), AgentSpec(C, 2, 2, ("ambulance",))))


def names(s: AgentSet) -> list[str]:
    return [a.name for a in s]


def test_concepts_offered_are_the_kinds_concepts_the_ontology_tests():
    easy = load_ontology(CONFIGS / "ontologies" / "easy.yaml")
    assert concepts_for(C, easy) == ("ambulance", "tiro")
    assert concepts_for(P, easy) == ("old",)
    assert concepts_for(C) == ("ambulance", "bus", "police", "tiro", "reckless")


def test_add_duplicate_delete_reorder_leave_the_argument_alone():
    s = small()
    a = add_agent(s, P, index=1)
    assert names(a) == ["Car_1", "Pedestrian_2", "Pedestrian_1", "Car_2"] and a.agents[1].priority == 0
    assert add_agent(s, C).agents[-1] == AgentSpec(C, 3, 3)           # next id, lowest priority so far + 1
    d = duplicate_agents(s.agents and s, [0, 2])
    assert names(d) == ["Car_1", "Car_3", "Pedestrian_1", "Car_2", "Car_4"]
    assert d.agents[4].concepts == ("ambulance",) and d.agents[4].priority == 2
    assert names(delete_agents(s, [0, 2])) == ["Pedestrian_1"]
    assert names(reorder_agents(s, [2, 0, 1])) == ["Car_2", "Car_1", "Pedestrian_1"]
    with pytest.raises(ValueError):
        reorder_agents(s, [0, 0, 1])
    with pytest.raises(IndexError):
        delete_agents(s, [3])
    assert s == small()


def test_move_keeps_a_block_together_and_clamps():
    s = add_agent(add_agent(small(), P), P)          # Car_1, Ped_1, Car_2, Ped_2, Ped_3
    m, rows = move_agents(s, [3, 4], -2)
    assert names(m) == ["Car_1", "Pedestrian_2", "Pedestrian_3", "Pedestrian_1", "Car_2"] and rows == [1, 2]
    m, rows = move_agents(s, [0], +10)
    assert names(m)[-1] == "Car_1" and rows == [4]
    m, rows = move_agents(s, [0], -1)
    assert m == s and rows == [0]


def test_multi_edit_ticks_concepts_and_changing_kind_renames():
    s = small()
    e = edit_agents(s, [0, 2], add_concepts=["tiro"])
    assert [a.concepts for a in e] == [("tiro",), ("old",), ("ambulance", "tiro")]
    e = edit_agents(e, [0, 2], remove_concepts=["tiro"])
    assert e == s
    k = edit_agents(s, [2], kind=P)
    assert k.agents[2] == AgentSpec(P, 2, 0, ())     # ambulance dropped, pedestrian id 2, priority 0
    assert edit_agents(s, [1], agent_id=7).agents[1].name == "Pedestrian_7"
    with pytest.raises(ValueError):
        edit_agents(s, [0, 1], agent_id=3)
    assert parse_name("Car_12") == (C, 12)
    with pytest.raises(ValueError, match="Car_<id>"):
        parse_name("Truck_1")


def test_start_and_goal_round_trip_through_the_documented_yaml():
    s = set_cells(small(), 0, start=(10, 31), goal=(230, 209))
    assert s.agents[0].start == (10, 31) and s.placed
    text = dumps_agent_set(s)
    assert "- {type: Car, id: 1, priority: 1, start: [10, 31], goal: [230, 209]}" in text
    assert loads_agent_set(text) == s
    assert set_cells(s, 0, start=None).agents[0] == AgentSpec(C, 1, 1, goal=(230, 209))


def test_composition_has_exact_counts_and_the_seed_fixes_it():
    counts = {C: {"normal": 4, "ambulance": 2}, P: {"normal": 3, "old": 1}}
    g = generate_composition(counts, seed=5)
    assert len(g) == 10
    assert sum(a.concepts == ("ambulance",) for a in g) == 2 and sum(a.concepts == ("old",) for a in g) == 1
    assert sorted(a.priority for a in g if a.kind is C) == [1, 2, 3, 4, 5, 6]
    assert generate_composition(counts, seed=5) == g and generate_composition(counts, seed=6) != g
    assert loads_agent_set(dumps_agent_set(g)) == g                      # valid as saved
    with pytest.raises(ValueError, match="not a concept of pedestrians"):
        generate_composition({P: {"ambulance": 1}})


def test_problems_name_invalid_combinations(config):
    city, onto = config.city, config.ontology
    s = add_agent(small(), P, concepts=["ambulance"])                     # a pedestrian with "ambulance"
    s = edit_agents(s, [1], agent_id=2)                                   # Pedestrian_2 twice
    s = set_cells(s, 0, start=(15, 15))                                   # a car on a walking street
    s = set_cells(s, 2, start=(10, 31), goal=(20, 20))                    # a goal on a building
    found = {(p.severity, p.code, p.name) for p in agent_problems(s, city, onto)}
    assert ("error", "agent-concepts", "Pedestrian_2") in found
    assert ("error", "duplicate", "Pedestrian_2") in found
    assert ("error", "start-cell", "Car_1") in found
    assert ("error", "goal-cell", "Car_2") in found
    msgs = [p.message for p in agent_problems(s, city, onto)]
    assert any("building" in m and "(20, 20)" in m for m in msgs), msgs
    ok = set_cells(small(), 0, start=(10, 31), goal=(230, 209))
    assert [p for p in agent_problems(ok, city, onto) if p.severity == "error"] == []
    assert [p.code for p in agent_problems(AgentSet(()), city, onto)] == ["empty"]
