"""Simulation core: determinism, movement invariants on a long expert run, goal logic, engines, episodes."""
import numpy as np
import pytest

from core.agents.generate import random_agent_set
from core.base.codes import Action, Kind
from core.map.generate import generate_city
from core.sim.config import SimConfig, load_mode
from core.sim.episode import load_episode
from core.sim.simulation import Simulation
from tests.support.paths import MODES


@pytest.fixture(scope="module")
def expert_cfg():
    return load_mode(MODES / "sim_expert.yaml")


@pytest.fixture(scope="module")
def long_run(expert_cfg):
    sim = Simulation(expert_cfg, seed=2)
    sim.run(1000)
    return sim


def test_same_seed_identical_episode(expert_cfg):
    a, b, c = Simulation(expert_cfg, seed=7), Simulation(expert_cfg, seed=7), Simulation(expert_cfg, seed=8)
    for _ in range(60):
        a.step(), b.step(), c.step()
    for f in ("positions", "headings", "goals", "holds", "decided", "realised", "fired", "witness", "reached",
              "plan_cells"):
        assert np.array_equal(a.buffer.array(f), b.buffer.array(f)), f
    assert not np.array_equal(a.buffer.array("positions"), c.buffer.array("positions"))


def test_long_expert_run_keeps_agents_on_their_network(long_run):
    sim = long_run
    pos = sim.buffer.array("positions").astype(int)
    assert pos.shape == (1001, 18, 2)
    walk, drive = sim.city.walkable, sim.city.drivable
    for i, kind in enumerate(sim.kinds):
        cells = pos[:, i]
        ok = (walk if kind == Kind.PEDESTRIAN else drive)[cells[:, 0], cells[:, 1]]
        assert ok.all(), f"{sim.agents.names[i]} left its network at steps {np.nonzero(~ok)[0][:5]}"


def test_moves_match_actions(long_run):
    sim = long_run
    pos = sim.buffer.array("positions").astype(int)
    realised = sim.buffer.array("realised")
    heads = sim.buffer.array("headings")
    dist = np.abs(np.diff(pos, axis=0)).sum(axis=2)           # [T, N] cells moved (moves are straight)
    straight = (np.diff(pos, axis=0) != 0).sum(axis=2) <= 1
    assert straight.all()
    cells_for = {Action.STOP: 0, Action.SLOW: 1, Action.NORMAL: 2, Action.FAST: 3}
    for i, kind in enumerate(sim.kinds):
        for a, cells in cells_for.items():
            sel = realised[:, i] == a
            if kind == Kind.PEDESTRIAN and a != Action.STOP:
                assert (a != Action.NORMAL) or (dist[sel, i] == 1).all()
                assert (a == Action.NORMAL) or not sel.any()
            elif kind == Kind.CAR:
                assert (dist[sel, i] == cells).all(), (sim.agents.names[i], a)
    moved = dist > 0
    # the recorded heading after a move is the direction of that move
    d = np.diff(pos, axis=0)
    vec = np.array([[0, -1], [0, 1], [-1, 0], [1, 0]])
    h = heads[1:][moved]
    assert (np.sign(d[moved]) == vec[h]).all()
    # all four actions occur in the expert world over 1000 steps
    assert set(np.unique(realised)) == {0, 1, 2, 3}


def test_goal_reached_wait_then_new_trip(long_run):
    buf = long_run.buffer
    pos, goals, reached = buf.array("positions"), buf.array("goals"), buf.array("reached")
    events = np.argwhere(reached)
    assert len(events) > 10
    for k, i in events:
        if k + 3 >= buf.num_states:
            continue
        assert (pos[k, i] == goals[k, i]).all()
        assert (pos[k + 1, i] == pos[k, i]).all() and (pos[k + 2, i] == pos[k, i]).all()  # waits two steps
        assert not (goals[k + 3, i] == goals[k, i]).all()                                 # new trip at k+2


def test_fired_clause_matches_decision(long_run):
    buf = long_run.buffer
    clauses = buf.meta["clauses"]
    fired, decided, holds = buf.array("fired"), buf.array("decided"), buf.array("holds")
    names = ("Slow", "Normal", "Fast", "Stop")
    ks, iis = np.nonzero(fired >= 0)
    assert len(ks) > 100
    for k, i in zip(ks[:2000], iis[:2000]):
        assert clauses[fired[k, i]]["head"] == names[decided[k, i]]
    # no clause fired ⇔ the decision is the default Normal (nothing derived for the agent's action set)
    none = fired < 0
    assert (decided[none] == Action.NORMAL).all()
    assert holds.shape[2] == 4


