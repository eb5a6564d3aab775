"""Truth tables over candidate agent states, so the analysis can try thousands of placements without grounding
each one.

Why this is exact: every grounding predicate is a function of one agent (unary) or of one ordered pair
(binary), and an ego's domain is the set of agents inside its field-of-view box — also a pairwise test
(docs/rules.md, "Field of view and domains"). So the interpretation of any configuration of k agents taken
from a set of states is a gather from per-state and per-pair tables computed once by the real
:class:`~core.logic.grounding.grounder.Grounder` on a snapshot holding every state. Only two things depend on who the
agent is rather than where: the semantic predicates (kind, concepts) and HigherPri (priorities), which come from
an :class:`AgentType`; and CollidingClose coin flips, kept as a ``coin`` mask (the pair draws a coin; its value
is chosen per configuration). CollidingClose reach is taken by kind: an ontology whose range table has
concept entries (none of the bundled ones) is re-checked by the callers, who always verify by simulating.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from core.analysis.junction_states import AgentState
from core.base.codes import Kind
from core.base.world import KNOWN_CONCEPTS, AgentTable, WorldSnapshot
from core.logic.grounding.grounder import Grounder, TableInterpretation
from core.logic.lang.ontology import Ontology
from core.map.model import CityMap

__all__ = ["AgentType", "StateTables", "state_tables", "agent_types", "interpretation"]

_SPATIAL_UNARY = ("is_at_intersection", "is_in_intersection")
_GEOMETRIC = ("is_close", "next_to", "colliding_close", "left_of", "right_of")


@dataclass(frozen=True)
class AgentType:
    """Who an agent is: kind, concepts, priority (pedestrians 0)."""

    kind: Kind
    concepts: tuple[str, ...]
    priority: int

    @property
    def concept(self) -> str | None:
        return ", ".join(self.concepts) if self.concepts else None

    def label(self) -> str:
        parts = [self.kind.label]
        if self.concepts:
            parts.append(", ".join(self.concepts))
        if self.kind == Kind.CAR:
            parts.append(f"priority {self.priority}")
        return " ".join(parts)


def semantic_truth(onto: Ontology, pred: str, t: AgentType) -> bool:
    g = onto[pred].grounding
    if g == "is_car":
        return t.kind == Kind.CAR
    if g == "is_pedestrian":
        return t.kind == Kind.PEDESTRIAN
    if g is not None and g.startswith("is_") and g[3:] in KNOWN_CONCEPTS:
        return g[3:] in t.concepts and KNOWN_CONCEPTS[g[3:]] == t.kind
    return False


def agent_types(onto: Ontology, used: Sequence[str], max_cars: int) -> list[AgentType]:
    """The agent types that can make a difference to a program using predicates ``used``: each kind with no
    concept or one concept the program tests; car priorities 1..max_cars when it uses HigherPri, else 1."""
    groundings = (onto[p].grounding for p in used if not onto[p].is_action)
    concepts = {g[3:] for g in groundings if g and g[3:] in KNOWN_CONCEPTS}
    prio = any(onto[p].grounding == "higher_priority" for p in used if not onto[p].is_action)
    out: list[AgentType] = []
    for kind in (Kind.CAR, Kind.PEDESTRIAN):
        names = [None] + sorted(c for c in concepts if KNOWN_CONCEPTS[c] == kind)
        prios = range(1, max(1, max_cars) + 1) if (kind == Kind.CAR and prio) else [1 if kind == Kind.CAR else 0]
        out += [AgentType(kind, (c,) if c else (), p) for c in names for p in prios]
    return out


def _semantic_table(onto: Ontology, pred: str, types: Sequence[AgentType]) -> np.ndarray:
    return np.array([semantic_truth(onto, pred, t) for t in types], dtype=bool)


@dataclass
class StateTables:
    states: tuple[AgentState, ...]
    kinds: np.ndarray                     # int8 [N]
    unary: dict[str, np.ndarray]          # spatial unary predicate -> bool [N]
    binary: dict[str, np.ndarray]         # geometric binary predicate -> bool [N, N] (coin pairs False)
    coin: dict[str, np.ndarray]           # CollidingClose predicate -> bool [N, N]: the pair draws a coin
    view: np.ndarray                      # bool [N, N]: view[s, t] = t is inside s's field of view (s == t too)
    cells: np.ndarray                     # int64 [N, 2]


def _snapshot(states: Sequence[AgentState]) -> WorldSnapshot:
    n = len(states)
    kinds = np.array([int(s.kind) for s in states], dtype=np.int8)
    pri = np.where(kinds == int(Kind.CAR), 1, 0).astype(np.int32)
    table = AgentTable(tuple(f"S{i}" for i in range(n)), kinds, pri, {})
    pos = np.array([s.cell for s in states], dtype=np.int32).reshape(n, 2)
    head = np.array([s.heading for s in states], dtype=np.int8)
    return WorldSnapshot(0, table, pos, head)


def state_tables(city: CityMap, onto: Ontology, states: Sequence[AgentState],
                 used: Sequence[str] | None = None) -> StateTables:
    """Tables of the predicates ``used`` (default: all) over ``states`` (see module doc)."""
    grounder = Grounder(city, onto)
    snap = _snapshot(states)
    n = len(states)
    g = grounder.ground(snap, np.random.default_rng(0))
    names = list(used) if used is not None else list(onto.names)
    unary, binary, coin = {}, {}, {}
    a = np.arange(n)[:, None]
    b = np.arange(n)[None, :]
    coins = grounder.coin_pairs(snap) if n else {}
    for name in names:
        p = onto[name]
        if p.is_action:
            continue
        if p.arity == 1 and p.grounding in _SPATIAL_UNARY:
            unary[name] = np.asarray(g.unary(name), dtype=bool).copy()
        elif p.arity == 2 and p.grounding in _GEOMETRIC:
            t = np.asarray(g.pair(name, a, b), dtype=bool).copy() if n else np.zeros((0, 0), bool)
            if p.grounding == "colliding_close":
                m = np.zeros((n, n), dtype=bool)
                pairs = coins.get(name, np.zeros((0, 2), np.int64))
                m[pairs[:, 0], pairs[:, 1]] = True
                t &= ~m
                coin[name] = m
            binary[name] = t
    pos = snap.positions.astype(np.int64)
    boxes = grounder.fov_boxes(pos, snap.headings)
    view = ((pos[None, :, 0] >= boxes[:, None, 0]) & (pos[None, :, 0] <= boxes[:, None, 1])
            & (pos[None, :, 1] >= boxes[:, None, 2]) & (pos[None, :, 1] <= boxes[:, None, 3]))
    return StateTables(tuple(states), snap.agents.kinds.copy(), unary, binary, coin, view, pos)


def interpretation(onto: Ontology, tables: StateTables, types: Sequence[AgentType], dom: np.ndarray,
                   dom_types: np.ndarray, coin_values: Mapping[str, np.ndarray] | None = None,
                   used: Sequence[str] | None = None) -> TableInterpretation:
    """A :class:`TableInterpretation` with one ego row per row of ``dom`` (int [E, K]: state indices, ego first,
    -1 pads) and ``dom_types`` (int [E, K]: indices into ``types``). ``coin_values[pred]`` bool [E, K, K] gives
    the outcome of each coin pair (default False)."""
    dom = np.asarray(dom, dtype=np.int64)
    dom_types = np.asarray(dom_types, dtype=np.int64)
    valid = dom >= 0
    s = np.where(valid, dom, 0)
    ty = np.where(valid, dom_types, 0)
    names = list(used) if used is not None else list(onto.names)
    unary: dict[str, np.ndarray] = {}
    binary: dict[str, np.ndarray] = {}
    for name in names:
        p = onto[name]
        if p.is_action:
            continue
        if p.arity == 1:
            if name in tables.unary:
                unary[name] = tables.unary[name][s] & valid
            else:
                unary[name] = _semantic_table(onto, name, types)[ty] & valid
        else:
            if name in tables.binary:
                v = tables.binary[name][s[:, :, None], s[:, None, :]]
                if name in tables.coin and coin_values is not None and name in coin_values:
                    c = tables.coin[name][s[:, :, None], s[:, None, :]]
                    v = v | (c & np.asarray(coin_values[name], dtype=bool))
                binary[name] = v
            elif p.grounding == "higher_priority":
                pri = np.array([t.priority if t.kind == Kind.CAR else 0 for t in types], dtype=np.int64)[ty]
                binary[name] = pri[:, :, None] < pri[:, None, :]
    k = dom.shape[1]
    eye = np.eye(k, dtype=bool)[None]
    binary = {nm: v & ~eye for nm, v in binary.items()}  # relations are irreflexive (distinct agents)
    return TableInterpretation(onto, valid, unary, binary)
