"""Immutable per-step world state shared by the simulator, the logic core, tasks, rendering and the GUI.

Why a separate module: the logic core grounds predicates on a :class:`WorldSnapshot`, the simulator produces
them, the studio receives them through signals. Keeping the type here (with no behaviour) lets each of those
depend on this module only, not on each other.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from core.base.codes import Kind

#: Boolean concept flags known to the core, with the agent kind they apply to (docs/reference.md#agent-files).
KNOWN_CONCEPTS: dict[str, Kind] = {
    "old": Kind.PEDESTRIAN,
    "young": Kind.PEDESTRIAN,
    "ambulance": Kind.CAR,
    "bus": Kind.CAR,
    "police": Kind.CAR,
    "tiro": Kind.CAR,
    "reckless": Kind.CAR,
}


@dataclass(frozen=True)
class AgentTable:
    """Static description of the N agents of a world, in agent (YAML) order.

    ``concepts`` maps every known concept name to a bool array ``[N]`` (absent concepts are all False).
    """

    names: tuple[str, ...]
    kinds: np.ndarray          # int8 [N], Kind values
    priorities: np.ndarray     # int32 [N], smaller = higher priority; pedestrians 0
    concepts: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.names)
        for arr in (self.kinds, self.priorities):
            arr.setflags(write=False)
            if arr.shape != (n,):
                raise ValueError("AgentTable arrays must have one entry per agent")
        for name in KNOWN_CONCEPTS:
            if name not in self.concepts:
                object.__setattr__(self, "concepts", {**self.concepts, name: np.zeros(n, dtype=bool)})
        for arr in self.concepts.values():
            arr.setflags(write=False)

    def __len__(self) -> int:
        return len(self.names)

    @property
    def is_car(self) -> np.ndarray:
        return self.kinds == Kind.CAR

    @property
    def is_pedestrian(self) -> np.ndarray:
        return self.kinds == Kind.PEDESTRIAN

    def concept_names(self, i: int) -> list[str]:
        """The concept flags set on agent ``i`` (in KNOWN_CONCEPTS order)."""
        return [c for c, arr in self.concepts.items() if arr[i]]

    def index(self, name: str) -> int:
        return self.names.index(name)

    @classmethod
    def build(cls, names: Sequence[str], kinds: Sequence[int], priorities: Sequence[int],
              concept_lists: Sequence[Sequence[str]]) -> "AgentTable":
        n = len(names)
        concepts = {c: np.zeros(n, dtype=bool) for c in KNOWN_CONCEPTS}
        for i, cs in enumerate(concept_lists):
            for c in cs:
                concepts.setdefault(c, np.zeros(n, dtype=bool))[i] = True
        return cls(tuple(names), np.asarray(kinds, dtype=np.int8), np.asarray(priorities, dtype=np.int32),
                   concepts)

    def with_agent(self, i: int, *, priority: int | None = None,
                   concepts: Sequence[str] | None = None) -> "AgentTable":
        """A copy with agent ``i``'s priority and/or concept flags replaced (used by SPF resets)."""
        pr = self.priorities.copy()
        if priority is not None:
            pr[i] = priority
        cs = {k: v.copy() for k, v in self.concepts.items()}
        if concepts is not None:
            for arr in cs.values():
                arr[i] = False
            for c in concepts:
                cs.setdefault(c, np.zeros(len(self), dtype=bool))[i] = True
        return AgentTable(self.names, self.kinds.copy(), pr, cs)


@dataclass(frozen=True)
class WorldSnapshot:
    """Positions and headings of every agent at the start of a step (before anyone moves).

    ``headings`` holds :class:`core.base.codes.Heading` values (-1 = no move yet). Arrays are read-only so a
    snapshot can be handed to another thread safely.
    """

    step: int
    agents: AgentTable
    positions: np.ndarray      # int32 [N, 2] (row, col)
    headings: np.ndarray       # int8 [N]

    def __post_init__(self) -> None:
        n = len(self.agents)
        if self.positions.shape != (n, 2) or self.headings.shape != (n,):
            raise ValueError("snapshot arrays must have one entry per agent")
        self.positions.setflags(write=False)
        self.headings.setflags(write=False)

    def __len__(self) -> int:
        return len(self.agents)
