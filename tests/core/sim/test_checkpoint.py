"""Restoring a checkpoint reproduces the recorded run (bundled default city), and a checkpoint holds every piece of
the simulation's state that a step changes."""
from __future__ import annotations

import dataclasses

import numpy as np

from core.sim.checkpoint import CheckpointStore, SimCheckpoint, capture, restore
from core.sim.episode import STATE_FIELDS, STEP_FIELDS
from core.sim.simulation import Simulation


def test_restoring_a_checkpoint_reproduces_the_run(config):
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


def test_every_array_a_step_changes_is_captured(config):
    """An array attribute of the simulation that changes while it runs and has no field in SimCheckpoint would be
    silently left as it is by a restore (and a branch would not replay the original run)."""
    s = Simulation(config, seed=3)
    before = {k: np.array(v) for k, v in vars(s).items() if isinstance(v, np.ndarray)}
    for _ in range(40):
        s.step()
    changed = {k for k, v in before.items() if not np.array_equal(v, vars(s)[k])}
    fields = {f.name for f in dataclasses.fields(SimCheckpoint)}
    assert changed and changed <= fields, sorted(changed - fields)


def test_a_checkpoint_is_a_copy_that_later_steps_leave_alone(config):
    s = Simulation(config, seed=4)
    cp = capture(s)
    positions = cp.positions.copy()
    s.run(10)
    assert np.array_equal(cp.positions, positions) and not cp.positions.flags.writeable
    restore(s, cp)
    assert np.array_equal(s.positions, positions) and s.step_index == 0 and s.positions.flags.writeable
