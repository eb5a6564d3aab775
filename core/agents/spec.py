"""Agent specifications: who is in the city (kind, id, concepts, priority), independent of where they are."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.base.codes import Kind
from core.base.world import AgentTable


@dataclass(frozen=True)
class AgentSpec:
    """One agent of an agent set. ``name`` is ``Car_<id>`` / ``Pedestrian_<id>`` as in the reference."""

    kind: Kind
    id: int
    priority: int
    concepts: tuple[str, ...] = ()
    size: int = 1  # carried for the reference format; every agent occupies one cell
    #: the first trip's start and goal cells ``(row, col)`` chosen in the agent editor; None: drawn by the
    #: simulator like any start/goal (later trips are always drawn)
    start: tuple[int, int] | None = None
    goal: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return f"{self.kind.label}_{self.id}"


@dataclass(frozen=True)
class AgentSet:
    """An ordered list of agents. Order matters: it is the layer order of the reference (ties, SPF ego)."""

    agents: tuple[AgentSpec, ...]
    source: str | None = field(default=None, compare=False)

    def __len__(self) -> int:
        return len(self.agents)

    def __iter__(self):
        return iter(self.agents)

    @property
    def placed(self) -> bool:
        """Whether any agent has a chosen start or goal (the simulator then uses them for the first trip)."""
        return any(a.start is not None or a.goal is not None for a in self.agents)

    def table(self) -> AgentTable:
        return AgentTable.build([a.name for a in self.agents], [int(a.kind) for a in self.agents],
                                [a.priority for a in self.agents], [a.concepts for a in self.agents])
