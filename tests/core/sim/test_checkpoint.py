"""Restoring a checkpoint reproduces the recorded run (bundled default city)."""
from __future__ import annotations

import numpy as np

from core.sim.episode import STATE_FIELDS, STEP_FIELDS


def test_restoring_a_checkpoint_reproduces_the_run(config):
    from core.sim.checkpoint import CheckpointStore, restore
    from core.sim.simulation import Simulation

    s = Simulation(config, seed=11)
    store = CheckpointStore()
    store.add(s)
    for _ in range(30):
        s.step()
        store.add(s)
    reference = {f: np.array(s.buffer.array(f)) for f in STATE_FIELDS + STEP_FIELDS}
    cp = store.nearest(12)
    assert cp.step_index == 12
    restore(s, cp)
    assert s.buffer.num_steps == 12 and s.step_index == 12
    for _ in range(18):
        s.step()
    for f, arr in reference.items():
        assert np.array_equal(np.asarray(s.buffer.array(f)), arr), f
    store.truncate(5)
    assert store.nearest(20).step_index == 5
