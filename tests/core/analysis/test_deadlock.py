"""Deadlock search (core/analysis/deadlock.py): known deadlocks are found on the real map and their scenes really
stay stopped when simulated; a set without deadlocks reports none."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.analysis.deadlock import find_deadlocks
from core.base.codes import Action
from core.logic.lang.program import parse_rules
from core.sim.scene import Scene, build_simulation
from tests.support.logic import ontology
from tests.support.studio import default_config

FULL = ontology("full")
# a pedestrian on an "at" line waits while someone is in the box; a car waits for what is straight ahead of it
PED_CAR = "Stop(X) :- IsAtInter(X), IsInInter(Y).\nStop(X) :- CollidingClose(X, Y).\n"
# only agents on "at" lines wait, and what they wait on (someone in the box) never does
CLEAN = "Stop(X) :- IsAtInter(X), IsInInter(Y).\nSlow(X) :- IsInInter(X).\n"
# a 3-cycle: pedestrian on the line waits on a car in the box, that car on a car ahead, that car (a bus off the
# junction) on a pedestrian next to it on its right; no two of them wait on each other
THREE = ("Stop(X) :- IsPedestrian(X), IsAtInter(X), IsInInter(Y).\n"
         "Stop(X) :- IsCar(X), CollidingClose(X, Y), IsCar(Y).\n"
         "Stop(X) :- IsBus(X), Not(IsInInter(X)), Not(IsAtInter(X)), RightOf(Y, X), NextTo(Y, X), IsPedestrian(Y).\n")


def config_for(text: str):
    rules = parse_rules(text, FULL, "hand.rules")
    return replace(default_config(), ontology=FULL, rules=rules, rule_section=None, files={})


def stays_stopped(config, scene: Scene, steps: int = 12) -> bool:
    sim = build_simulation(config, scene, seed=5, record=True)
    start = sim.positions.copy()
    for _ in range(steps):
        out = sim.step()
        if not (out.decided == int(Action.STOP)).all():
            return False
    return np.array_equal(sim.positions, start) and (sim.buffer.array("realised") == int(Action.STOP)).all()


@pytest.fixture(scope="module")
def ped_car():
    cfg = config_for(PED_CAR)
    return cfg, find_deadlocks(cfg, max_agents=2, max_results=3)


def test_known_two_agent_deadlock_is_found_with_its_clauses(ped_car):
    _, res = ped_car
    assert res.complete and res.rejected == 0 and res.found > 0 and res.deadlocks
    d = res.deadlocks[0]
    kinds = sorted(a.kind for a in d.agents)
    assert kinds == ["car", "pedestrian"]
    by_kind = {a.kind: a for a in d.agents}
    assert by_kind["pedestrian"].clause == "Stop#1" and by_kind["pedestrian"].line == 1
    assert by_kind["car"].clause == "Stop#2" and by_kind["car"].line == 2
    assert by_kind["car"].waits_on == (by_kind["pedestrian"].name,)
    assert by_kind["pedestrian"].waits_on == (by_kind["car"].name,)
    assert "up to 2 agents" in res.bound() and "junction" in res.bound()


def test_deadlock_scene_stays_stopped_when_simulated(ped_car):
    cfg, res = ped_car
    for d in res.deadlocks:
        assert d.verified_steps == 5
        assert stays_stopped(cfg, d.scene)


def test_each_deadlocked_agent_moves_when_alone(ped_car):
    """'Waits on another': removed from the deadlock, every agent goes."""
    cfg, res = ped_car
    scene = res.deadlocks[0].scene
    for agent in scene.agents:
        sim = build_simulation(cfg, Scene((agent,)), seed=0, record=False)
        assert sim.step().decided[0] != int(Action.STOP)


def test_deadlock_scene_is_a_scene_file_round_trip(ped_car, tmp_path):
    from core.sim.scene_io import load_scene, save_scene

    cfg, res = ped_car
    path = save_scene(res.deadlocks[0].scene, tmp_path / "dl.yaml")
    assert stays_stopped(cfg, load_scene(path))


def test_rules_without_deadlock_report_none():
    res = find_deadlocks(config_for(CLEAN), max_agents=2)
    assert res.complete and res.found == 0 and res.deadlocks == ()


def test_three_agent_wait_cycle():
    cfg = config_for(THREE)
    res = find_deadlocks(cfg, max_agents=3, max_results=2)
    threes = [d for d in res.deadlocks if len(d.agents) == 3]
    assert threes, res.to_dict()
    d = threes[0]
    assert sorted(a.clause for a in d.agents) == ["Stop#1", "Stop#2", "Stop#3"]
    assert all(len(a.waits_on) == 1 for a in d.agents)
    assert stays_stopped(cfg, d.scene)
    # minimal: every pair alone moves on (some agent of the pair does not stop)
    for i in range(3):
        pair = Scene(tuple(a for j, a in enumerate(d.scene.agents) if j != i))
        sim = build_simulation(cfg, pair, seed=0, record=False)
        assert not (sim.step().decided == int(Action.STOP)).all()


def test_bad_agent_count_is_refused():
    with pytest.raises(ValueError, match="2..3 agents"):
        find_deadlocks(config_for(CLEAN), max_agents=5)


def test_check_hook_stops_the_search():
    class Cancelled(Exception):
        pass

    def check():
        raise Cancelled

    with pytest.raises(Cancelled):
        find_deadlocks(config_for(CLEAN), max_agents=2, check=check)


def test_bundled_expert_rules_lock_a_pedestrian_and_a_car(config):
    """The default city's own rules (sim_expert.rules): the documented pedestrian-on-the-line / car-in-the-box
    deadlock (Stop#1 line 8, Stop#7 line 15)."""
    res = find_deadlocks(config, max_agents=2, max_results=2)
    assert res.rejected == 0
    d = next(d for d in res.deadlocks if sorted(a.kind for a in d.agents) == ["car", "pedestrian"])
    assert {(a.kind, a.clause, a.line) for a in d.agents} == {("pedestrian", "Stop#1", 8), ("car", "Stop#7", 15)}
    assert stays_stopped(config, d.scene)
