"""Checkpoints of a running :class:`~core.sim.simulation.Simulation` for branching from a past step.

Why: the studio lets the user go back to step k and continue from there ("branch", discarding the recorded
future), and rolls a step that failed back to the last good state. Re-simulating k steps from the seed is O(k);
instead the worker captures the simulator's mutable state (a few small arrays and the RNG state) every ``every``
steps, restores the nearest one at or before step k and replays the few steps after it. Restoring and stepping
again reproduces the original run exactly (a test checks it), so a branch only diverges where the user changes
something (an action override, a new seed). A checkpoint costs about as much memory as the recording of a step,
so the studio keeps one every few steps and replays at most ``every - 1`` steps on a seek.

What a checkpoint holds is :class:`SimCheckpoint`, field by field; :func:`capture` and :func:`restore` name every
one of them. Everything else of a simulation is fixed when it is built (city, config, planners, engines) or set
again by :meth:`~core.sim.simulation.Simulation.step` from the state captured here (the agent and rule schedules
in charge at a step), so state a simulation gains that changes while it runs needs a field here
(tests/core/sim/test_checkpoint.py checks that every array a step changes has one).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from core.base.world import AgentTable
from core.sim.simulation import Simulation

__all__ = ["SimCheckpoint", "capture", "restore", "CheckpointStore", "replay_to"]


@dataclass(frozen=True)
class SimCheckpoint:
    """The mutable state of a simulation between two steps (the arrays are copies, read-only)."""

    step_index: int
    positions: np.ndarray       # int32 [N, 2]
    headings: np.ndarray        # int8 [N]
    goals: np.ndarray           # int32 [N, 2]
    path_index: np.ndarray      # int32 [N]: each agent's index on its path
    plan_id: np.ndarray         # int32 [N]: each agent's plan in the episode buffer
    reach_goal: np.ndarray      # bool [N]: on its goal, waiting for a new trip
    wait: np.ndarray            # int32 [N]: steps still to wait on the goal
    goals_reached: np.ndarray   # int64 [N]
    paths: tuple[np.ndarray, ...]   # shared, not copied: a simulation replaces a path, never changes one
    agents: AgentTable          # immutable
    rng_state: Mapping[str, Any]   # the generator's bit-generator state
    num_timings: int            # how many step times ``step_seconds`` held


def _frozen_copy(a: np.ndarray) -> np.ndarray:
    out = np.array(a, copy=True)
    out.setflags(write=False)
    return out


def capture(sim: Simulation) -> SimCheckpoint:
    """Snapshot the mutable state of ``sim`` (call between steps, in the thread that owns it)."""
    return SimCheckpoint(
        step_index=int(sim.step_index), positions=_frozen_copy(sim.positions), headings=_frozen_copy(sim.headings),
        goals=_frozen_copy(sim.goals), path_index=_frozen_copy(sim.path_index), plan_id=_frozen_copy(sim.plan_id),
        reach_goal=_frozen_copy(sim.reach_goal), wait=_frozen_copy(sim.wait),
        goals_reached=_frozen_copy(sim.goals_reached), paths=tuple(sim.paths), agents=sim.agents,
        rng_state=copy.deepcopy(sim.rng.bit_generator.state), num_timings=len(sim.step_seconds))


def restore(sim: Simulation, cp: SimCheckpoint) -> None:
    """Put ``sim`` back into the captured state and cut its episode buffer to match. The arrays are written in
    place (anything holding a simulation's array keeps seeing the simulation's state)."""
    sim.step_index = cp.step_index
    sim.positions[...] = cp.positions
    sim.headings[...] = cp.headings
    sim.goals[...] = cp.goals
    sim.path_index[...] = cp.path_index
    sim.plan_id[...] = cp.plan_id
    sim.reach_goal[...] = cp.reach_goal
    sim.wait[...] = cp.wait
    sim.goals_reached[...] = cp.goals_reached
    sim.paths = list(cp.paths)
    sim.agents = cp.agents
    sim.rng.bit_generator.state = copy.deepcopy(cp.rng_state)
    del sim.step_seconds[cp.num_timings:]
    if sim.buffer is not None and sim.buffer.num_steps >= cp.step_index:
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

    def add(self, sim: Simulation, cost: float = 0.0) -> None:
        """Offer the state after a step (``cost``: what replaying that step costs); kept when one is due."""
        k = int(sim.step_index)
        self._since += cost
        if k % self.every == 0 or (self.max_replay is not None and self._since >= self.max_replay):
            self._cps[k] = capture(sim)
            self._since = 0.0

    def steps(self) -> list[int]:
        """The steps that have a checkpoint, in order."""
        return sorted(self._cps)

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


def replay_to(sim: Simulation, store: CheckpointStore, k: int,
              overrides: Callable[[int], Mapping | None] | None = None, cost: float = 0.0) -> int:
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
