"""Checkpoints of a running :class:`~core.sim.simulation.Simulation` for branching from a past step.

Why: the studio lets the user go back to step k and continue from there ("branch", discarding the recorded
future), and rolls a step that failed back to the last good state. Re-simulating k steps from the seed is O(k);
instead the worker captures the simulator's mutable state (a few small arrays and the RNG state: cheap)
every ``every`` steps, restores the nearest one at or before step k and replays the few steps after it. Restoring
and stepping again reproduces the original run exactly (a test checks it), so a branch only diverges where the
user changes something (an action override, a new seed). A checkpoint costs about as much memory as the recording
of a step, so one after every step would be a large share of the studio's memory per recorded step (bench/gui.py
measures it): the studio keeps one every few steps and replays at most ``every - 1`` steps on a seek.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Array attributes of Simulation that change while it runs (copied on capture).
_ARRAYS = ("positions", "headings", "goals", "path_index", "plan_id", "reach_goal", "wait", "goals_reached")


@dataclass(frozen=True)
class SimCheckpoint:
    step_index: int
    arrays: dict[str, np.ndarray]
    paths: tuple[np.ndarray, ...]
    agents: Any
    rng_state: dict
    num_timings: int
    extra: dict[str, Any]


def capture(sim) -> SimCheckpoint:
    """Snapshot the mutable state of ``sim`` (call between steps, in the thread that owns it)."""
    arrays = {name: np.array(getattr(sim, name), copy=True) for name in _ARRAYS if hasattr(sim, name)}
    extra = {}
    for name in getattr(sim, "checkpoint_extra", ()):  # simulators may name more state to keep
        extra[name] = copy.deepcopy(getattr(sim, name))
    return SimCheckpoint(int(sim.step_index), arrays, tuple(sim.paths), sim.agents,
                         copy.deepcopy(sim.rng.bit_generator.state), len(getattr(sim, "step_seconds", ())), extra)


def restore(sim, cp: SimCheckpoint) -> None:
    """Put ``sim`` back into the captured state and cut its episode buffer to match."""
    for name, arr in cp.arrays.items():
        getattr(sim, name)[...] = arr
    sim.paths = list(cp.paths)
    sim.agents = cp.agents
    sim.step_index = cp.step_index
    sim.rng.bit_generator.state = copy.deepcopy(cp.rng_state)
    if hasattr(sim, "step_seconds"):
        del sim.step_seconds[cp.num_timings:]
    for name, value in cp.extra.items():
        setattr(sim, name, copy.deepcopy(value))
    if getattr(sim, "buffer", None) is not None and sim.buffer.num_steps >= cp.step_index:
        # also when no step was completed after the checkpoint: a step that failed half-way may have added plans
        # (new trips) that belong to no recorded state; truncate drops them so plan ids stay as in a clean run
        sim.buffer.truncate(cp.step_index)


class CheckpointStore:
    """Checkpoints by step: every step by default; ``every`` > 1 keeps one for each multiple of ``every`` (step
    0 always), which keeps memory down; ``nearest(k)`` returns the latest checkpoint at or before step k and the
    caller replays the difference (:func:`replay_to`).

    ``max_replay`` bounds the replay work instead where steps are costly (a big city): each step offered with its
    ``cost`` (the studio uses the number of agents, which a step's time grows with) adds up, and a checkpoint is
    also kept once the steps since the last one cost ``max_replay``. A deterministic measure, not the clock: where
    the checkpoints fall never depends on how busy the machine is.
    """

    def __init__(self, every: int = 1, max_replay: float | None = None) -> None:
        self.every = max(1, int(every))
        self.max_replay = max_replay
        self._cps: dict[int, SimCheckpoint] = {}
        self._since = 0.0   # cost of the steps since the last checkpoint

    def add(self, sim, cost: float = 0.0) -> None:
        """Offer the state after a step (``cost``: what replaying that step costs); kept when one is due."""
        k = int(sim.step_index)
        self._since += cost
        if k % self.every == 0 or (self.max_replay is not None and self._since >= self.max_replay):
            self._cps[k] = capture(sim)
            self._since = 0.0

    def nearest(self, k: int) -> SimCheckpoint | None:
        keys = [s for s in self._cps if s <= k]
        return self._cps[max(keys)] if keys else None

    def truncate(self, k: int) -> None:
        """Forget checkpoints after step k (they belong to a discarded future)."""
        for s in [s for s in self._cps if s > k]:
            del self._cps[s]
        self._since = 0.0

    def clear(self) -> None:
        self._cps.clear()

    def __len__(self) -> int:
        return len(self._cps)


def replay_to(sim, store: CheckpointStore, k: int, overrides=None, cost: float = 0.0) -> int:
    """Put ``sim`` into state ``k``: restore the nearest checkpoint at or before k, forget the later ones and
    replay the steps in between (``overrides(step) -> dict | None`` gives the forced actions of each step, as
    when they were first simulated; ``cost`` per step as in :meth:`CheckpointStore.add`). Returns the number of
    steps replayed. Raises LookupError without a checkpoint at or before k."""
    cp = store.nearest(k)
    if cp is None:
        raise LookupError(f"no checkpoint at or before step {k}")
    restore(sim, cp)
    store.truncate(cp.step_index)
    replayed = 0
    while sim.step_index < k:
        sim.step((overrides(sim.step_index) if overrides is not None else None) or None)
        store.add(sim, cost)
        replayed += 1
    return replayed
