"""An SPF start state: everything needed to put a simulation back exactly where an episode begins.

Why explicit arrays instead of only a seed: an evaluation episode must replay identically for years, even if
start/goal sampling or the planners change. The state holds every agent's position, heading, goal, planned path
and place on it, goal-waiting flags, priorities and concepts; ``seed`` re-seeds the environment's generator
after the state is restored, so the rollout (CollidingClose coins, background choices, later trips) is fixed
too. Same seed + same state + same policy → the same episode (that is how the oracle reaches TSR = 1.00 on
the shipped sets: each episode was accepted by running exactly this replay).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.base.world import KNOWN_CONCEPTS, AgentTable

__all__ = ["StartState"]


@dataclass(frozen=True)
class StartState:
    positions: np.ndarray       # int32 [N, 2]
    headings: np.ndarray        # int8 [N]
    goals: np.ndarray           # int32 [N, 2]
    path_index: np.ndarray      # int32 [N]
    reach_goal: np.ndarray      # bool [N]
    wait: np.ndarray            # int32 [N]
    paths: tuple[np.ndarray, ...]  # int32 [L_i, 2] per agent
    priorities: np.ndarray      # int32 [N]
    concepts: dict[str, np.ndarray] = field(default_factory=dict)  # name -> bool [N]
    seed: int = 0               # the environment's generator is re-seeded with this after restoring
    label: dict = field(default_factory=dict)  # episode-set labels: concept, oracle_step, target_action, ...

    @classmethod
    def capture(cls, sim, seed: int, label: dict | None = None) -> "StartState":
        ag = sim.agents
        return cls(np.array(sim.positions, np.int32), np.array(sim.headings, np.int8),
                   np.array(sim.goals, np.int32), np.array(sim.path_index, np.int32),
                   np.array(sim.reach_goal, bool), np.array(sim.wait, np.int32),
                   tuple(np.array(p, np.int32) for p in sim.paths), np.array(ag.priorities, np.int32),
                   {c: np.array(ag.concepts[c], bool) for c in KNOWN_CONCEPTS}, int(seed), dict(label or {}))

    def apply(self, sim) -> None:
        """Put ``sim`` into this state (same agents required); its generator is left to the caller."""
        n = len(sim.agents)
        if len(self.positions) != n:
            raise ValueError(f"start state has {len(self.positions)} agents, the simulation {n}")
        base = sim.config.agents.table()
        table = AgentTable(base.names, base.kinds.copy(), np.array(self.priorities, np.int32),
                           {c: np.array(self.concepts.get(c, np.zeros(n, bool)), bool) for c in KNOWN_CONCEPTS})
        sim.set_agents(table)
        for i in range(n):
            sim.set_trip(i, self.paths[i][0], self.goals[i], self.paths[i])
        sim.positions[:] = self.positions
        sim.headings[:] = self.headings
        sim.path_index[:] = self.path_index
        sim.reach_goal[:] = self.reach_goal
        sim.wait[:] = self.wait
        sim.goals_reached[:] = 0
        sim.step_index = 0

    def concept_of(self, i: int) -> str:
        """The concept label of agent ``i`` (first flag set, ``normal`` when none)."""
        for c in KNOWN_CONCEPTS:
            if c in self.concepts and self.concepts[c][i]:
                return c
        return "normal"
