"""What grounding knows about the agents themselves, whatever they do: kinds, priorities, the semantic unary rows
and each CollidingClose reach.

Why a module of its own: these arrays depend on the agent table only, which rarely changes within an episode, so
they are built once per table (:class:`AgentStaticCache`) and shared by the coin draws (core/logic/grounding/coins.py)
and the truth tables of every step (core/logic/grounding/predicate_tables.py).
"""
from __future__ import annotations

import threading

import numpy as np

from core.base.codes import Kind
from core.base.world import AgentTable
from core.logic.grounding.index import PredicateIndex
from core.logic.lang.ontology import Predicate
from core.logic.lang.registry import CONCEPT_ORDER

__all__ = ["AgentStatic", "AgentStaticCache", "collide_range"]

_CAR = int(Kind.CAR)
_PED = int(Kind.PEDESTRIAN)


def collide_range(pred: Predicate, agents: AgentTable) -> np.ndarray:
    """Reach per agent: the first concept (tiro, bus, ambulance, old, young, police, reckless) with an entry
    in the range table, else the kind's entry (docs/reference.md#collisions)."""
    table = pred.params["range"]
    kinds = np.asarray(agents.kinds)
    reach = np.where(kinds == _CAR, float(table["car"]), float(table["pedestrian"]))
    done = np.zeros(len(agents), dtype=bool)
    for concept in CONCEPT_ORDER:
        if concept in table and concept in agents.concepts:
            has = np.asarray(agents.concepts[concept], dtype=bool) & ~done
            reach = np.where(has, float(table[concept]), reach)
            done |= has
    return reach


class AgentStatic:
    """Per-agent-table arrays reused across steps."""

    def __init__(self, index: PredicateIndex, agents: AgentTable) -> None:
        self.agents = agents
        n = len(agents)
        unary = index.ontology.unary
        self.kinds = np.asarray(agents.kinds, dtype=np.int64)
        self.is_car = self.kinds == _CAR
        self.is_ped = self.kinds == _PED
        self.priority = np.asarray(agents.priorities, dtype=np.int32)

        def concept(name: str) -> np.ndarray:
            arr = agents.concepts.get(name)
            return np.asarray(arr, dtype=bool) if arr is not None else np.zeros(n, dtype=bool)

        self.semantic: dict[str, np.ndarray] = {}
        for p in unary:
            g = p.grounding
            if g is None:
                v = np.zeros(n, dtype=bool)
            elif g == "is_pedestrian":
                v = self.is_ped
            elif g == "is_car":
                v = self.is_car
            elif g in ("is_ambulance", "is_bus", "is_police", "is_tiro", "is_reckless"):
                v = ~self.is_ped & concept(g[3:])
            elif g in ("is_old", "is_young"):
                v = ~self.is_car & concept(g[3:])
            else:
                continue
            self.semantic[p.name] = v
        # every unary predicate as one [U, N] array (ontology order) for gathers: the semantic rows are fixed by
        # the agent table; the spatial rows (intersections) are filled in per step by PredicateTables.unary_rows
        self.unary_rows = np.zeros((len(unary), n), dtype=bool)
        for i, p in enumerate(unary):
            if p.name in self.semantic:
                self.unary_rows[i] = self.semantic[p.name]
        self.unary_rows.setflags(write=False)
        self.reach = {p.name: collide_range(p, agents) for p in index.colliding}
        #: floor(reach²): d2 <= reach² ⟺ d2 <= floor(reach²) for integer d2
        self.reach2 = {k: np.floor(v * v).astype(np.int64) for k, v in self.reach.items()}


class AgentStaticCache:
    """The :class:`AgentStatic` of the agent tables grounded last, by table identity; thread-safe.

    Two entries: one grounder serves a running simulation and the inspector's one-view worlds (each a table of its
    own, core/view/inspect.py), and a view must not evict the simulation's table every time it is shown."""

    SIZE = 2

    def __init__(self, index: PredicateIndex) -> None:
        self.index = index
        self._entries: tuple[AgentStatic, ...] = ()   # most recently used first; replaced whole, never mutated
        self._lock = threading.Lock()

    def get(self, agents: AgentTable) -> AgentStatic:
        entries = self._entries
        if entries and entries[0].agents is agents:
            return entries[0]
        hit = next((st for st in entries if st.agents is agents), None)
        st = hit if hit is not None else AgentStatic(self.index, agents)
        with self._lock:
            rest = tuple(e for e in self._entries if e is not st)
            self._entries = (st,) + rest[: self.SIZE - 1]
        return st