def test_engines_identical_episode(expert_cfg):
    a = Simulation(expert_cfg, seed=11, engine="compiled")
    b = Simulation(expert_cfg, seed=11, engine="z3")
    for _ in range(25):
        a.step(), b.step()
    for f in ("positions", "holds", "decided", "fired", "witness"):
        assert np.array_equal(a.buffer.array(f), b.buffer.array(f)), f


def test_easy_mode_has_no_slow_or_fast_decisions():
    sim = Simulation(load_mode(MODES / "sim_easy.yaml"), seed=3)
    sim.run(150)
    decided = sim.buffer.array("decided")
    assert set(np.unique(decided)) <= {Action.NORMAL, Action.STOP}
    assert (decided == Action.STOP).any()


def test_overrides_force_an_agent(expert_cfg):
    sim = Simulation(expert_cfg, seed=4)
    start = sim.positions[0].copy()
    for _ in range(5):
        sim.step(overrides={0: Action.STOP})
    assert (sim.positions[0] == start).all()
    assert (sim.buffer.array("decided")[:, 0] == Action.STOP).all()
    from core.sim.episode import FIRED_FORCED

    assert (sim.buffer.array("fired")[:, 0] == FIRED_FORCED).all()   # recorded as forced, not as a default


def test_generated_city_many_agents():
    city = generate_city(3, blocks=(3, 4))
    agents = random_agent_set(60, seed=3)
    cfg0 = load_mode(MODES / "sim_expert.yaml")
    cfg = SimConfig(city=city, agents=agents, ontology=cfg0.ontology, rules=cfg0.rules, name="generated")
    sim = Simulation(cfg, seed=1)
    sim.run(80)
    pos = sim.buffer.array("positions").astype(int)
    for i, kind in enumerate(sim.kinds):
        net = city.walkable if kind == Kind.PEDESTRIAN else city.drivable
        assert net[pos[:, i, 0], pos[:, i, 1]].all()
    assert (sim.buffer.array("realised") != Action.STOP).any()


def test_episode_file_round_trip(tmp_path, expert_cfg):
    sim = Simulation(expert_cfg, seed=9)
    sim.run(30)
    path = sim.buffer.save(tmp_path / "ep.npz")
    ep = load_episode(path)
    assert ep.num_steps == 30
    for k in (0, 17, 30):
        assert np.array_equal(ep.snapshot(k).positions, sim.buffer.snapshot(k).positions)
    assert ep.meta["clauses"] == sim.buffer.meta["clauses"]
    cells, idx = ep.plan(30, 0)
    assert (cells[idx] == ep.snapshot(30).positions[0]).all()


def test_empty_agent_set_runs_and_saves(tmp_path):
    from core.agents.spec import AgentSet
    from core.sim.episode import load_episode

    cfg = load_mode(MODES / "sim_easy.yaml").with_agents(AgentSet(()))
    sim = Simulation(cfg, seed=0)
    sim.run(4)
    ep = load_episode(sim.buffer.save(tmp_path / "empty.npz"))
    assert ep.num_steps == 4 and ep.snapshot(4).positions.shape == (0, 2)


def test_vap_modes_use_the_vis_sampling_variant():
    cfg = load_mode(MODES / "vap_hard.yaml")
    assert cfg.sampling == "vis"
    sim = Simulation(cfg, seed=0)
    # vis car candidates, region 100 (docs/reference.md#parity-figures)
    assert int(sim.sampler.candidates(Kind.CAR).sum()) == 100
    lanes = sim.city.lane_graph.lane_cells()
    for i, kind in enumerate(sim.kinds):
        if kind == Kind.CAR:
            assert lanes[tuple(sim.positions[i])], "vis cars start on a lane line"


def test_long_run_agents_stay_on_their_planned_routes(long_run):
    """Every recorded state has every agent on its current plan, and every plan stays on the agent's network
    (car plans are lane-graph routes on drivable cells, pedestrian plans A* walks on walkable cells)."""
    sim, buf = long_run, long_run.buffer
    pos = buf.array("positions").astype(int)
    for i, kind in enumerate(sim.kinds):
        net = sim.city.drivable if kind == Kind.CAR else sim.city.walkable
        for t in range(0, buf.num_states, 7):
            cells, idx = buf.plan(t, i)
            assert (cells[idx] == pos[t, i]).all(), (sim.agents.names[i], t)
            assert net[cells[:, 0], cells[:, 1]].all(), (sim.agents.names[i], t)
            steps = np.abs(np.diff(cells, axis=0)).sum(axis=1)
            assert (steps == 1).all(), "plans move one cell at a time"
