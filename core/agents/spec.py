"""Agent specifications: who is in the city (kind, id, concepts, priority), independent of where they are."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..codes import Kind
from ..world import AgentTable


@dataclass(frozen=True)
class AgentSpec:
    """One agent of an agent set. ``name`` is ``Car_<id>`` / ``Pedestrian_<id>`` as in the reference."""

    kind: Kind
    id: int
    priority: int
    concepts: tuple[str, ...] = ()
    size: int = 1  # carried for the reference format; every agent occupies one cell

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

    def table(self) -> AgentTable:
        return AgentTable.build([a.name for a in self.agents], [int(a.kind) for a in self.agents],
                                [a.priority for a in self.agents], [a.concepts for a in self.agents])
