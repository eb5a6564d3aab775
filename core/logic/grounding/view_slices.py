"""View slices: how the engines read a grounded step — per-view [E, K] slices of the predicate tables.

Why a module of its own: the compiled engine never reads whole per-view tables. It asks for a tuple of one-variable
slices every step — P(V), P(X, V), P(V, X), P(V, V) over each ego's domain (core/logic/engines/compiled_clauses.py
``Slots``) — and for the egos' own values (P(X), P(X, X)). How to serve those fast differs by scene size, and is
independent of how each predicate is computed (core/logic/grounding/predicate_tables.py): a small scene gathers every
slice from its flat buffer of global tables with one integer-array gather (a memoised plan of
core/logic/grounding/gather_plans.py); a large one grounds just the (ego, V) / (V, ego) pairs, or packs them as bit
rows in one compiled pass (kernels.slice_bits). :class:`ViewSlices` is these reads over one step's tables.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from core.logic.grounding.coins import NO_COINS
from core.logic.grounding.gather_plans import GatherPlans
from core.logic.grounding.pair_geometry import PairGeom
from core.logic.grounding.predicate_tables import PredicateTables

__all__ = ["ViewSlices"]


class ViewSlices:
    """The engine-facing reads of one grounded step: the one-variable slices (:meth:`var_slices`,
    :meth:`var_bits`) and the egos' own values (:meth:`ego_slices`), from ``tables`` with the grounder's ``plans``.
    Thread-safe for reading: its caches hold values computed from the step alone, so a race stores equal ones."""

    def __init__(self, tables: PredicateTables, plans: GatherPlans) -> None:
        self.tables = tables
        self.plans = plans
        self._offsets: dict[str, np.ndarray] = {}   # per-view offsets per slice kind (dense scenes)
        self._packed_coins: tuple[np.ndarray, ...] | None = None   # the slice kernel's coins (large scenes)

    @property
    def packs_bits(self) -> bool:
        """Whether :meth:`var_bits` applies: a large scene (no flat buffer) whose views hold at most 64 entities."""
        t = self.tables
        return t.flat is None and t.valid.shape[1] <= 64

    def _view_offsets(self, kind: str) -> np.ndarray:
        """int64 [E, K]: position inside one row of the flat buffer of each view entry for a slice kind (see
        var_slices); padding entries give garbage positions, masked by the caller."""
        off = self._offsets.get(kind)
        if off is None:
            ent = self._offsets.get("u")
            if ent is None:
                ent = self._offsets["u"] = self.tables.ent.astype(np.int64)
            n = len(self.tables.names)
            if kind == "u":
                off = ent
            elif kind == "bxv":
                off = ent[:, :1] * n + ent
            elif kind == "bvx":
                off = ent * n + ent[:, :1]
            else:  # bvv
                off = ent * (n + 1)
            self._offsets[kind] = off
        return off

    def var_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        """See :meth:`core.logic.grounding.interpretation.Interpretation.var_slices`."""
        t = self.tables
        if t.flat is None:
            return self._sparse_var_slices(keys)
        plan = self.plans.dense(tuple(keys), len(t.names))
        if plan.needs_unary:
            t.unary_rows()
        if plan.pair_rows:
            t.pair_rows(plan.pair_rows)
        if len(plan.kinds) == 1:
            idx = plan.bases + self._view_offsets(plan.kinds[0])
        else:
            idx = plan.bases + np.stack([self._view_offsets(k) for k in plan.kinds])[plan.kind_of_slot]
        out = t.flat[idx]
        out &= t.valid  # padding entries (ent = -1) read arbitrary buffer positions
        return out

    def _sparse_var_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        """:meth:`var_slices` of a large scene (no global pair tables): each binary slice is grounded on its own
        [E, K] pairs — (ego, V) for P(X, V), (V, ego) for P(V, X) — instead of gathering it from the view's full
        [E, K, K] table, which costs K times more and of which the compiled engine reads only these slices.
        P(V, V) is False (every binary grounding is False on a pair of equal agents). Values equal the full
        tables' (a binary predicate is a pure function of the global pair; the CollidingClose coins are drawn
        once per step in :meth:`core.logic.grounding.grounder.Grounder.ground` and only read here); a table
        already built is sliced instead."""
        t = self.tables
        out = np.empty((len(keys),) + t.valid.shape, dtype=bool)
        geoms: dict[str, PairGeom] = {}
        u_slots = [i for i, (kind, _) in enumerate(keys) if kind == "u"]
        if u_slots:   # the unary predicates the engine reads, gathered at once (not every unary of the ontology)
            u_local = t.built_unary_local()
            if u_local is not None:
                out[u_slots] = np.stack([u_local[keys[i][1]] for i in u_slots])
            else:
                rows = t.unary_rows()[[t.index.unary_row[keys[i][1]] for i in u_slots]]
                out[u_slots] = rows[:, t.ent]
                out[u_slots] &= t.valid
        for i, (kind, p) in enumerate(keys):
            if kind == "valid":
                out[i] = t.valid
            elif kind == "u":
                continue
            elif kind == "bvv":
                out[i] = False
            else:
                full = t.built_binary_local(p)
                if full is not None:
                    out[i] = full[:, 0, :] if kind == "bxv" else full[:, :, 0]
                    continue
                geom = geoms.get(kind)
                if geom is None:
                    geom = geoms[kind] = self._ego_pairs(kind, geoms)
                np.logical_and(t.compute_binary(t.ontology[p], geom), t.valid, out=out[i])
        return out

    def var_bits(self, keys: Sequence[tuple[str, str]], kern: Any) -> np.ndarray:
        """:meth:`var_slices` as bit rows of a large scene (only when :attr:`packs_bits`): one compiled pass over
        every view entry for all slots (kernels.slice_bits) instead of :meth:`_sparse_var_slices`' numpy calls; a
        slot the kernel does not know (a CollidingClose angle of π/2 or more) is grounded by numpy and packed."""
        t = self.tables
        keys = tuple(keys)
        spec, ipar, fpar, skipped = self.plans.kernel(keys, kern)
        coins = self._kernel_coins()
        out = np.empty((len(keys), t.valid.shape[0]), dtype=np.uint64)
        st = t.static
        kern.slice_bits(t.ent, t.positions, t.headings, st.priority, st.is_car, t.unary_rows(),
                        spec, ipar, fpar, coins[0], coins[1], coins[2], coins[3], out)
        if skipped:
            rows = np.empty((len(skipped),) + t.valid.shape, dtype=bool)
            for r, i in enumerate(skipped):
                kind, p = keys[i]
                np.logical_and(t.compute_binary(t.ontology[p], self._ego_pairs(kind, {})), t.valid, out=rows[r])
            packed = np.empty((len(skipped), t.valid.shape[0]), dtype=np.uint64)
            kern.pack_bits(rows, packed)
            out[list(skipped)] = packed
        return out

    def _kernel_coins(self) -> tuple[np.ndarray, ...]:
        """(reach2 [P, N], coin keys, outcomes, offsets [P + 1]) of the CollidingClose predicates in ontology
        order, packed for the slice kernel."""
        packed = self._packed_coins
        if packed is None:
            t = self.tables
            n, names = len(t.names), t.index.colliding_names
            reach2 = np.stack([t.static.reach2[nm] for nm in names]) if names else np.zeros((1, n), np.int64)
            drawn = [t.coins.get(nm, NO_COINS) for nm in names]
            keys = np.concatenate([d[0] for d in drawn] + [np.zeros(0, np.int64)]).astype(np.int64)
            vals = np.concatenate([d[1] for d in drawn] + [np.zeros(0, bool)]).astype(bool)
            off = np.cumsum([0] + [len(d[0]) for d in drawn]).astype(np.int64)
            packed = self._packed_coins = (np.ascontiguousarray(reach2, dtype=np.int64), keys, vals, off)
        return packed

    def _ego_pairs(self, kind: str, made: Mapping[str, PairGeom]) -> PairGeom:
        """Geometry of the pairs (ego, V) ("bxv") or (V, ego) ("bvx") of every view, [E, K]; the second is the
        first mirrored (offsets negated, same distances and mask), so only one is computed from positions."""
        t = self.tables
        ego, ent = t.ent[:, :1].astype(np.int64), t.ent.astype(np.int64)
        a, b = (ego, ent) if kind == "bxv" else (ent, ego)
        other = made.get("bvx" if kind == "bxv" else "bxv")
        if other is None:
            p = t.positions.astype(np.int32)
            pe, pv = p[t.ent[:, 0]], p[t.ent]   # [E, 2], [E, K, 2]; padding (-1) masked by ok
            dr = pv[..., 0] - pe[:, None, 0]
            dc = pv[..., 1] - pe[:, None, 1]
            if kind == "bvx":
                dr, dc = -dr, -dc
            ok = t.valid.copy()
            ok[:, 0] = False   # the ego itself: a pair of equal agents
            return PairGeom(a, b, dr, dc, ok)
        return PairGeom(a, b, -other.dr, -other.dc, other.ok)

    def ego_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        """See :meth:`core.logic.grounding.interpretation.Interpretation.ego_slices`."""
        t = self.tables
        if t.flat is None:  # P(X, X) is False for every binary grounding (see _sparse_var_slices)
            out = np.zeros((len(keys), t.valid.shape[0]), dtype=bool)
            unary_slots = [i for i, (kind, _) in enumerate(keys) if kind == "u"]
            if unary_slots:   # the egos' own unary values: column 0 of every view is the ego
                unary_rows = [t.index.unary_row[keys[i][1]] for i in unary_slots]
                out[unary_slots] = t.unary_rows()[unary_rows][:, t.ent[:, 0]]
            return out
        slots, rows = self.plans.ego(tuple(keys))
        out = np.zeros((len(keys), t.ent.shape[0]), dtype=bool)  # P(X, X) is always False (diagonal)
        if len(slots):
            out[slots] = t.unary_rows()[rows, t.ent[:, 0]]
        return out
