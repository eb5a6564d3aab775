"""Sparse checkpoints: one every ``every`` steps or once a replay budget is used up, and
``replay_to`` reproduces any state from the nearest one, exactly as the original run."""
from __future__ import annotations

import numpy as np

from core.sim.checkpoint import CheckpointStore, replay_to
from core.sim.episode import STATE_FIELDS, STEP_FIELDS
from core.sim.simulation import Simulation


def test_every_k_steps_and_replay_to_any_state_reproduces_the_run(config):
    s = Simulation(config, seed=5)
    store = CheckpointStore(every=10)
    store.add(s)
    for _ in range(34):
        s.step()
        store.add(s)
    assert store.steps() == [0, 10, 20, 30]
    reference = {f: np.array(s.buffer.array(f)) for f in STATE_FIELDS + STEP_FIELDS}
    plans = len(s.buffer.array("plan_agent"))
    assert replay_to(s, store, 27) == 7                      # restored step 20, replayed 21..27
    assert s.step_index == 27 and s.buffer.num_steps == 27 and store.steps() == [0, 10, 20]
    while s.step_index < 34:
        s.step()
        store.add(s)
    for f, arr in reference.items():
        assert np.array_equal(np.asarray(s.buffer.array(f)), arr), f
    assert len(s.buffer.array("plan_agent")) == plans
    assert replay_to(s, store, 30) == 0 and s.step_index == 30  # a checkpoint step: nothing to replay


def test_a_replay_budget_adds_checkpoints_where_steps_are_costly(config):
    s = Simulation(config, seed=5)
    store = CheckpointStore(every=10, max_replay=50)
    store.add(s)
    for _ in range(12):
        s.step()
        store.add(s, 20)                                     # e.g. 20 agents moved per step
    assert store.steps() == [0, 3, 6, 9, 10]            # one once a cost of 50 is reached, and every 10th
    store.truncate(7)
    assert store.steps() == [0, 3, 6]
