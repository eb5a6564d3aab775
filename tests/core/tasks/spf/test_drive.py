"""A trained SPF policy driving a chosen car from a step of a recorded episode (core.tasks.spf.drive): the forced
actions it returns make a worker-style re-simulation repeat the branch exactly, the oracle/judge are the policy's
mode's rules on the observation it saw, and a policy whose layout does not fit the project's ontology is refused."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.spf_models import tiny_runs

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def recording():
    from core.sim.config import load_mode
    from core.studio.apply import new_simulation

    cfg = load_mode("configs/modes/sim_easy.yaml")
    # the user forced Car_2 to Stop from step 3 and released it at step 12 (sticky entries, like the studio's)
    inter = [{"step": 3, "agent": 3, "action": 3}, {"step": 12, "agent": 3, "action": None}]
    sim = new_simulation(cfg, seed=5, record=True)
    from core.tasks.spf.drive import _overrides

    while sim.step_index < 40:
        sim.step(_overrides(inter, sim.step_index, len(sim.agents)) or None)
    return cfg, sim.buffer, inter


def _new_sim(cfg, meta, seed):
    """A new simulation of the recording at state 0, as the studio's worker builds it."""
    from core.studio.apply import new_simulation, start_config

    return new_simulation(start_config(cfg, dict(meta)), seed=seed, record=False)


def _resimulate(cfg, meta, seed, entries, upto):
    """What the studio's worker does with the recording's forced actions: re-simulate from step 0."""
    from core.studio.apply import new_simulation, start_config
    from core.tasks.spf.drive import _overrides

    sim = new_simulation(start_config(cfg, meta), seed=seed, record=True)
    while sim.step_index < upto:
        sim.step(_overrides(entries, sim.step_index, len(sim.agents)) or None)
    return sim.buffer


def test_a_branch_is_repeated_exactly_by_its_forced_actions(recording):
    from core.tasks.spf.drive import drive_branch
    from core.tasks.spf.learning.run import load_run

    cfg, hist, inter = recording
    pol = load_run(tiny_runs()[0])
    ego, k = 0, 8                                            # Car_1 from step 8 (Car_2 is still forced then)
    d = drive_branch(_new_sim(cfg, hist.meta, 5), inter, k, ego, pol, max_steps=25)
    n = len(d.episode.steps)
    assert 1 <= n <= 25 and d.end == k + n
    assert d.cells[0] == tuple(hist.array("positions")[k][ego])     # starts where the recording stood
    # the entries start at k with the model's first action and hand the ego back to the rules at the end
    assert d.entries[0] == {"step": k, "agent": ego, "action": d.episode.steps[0].model_action}
    assert d.entries[-1] == {"step": d.end, "agent": ego, "action": None}
    acts = [s.model_action for s in d.episode.steps]
    assert len(d.entries) - 1 == 1 + sum(a != b for a, b in zip(acts, acts[1:]))   # one entry per change
    replay = _resimulate(cfg, hist.meta, 5, [e for e in inter if e["step"] < k] + d.entries, d.end)
    assert d.matches(replay.array("positions")) is None
    np.testing.assert_array_equal(replay.array("positions")[:k + 1], hist.array("positions")[:k + 1])
    # the ego's recorded decisions in the replay are the model's actions, recorded as forced (fired = -2)
    assert list(replay.array("decided")[k:d.end, ego]) == acts
    assert (replay.array("fired")[k:d.end, ego] == -2).all()
    # without the model's actions the re-simulation is not the branch (the check can fail)
    plain = _resimulate(cfg, hist.meta, 5, inter, d.end)
    if list(plain.array("decided")[k:d.end, ego]) != acts:
        assert d.matches(plain.array("positions")) is not None or n == 1


def test_the_oracle_and_views_are_the_policy_modes_rules_on_what_it_saw(recording):
    from core.tasks.spf.drive import drive_branch
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.run import load_run

    cfg, hist, inter = recording
    pol = load_run(tiny_runs()[0])
    d = drive_branch(_new_sim(cfg, hist.meta, 5), inter, 0, 0, pol, max_steps=10)
    env = SPFEnv("easy", "test")
    for s, v, obs in zip(d.episode.steps, d.views, d.observations):
        assert v.ego == 0 and v.agents[0] == 0 and v.names == tuple(x for x in s.entities if x != "PH")
        r0, r1, c0, c1 = v.box
        assert all(r0 <= r <= r1 and c0 <= c <= c1 for r, c in v.cells)   # observed entities lie in its view
        assert s.position == v.cells[0]
        assert "IsCar(Car_1)" in s.facts
        # the SPF environment's own oracle and judge on that observation say the same
        assert s.oracle_action == int(env.expert.decide(obs, len(v.agents)).action)
        assert bool(s.violations) == bool(env.judge.check(obs, len(v.agents), s.model_action).violated)
    assert d.episode.result.episode == 0 and len(d.episode.steps) == len(d.views)


def test_a_policy_for_another_layout_is_refused_by_name(recording):
    from core.base.errors import LogiCityError
    from core.sim.config import load_mode
    from core.tasks.spf.drive import branch_problem, drive_branch
    from core.tasks.spf.learning.run import load_run

    cfg, hist, inter = recording
    full = load_mode("configs/modes/default.yaml")          # the full ontology: 205 values, not easy's 85
    pol = load_run(tiny_runs()[0])
    with pytest.raises(LogiCityError, match="reads another observation than this project's ontology gives"):
        drive_branch(_new_sim(full, hist.meta, 5), [], 0, 0, pol, max_steps=3)
    ped = next(i for i, n in enumerate(hist.agents.names) if n.startswith("Pedestrian"))
    assert "is not a car" in branch_problem(cfg, hist, 0, ped)
    assert "select the agent" in branch_problem(cfg, hist, 0, None)
    assert branch_problem(cfg, hist, 3, 0) is None
