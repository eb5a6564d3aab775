"""Registry of grounding functions, chosen by *name* from an ontology file.

Why a registry: the reference names grounding functions by dotted import path and imports whatever the file
says (docs/reference.md#security). Here an ontology can only pick one of the functions listed below; unknown names
are a :class:`~core.base.errors.ConfigError`. Each entry declares its arity, its default kind and its parameters
with the reference values as defaults (docs/reference.md#grounding-predicates). The vectorised implementations live in
:mod:`core.logic.grounding.grounder`; this module only describes them so that loading an ontology stays cheap.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["ParamSpec", "GroundingSpec", "REGISTRY", "REFERENCE_FUNCTION_NAMES", "CONCEPT_ORDER",
           "DEFAULT_VIEW"]

#: Order in which concept flags decide an agent's "detailed type" for CollidingClose ranges
#: (docs/reference.md#collisions).
CONCEPT_ORDER: tuple[str, ...] = ("tiro", "bus", "ambulance", "old", "young", "police", "reckless")


#: Largest distance / view parameter in cells. Maps are at most 4096 cells a side (core.map.validate), so any
#: larger reach means "everywhere"; bigger numbers (or .inf) would overflow the integer grids of grounding.
MAX_CELLS = 8192


def _finite_number(v: Any) -> bool:
    """An int or a finite float (``math.isfinite`` itself raises OverflowError for an int beyond the float range,
    e.g. 400 digits written in an ontology)."""
    return not isinstance(v, bool) and (isinstance(v, int) or (isinstance(v, float) and math.isfinite(v)))


def _positive_number(v: Any) -> str | None:
    if not _finite_number(v) or v < 0:
        return "must be a non-negative (finite) number"
    if v > MAX_CELLS:
        return f"must be at most {MAX_CELLS} cells (larger than any map), got {v}"
    return None


def _angle(v: Any) -> str | None:
    if not _finite_number(v) or not 0 <= v <= math.pi:
        return f"must be an angle in radians between 0 and π (3.14159), got {v!r}"
    return None


def _probability(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:  # NaN fails too
        return "must be a number in [0, 1]"
    return None


def _range_table(v: Any) -> str | None:
    if not isinstance(v, Mapping):
        return "must be a mapping {pedestrian: r, car: r, <concept>: r, ...}"
    allowed = {"pedestrian", "car", *CONCEPT_ORDER}
    for k, r in v.items():
        if k not in allowed:
            return f"unknown key {k!r} (allowed: {', '.join(sorted(allowed))})"
        problem = _positive_number(r)
        if problem:
            return f"value for {k!r} {problem}"
    if "pedestrian" not in v or "car" not in v:
        return "must give at least 'pedestrian' and 'car'"
    return None


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a grounding function: default value and a validator returning an error or None."""

    default: Any
    check: Callable[[Any], str | None]
    doc: str


@dataclass(frozen=True)
class GroundingSpec:
    """A grounding function an ontology predicate may name."""

    name: str
    arity: int
    kind: str  # default kind: "semantic" or "spatial"
    doc: str
    params: Mapping[str, ParamSpec] = field(default_factory=dict)
    #: The reference's function name (last component of its dotted path), used by the importer.
    reference: str = ""


_SPECS = [
    GroundingSpec("is_pedestrian", 1, "semantic", "the entity is a pedestrian", reference="IsPed"),
    GroundingSpec("is_car", 1, "semantic", "the entity is a car", reference="IsCar"),
    GroundingSpec("is_ambulance", 1, "semantic", "a car with concept 'ambulance'", reference="IsAmb"),
    GroundingSpec("is_bus", 1, "semantic", "a car with concept 'bus'", reference="IsBus"),
    GroundingSpec("is_police", 1, "semantic", "a car with concept 'police'", reference="IsPolice"),
    GroundingSpec("is_tiro", 1, "semantic", "a car with concept 'tiro'", reference="IsTiro"),
    GroundingSpec("is_reckless", 1, "semantic", "a car with concept 'reckless'", reference="IsReckless"),
    GroundingSpec("is_old", 1, "semantic", "a pedestrian with concept 'old'", reference="IsOld"),
    GroundingSpec("is_young", 1, "semantic", "a pedestrian with concept 'young'", reference="IsYoung"),
    GroundingSpec("is_at_intersection", 1, "spatial",
                  "on an intersection 'at' line: cars use intersection layer 0, pedestrians layer 1",
                  reference="IsAtInter"),
    GroundingSpec("is_in_intersection", 1, "spatial", "inside an intersection box (intersection layer 2)",
                  reference="IsInInter"),
    GroundingSpec("is_close", 2, "spatial", "X != Y and min < distance <= max", {
        "min": ParamSpec(12, _positive_number, "exclusive lower distance bound (cells)"),
        "max": ParamSpec(20, _positive_number, "inclusive upper distance bound (cells)"),
    }, reference="IsClose"),
    GroundingSpec("next_to", 2, "spatial", "X != Y and distance < max", {
        "max": ParamSpec(12, _positive_number, "exclusive upper distance bound (cells)"),
    }, reference="NextTo"),
    GroundingSpec("higher_priority", 2, "spatial",
                  "X != Y and priority(X) < priority(Y) (numerically smaller wins)", reference="HigherPri"),
    GroundingSpec("colliding_close", 2, "spatial",
                  "X != Y, X has moved, distance <= range(X); same cell: coin flip; Y straight ahead "
                  "(angle < angle): cars 1, pedestrians coin flip", {
                      "range": ParamSpec({"pedestrian": 3, "car": 8}, _range_table,
                                         "reach per kind, optionally per concept (first concept in "
                                         "tiro, bus, ambulance, old, young, police, reckless order wins)"),
                      "angle": ParamSpec(0.1, _angle, "max angle (radians, 0..π) off X's heading"),
                      "coin": ParamSpec(0.5, _probability, "probability of the coin flips"),
                  }, reference="CollidingClose"),
    GroundingSpec("left_of", 2, "spatial", "X is in the left half-plane of Y's heading (0 if Y never moved)",
                  reference="LeftOf"),
    GroundingSpec("right_of", 2, "spatial", "X is in the right half-plane of Y's heading (0 if Y never moved)",
                  reference="RightOf"),
]

#: name → spec. The only grounding functions an ontology can name.
REGISTRY: dict[str, GroundingSpec] = {s.name: s for s in _SPECS}

#: reference function name (``logicity.utils.pred_converter.z3.<Name>``) → registry name.
REFERENCE_FUNCTION_NAMES: dict[str, str] = {s.reference: s.name for s in _SPECS}


def _behind_table(v: Any) -> str | None:
    if not isinstance(v, Mapping) or set(v) != {"left", "right", "up", "down"}:
        return "must be a mapping with keys left, right, up, down"
    for r in v.values():
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= MAX_CELLS:
            return f"values must be integers 0..{MAX_CELLS}"
    return None


def _nonneg_int(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        return "must be a non-negative integer"
    if v > MAX_CELLS:
        return f"must be at most {MAX_CELLS} cells (larger than any map), got {v}"
    return None


#: Ontology-level view parameters (docs/reference.md#field-of-view): forward reach and cells kept behind per heading.
DEFAULT_VIEW: dict[str, ParamSpec] = {
    "fov": ParamSpec(25, _nonneg_int, "cells seen ahead and to each side"),
    "behind": ParamSpec({"left": 1, "right": 2, "up": 1, "down": 2}, _behind_table,
                        "cells seen behind per heading (the reference is asymmetric: 1 cell Left/Up, 2 Right/Down)"),
}
