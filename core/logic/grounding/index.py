"""The predicate index of an ontology: which row of a grounded step's tables holds which predicate.

Why a module of its own: the grounder, the truth tables and the engines' gather plans all address predicates by
position — row i of the unary stack ``[U, N]`` is ``ontology.unary[i]``, row j of the pair tables ``[B, N, N]`` is
``ontology.binary[j]`` — and must agree on it. :class:`PredicateIndex` is that layout, built once per ontology
and never changed afterwards, so every part reads the same rows without reaching into another part's state.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from core.logic.lang.ontology import Ontology, Predicate

__all__ = ["PredicateIndex", "SPATIAL_UNARY"]

#: Unary groundings that depend on where the agent stands (filled in per step); the others are fixed by the agent
#: table (core/logic/grounding/agent_static.py).
SPATIAL_UNARY = ("is_at_intersection", "is_in_intersection")


@dataclass(frozen=True, eq=False)
class PredicateIndex:
    """Rows of every grounded predicate of ``ontology`` (ontology order) and the predicates grounded specially."""

    ontology: Ontology
    unary_names: tuple[str, ...]
    #: unary predicate name -> its row in the unary stack
    unary_row: Mapping[str, int]
    #: binary predicate name -> its row in the pair tables
    binary_row: Mapping[str, int]
    #: the CollidingClose predicates, in ontology order (the order of the coin draws)
    colliding: tuple[Predicate, ...]
    #: (row, grounding) of the unary predicates that depend on the agent's cell
    spatial_unary: tuple[tuple[int, str], ...]

    @classmethod
    def of(cls, ontology: Ontology) -> "PredicateIndex":
        unary = tuple(p.name for p in ontology.unary)
        return cls(
            ontology=ontology,
            unary_names=unary,
            unary_row=MappingProxyType({name: i for i, name in enumerate(unary)}),
            binary_row=MappingProxyType({p.name: i for i, p in enumerate(ontology.binary)}),
            colliding=tuple(p for p in ontology.grounded if p.grounding == "colliding_close"),
            spatial_unary=tuple((i, p.grounding) for i, p in enumerate(ontology.unary)
                                if p.grounding in SPATIAL_UNARY))

    @property
    def colliding_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.colliding)
