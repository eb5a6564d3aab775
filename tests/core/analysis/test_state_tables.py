"""Trip states and state tables (core/analysis/junction_states.py, state_tables.py), on which the deadlock search and
the witness scenes rely: states are real trip cells, and deciding from the tables is exactly deciding from the
simulator's own grounding of the same agents."""
from __future__ import annotations

import numpy as np
import pytest

from core.analysis.junction_states import junction_states, pick_junction
from core.analysis.scenes import make_scene
from core.analysis.state_tables import agent_types, interpretation, state_tables
from core.base.codes import Kind
from core.logic.engines.compiled import CompiledEngine
from core.sim.scene import build_simulation, scene_problems

HEAD = {0: (0, -1), 1: (0, 1), 2: (-1, 0), 3: (1, 0)}


@pytest.fixture(scope="module")
def states(config):
    return junction_states(config.city)


def test_states_are_cells_of_real_trips_inside_the_neighbourhood(config, states):
    assert states.index == pick_junction(config.city) and len(states.junction.lines) == 4
    top, bottom, left, right = states.region
    assert states.of_kind(Kind.CAR) and states.of_kind(Kind.PEDESTRIAN)
    for s in states.states:
        assert top <= s.cell[0] <= bottom and left <= s.cell[1] <= right
        assert s.path[s.index] == s.cell
        prev = s.path[s.index - 1]
        assert (s.cell[0] - prev[0], s.cell[1] - prev[1]) == HEAD[s.heading]
    cars = states.of_kind(Kind.CAR)
    inter = config.city.intersections
    assert any(inter[0][s.cell] for s in cars) and any(inter[2][s.cell] for s in cars)


def test_scenes_of_states_pass_the_scene_checks(config, states):
    rng = np.random.default_rng(0)
    types = agent_types(config.ontology, config.program.used_predicates(), 2)
    for _ in range(5):
        idx = rng.choice(len(states.states), size=3, replace=False)
        tys = [next(t for t in types if t.kind == states.states[i].kind) for i in idx]
        assert scene_problems(config, make_scene(states.states, tys, idx)) == []


def test_unknown_junction_is_refused(config):
    with pytest.raises(ValueError, match="not an intersection"):
        junction_states(config.city, junction=10_000)


def test_tables_decide_exactly_as_the_simulator_grounds(config, states):
    """Random configurations of 2..4 agents with random types: every ego's domain and decision from the tables
    equal those of the simulator's grounding of the same scene (coins forced to the same outcomes)."""
    prog = config.program
    onto = config.ontology
    used = prog.used_predicates()
    tables = state_tables(config.city, onto, states.states, used)
    types = agent_types(onto, used, 3)
    engine = CompiledEngine(prog)
    rng = np.random.default_rng(7)
    near = np.flatnonzero(tables.view.sum(axis=1) > 3)
    checked, derived = 0, 0
    for trial in range(40):
        k = int(rng.integers(2, 5))
        first = int(rng.choice(near))
        others = np.flatnonzero(tables.view[first])
        others = others[others != first]
        idx = [first] + [int(x) for x in rng.choice(others, size=k - 1, replace=False)]
        tys = [int(rng.choice([i for i, t in enumerate(types) if t.kind == states.states[s].kind])) for s in idx]
        coins = {(name, i, j): bool(rng.random() < 0.5) for name, m in tables.coin.items()
                 for i in range(k) for j in range(k) if i != j and m[idx[i], idx[j]]}
        scene = make_scene(states.states, types, idx, tys, coins)
        sim = build_simulation(config, scene, seed=trial, record=False)
        grounding, real = sim.decide()
        dom = np.full((k, k), -1, dtype=np.int64)
        dty = np.zeros((k, k), dtype=np.int64)
        cv = {name: np.zeros((k, k, k), dtype=bool) for name in tables.coin}
        for e in range(k):
            members = [int(a) for a in grounding.entities(e)]      # the simulator's domain of ego e
            row = [e] + sorted(j for j in range(k) if j != e and tables.view[idx[e], idx[j]])
            assert members == row
            for c, j in enumerate(row):
                dom[e, c], dty[e, c] = idx[j], tys[j]
            for (name, i, j), v in coins.items():
                if i in row and j in row:
                    cv[name][e, row.index(i), row.index(j)] = v
        mine = engine.decide(interpretation(onto, tables, types, dom, dty, cv, used))
        assert np.array_equal(mine.holds, real.holds), (idx, tys)
        checked += 1
        derived += int(real.holds.sum())
    assert checked == 40 and derived > 10, derived   # the comparison is not between empty decisions
