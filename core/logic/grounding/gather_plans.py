"""Gather plans: how a tuple of slice keys maps onto a grounded step's buffers, worked out once per grounder.

Why a module of its own: an engine asks every step for the same key tuples (core/logic/engines/compiled_clauses.py
``Slots``), and the SPF env for observations of the same size. Where each key's values lie depends only on the
predicate layout (:class:`~core.logic.grounding.index.PredicateIndex`) and the agent count, never on the state, so
the index arithmetic is done on the first request and memoised here (:class:`GatherPlans`, one per grounder);
each step's :class:`~core.logic.grounding.view_slices.ViewSlices` then does one gather per request.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from core.logic.grounding.index import PredicateIndex
from core.logic.grounding.pair_geometry import d2_bounds
from core.logic.lang.ontology import Ontology

__all__ = ["SlicePlan", "KernelPlan", "EgoPlan", "GatherPlans", "kernel_plan", "observation_positions"]

Keys = tuple[tuple[str, str], ...]


class SlicePlan(NamedTuple):
    """How :meth:`ViewSlices.var_slices` gathers a key tuple from a dense scene's flat buffer."""

    bases: np.ndarray                # int64 [S, 1, 1]: each slot's row start in the buffer
    kinds: tuple[str, ...]           # the distinct view-offset kinds used ("u", "bxv", "bvx", "bvv")
    kind_of_slot: np.ndarray         # int64 [S]: index into ``kinds`` per slot
    pair_rows: tuple[int, ...]       # pair-table rows that must be computed first
    needs_unary: bool                # whether the unary rows must be filled first


class KernelPlan(NamedTuple):
    """The slice kernel's description of a key tuple (see core.logic.kernels.slice_bits)."""

    spec: np.ndarray                 # int64 [S, 3]: (kind, grounding, row)
    ipar: np.ndarray                 # int64 [S, 2]: integer squared-distance bounds
    fpar: np.ndarray                 # float64 [S]: cos²(angle)
    skipped: tuple[int, ...]         # slots left to numpy


class EgoPlan(NamedTuple):
    """The unary slots of an ego-slice key tuple and their unary rows."""

    slots: np.ndarray                # int64 [S']
    rows: np.ndarray                 # int64 [S', 1]


class GatherPlans:
    """Memoised gather plans of one grounder, shared by its groundings (thread-safe: a plan is computed from the
    index alone, so two threads that miss at once store equal plans)."""

    def __init__(self, index: PredicateIndex) -> None:
        self.index = index
        self._slices: dict[tuple[Keys, int], SlicePlan] = {}
        self._kernel: dict[Keys, KernelPlan] = {}
        self._ego: dict[Keys, EgoPlan] = {}
        self._observation: dict[int, np.ndarray] = {}

    def dense(self, keys: Keys, n: int) -> SlicePlan:
        """The plan of ``keys`` over a flat buffer of ``n`` agents: each slice is "buffer at (row offset +
        per-view position offset)", where the per-view offsets depend only on the slice kind (P(V): ent,
        P(X, V): ego·N + ent, ...), so all slices come out of one integer-array gather."""
        plan = self._slices.get((keys, n))
        if plan is None:
            ix = self.index
            pair_base = n + len(ix.ontology.unary) * n
            bases, kinds, pair_rows = [], [], []
            for kind, p in keys:
                if kind == "valid":
                    bases.append(0)
                elif kind == "u":
                    bases.append(n + ix.unary_row[p] * n)
                else:
                    pair_rows.append(ix.binary_row[p])
                    bases.append(pair_base + ix.binary_row[p] * n * n)
                kinds.append("u" if kind == "valid" else kind)  # the ones row is read like a unary row
            used = tuple(dict.fromkeys(kinds))
            plan = self._slices[(keys, n)] = SlicePlan(
                np.asarray(bases, dtype=np.int64)[:, None, None], used,
                np.asarray([used.index(k) for k in kinds], dtype=np.int64), tuple(dict.fromkeys(pair_rows)),
                any(k == "u" for k, _ in keys))
        return plan

    def kernel(self, keys: Keys, kern: Any) -> KernelPlan:
        plan = self._kernel.get(keys)
        if plan is None:
            plan = self._kernel[keys] = kernel_plan(self.index, kern, keys)
        return plan

    def ego(self, keys: Keys) -> EgoPlan:
        plan = self._ego.get(keys)
        if plan is None:
            slots = [i for i, (kind, _) in enumerate(keys) if kind == "u"]
            plan = self._ego[keys] = EgoPlan(np.asarray(slots, dtype=np.int64), np.asarray(
                [self.index.unary_row[keys[i][1]] for i in slots], dtype=np.int64)[:, None])
        return plan

    def observation(self, n: int) -> np.ndarray:
        """:func:`observation_positions` of ``n`` entities."""
        pos = self._observation.get(n)
        if pos is None:
            pos = self._observation[n] = observation_positions(self.index.ontology, n)
        return pos


def kernel_plan(index: PredicateIndex, kern: Any, keys: Keys) -> KernelPlan:
    """The slice kernel's description of ``keys`` (see kernels.slices): spec [S, 3] = (kind, grounding, row),
    integer squared-distance bounds [S, 2], cos²(angle) [S], and the slots left to numpy."""
    codes = {"is_close": kern.G_CLOSE, "next_to": kern.G_NEXT, "higher_priority": kern.G_PRI,
             "left_of": kern.G_LEFT, "right_of": kern.G_RIGHT, "colliding_close": kern.G_COLL, None: kern.G_NONE}
    kinds = {"valid": kern.K_VALID, "u": kern.K_UNARY, "bxv": kern.K_XV, "bvx": kern.K_VX, "bvv": kern.K_VV}
    colliding = list(index.colliding_names)
    spec = np.zeros((len(keys), 3), dtype=np.int64)
    ipar = np.zeros((len(keys), 2), dtype=np.int64)
    fpar = np.zeros(len(keys), dtype=np.float64)
    skipped = []
    for i, (kind, name) in enumerate(keys):
        spec[i, 0] = kinds[kind]
        if kind == "u":
            spec[i, 2] = index.unary_row[name]
        elif kind in ("bxv", "bvx"):
            p = index.ontology[name]
            if p.grounding not in codes:   # not a binary grounding the kernel knows: numpy (and its error)
                spec[i, 0] = kern.K_SKIP
                skipped.append(i)
                continue
            spec[i, 1] = codes[p.grounding]
            if p.grounding in ("is_close", "next_to"):
                ipar[i] = d2_bounds(p)
            elif p.grounding == "colliding_close":
                angle = float(p.params["angle"])
                if angle >= math.pi / 2:
                    spec[i, 0] = kern.K_SKIP
                    skipped.append(i)
                spec[i, 2] = colliding.index(name)
                fpar[i] = math.cos(angle) ** 2
    return KernelPlan(spec, ipar, fpar, tuple(skipped))


def observation_positions(onto: Ontology, n: int) -> np.ndarray:
    """Index in the observation vector of each value of [unary blocks (ontology.unary order), binary blocks
    (ontology.binary order)] — the observation interleaves them in file order."""
    unary: list[np.ndarray] = []
    binary: list[np.ndarray] = []
    off = 0
    for p in onto.grounded:
        (unary if p.arity == 1 else binary).append(np.arange(off, off + n ** p.arity))
        off += n ** p.arity
    return np.concatenate(unary + binary + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
