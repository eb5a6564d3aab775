"""View slices: how the engines read a grounded step — per-view [E, K] slices of the predicate tables.

Why a module of its own: the compiled engine never reads whole per-view tables. It asks for a tuple of one-variable
slices every step — P(V), P(X, V), P(V, X), P(V, V) over each ego's domain (core/logic/engines/compiled_clauses.py
``Slots``) — and for the egos' own values (P(X), P(X, X)). How to serve those fast differs by scene size, and is
independent of how each predicate is computed (core/logic/grounding/predicate_tables.py): a small scene gathers every slice
from its flat buffer of global tables with one integer-array gather (memoised :class:`SlicePlan`); a large one
grounds just the (ego, V) / (V, ego) pairs, or packs them as bit rows in one compiled pass (kernels.slice_bits,
planned by :func:`kernel_plan`). :class:`GroundingSlices` adds these reads to the tables.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Mapping, NamedTuple, Sequence

import numpy as np

from core.logic.grounding.pair_geometry import PairGeom, d2_bounds
from core.logic.grounding.predicate_tables import GroundingTables

if TYPE_CHECKING:
    from core.logic.grounding.grounder import Grounder

__all__ = ["SlicePlan", "GroundingSlices", "kernel_plan"]


class SlicePlan(NamedTuple):
    """How :meth:`GroundingSlices.var_slices` gathers a key tuple from the flat buffer."""

    bases: np.ndarray                # int64 [S, 1, 1]: each slot's row start in the buffer
    kinds: tuple[str, ...]           # the distinct view-offset kinds used ("u", "bxv", "bvx", "bvv")
    kind_of_slot: np.ndarray         # int64 [S]: index into ``kinds`` per slot
    pair_rows: tuple[int, ...]       # pair-table rows that must be computed first
    needs_unary: bool                # whether the unary rows must be filled first



class GroundingSlices(GroundingTables):
    """The engine-facing reads of a grounded step (the base of :class:`core.logic.grounding.grounder.Grounding`): the
    one-variable slices (:meth:`var_slices`, :meth:`var_bits`) and the egos' own values (:meth:`ego_slices`)."""

    # Gather plans (why): the compiled engine reads ~15 one-variable slices per step. In a dense scene each is
    # "flat buffer at (row offset + per-view position offset)", where the per-view offsets depend only on the
    # slice kind (P(V): ent, P(X, V): ego·N + ent, ...), so all slices come out of one integer-array gather.
    def _slice_plan(self, keys: tuple[tuple[str, str], ...]) -> "SlicePlan":
        n = len(self.names)
        plans = self.grounder._slice_plans
        plan = plans.get((keys, n))
        if plan is None:
            gr = self.grounder
            pair_base = n + len(self.ontology.unary) * n
            bases, kinds, pair_rows = [], [], []
            for kind, p in keys:
                if kind == "valid":
                    bases.append(0)
                elif kind == "u":
                    bases.append(n + gr._unary_row[p] * n)
                else:
                    pair_rows.append(gr._binary_row[p])
                    bases.append(pair_base + gr._binary_row[p] * n * n)
                kinds.append("u" if kind == "valid" else kind)  # the ones row is read like a unary row
            used = tuple(dict.fromkeys(kinds))
            plan = plans[(keys, n)] = SlicePlan(
                np.asarray(bases, dtype=np.int64)[:, None, None], used,
                np.asarray([used.index(k) for k in kinds], dtype=np.int64), tuple(dict.fromkeys(pair_rows)),
                any(k == "u" for k, _ in keys))
        return plan

    def _view_offsets(self, kind: str) -> np.ndarray:
        """int64 [E, K]: position inside one row of the flat buffer of each view entry for a slice kind (see
        var_slices); padding entries give garbage positions, masked by the caller."""
        off = self._offsets.get(kind)
        if off is None:
            ent = self._offsets.get("u")
            if ent is None:
                ent = self._offsets["u"] = self.ent.astype(np.int64)
            n = len(self.names)
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
        if self._flat is None:
            return self._sparse_var_slices(keys)
        plan = self._slice_plan(tuple(keys))
        if plan.needs_unary:
            self._unary_rows()
        if plan.pair_rows:
            self._pair_rows(plan.pair_rows)
        if len(plan.kinds) == 1:
            idx = plan.bases + self._view_offsets(plan.kinds[0])
        else:
            idx = plan.bases + np.stack([self._view_offsets(k) for k in plan.kinds])[plan.kind_of_slot]
        out = self._flat[idx]
        out &= self.valid  # padding entries (ent = -1) read arbitrary buffer positions
        return out

    def _sparse_var_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        """:meth:`var_slices` of a large scene (no global pair tables): each binary slice is grounded on its own
        [E, K] pairs — (ego, V) for P(X, V), (V, ego) for P(V, X) — instead of gathering it from the view's full
        [E, K, K] table, which costs K times more and of which the compiled engine reads only these slices.
        P(V, V) is False (every binary grounding is False on a pair of equal agents). Values equal the full
        tables' (a binary predicate is a pure function of the global pair; the CollidingClose coins are drawn
        once per step in :meth:`core.logic.grounding.grounder.Grounder.ground` and only read here); a table already built
        is sliced instead."""
        out = np.empty((len(keys),) + self.valid.shape, dtype=bool)
        geoms: dict[str, PairGeom] = {}
        u_slots = [i for i, (kind, _) in enumerate(keys) if kind == "u"]
        if u_slots:   # the unary predicates the engine reads, gathered at once (not every unary of the ontology)
            if self._unary_local is not None:
                out[u_slots] = np.stack([self._unary_local[keys[i][1]] for i in u_slots])
            else:
                rows = self._unary_rows()[[self.grounder._unary_row[keys[i][1]] for i in u_slots]]
                out[u_slots] = rows[:, self.ent]
                out[u_slots] &= self.valid
        for i, (kind, p) in enumerate(keys):
            if kind == "valid":
                out[i] = self.valid
            elif kind == "u":
                continue
            elif kind == "bvv":
                out[i] = False
            else:
                full = self._binary_local.get(p)
                if full is not None:
                    out[i] = full[:, 0, :] if kind == "bxv" else full[:, :, 0]
                    continue
                geom = geoms.get(kind)
                if geom is None:
                    geom = geoms[kind] = self._ego_pairs(kind, geoms)
                np.logical_and(self._compute_binary(self.ontology[p], geom), self.valid, out=out[i])
        return out

    def var_bits(self, keys: Sequence[tuple[str, str]], kern) -> np.ndarray | None:
        """:meth:`var_slices` as bit rows (see Interpretation.var_bits). A large scene grounds them with one
        compiled pass over every view entry for all slots (kernels.slice_bits) instead of :meth:`_sparse_var_slices`'
        numpy calls; a slot the kernel does not know (a CollidingClose angle of π/2 or more) is grounded by
        numpy and packed."""
        if self._flat is not None or self.valid.shape[1] > 64:
            return super().var_bits(keys, kern)
        keys = tuple(keys)
        gr = self.grounder
        plan = gr._slice_plans.get(("kernel", keys))
        if plan is None:
            plan = gr._slice_plans[("kernel", keys)] = kernel_plan(gr, kern, keys)
        spec, ipar, fpar, skipped = plan
        coins = self._kernel_coins()
        out = np.empty((len(keys), self.valid.shape[0]), dtype=np.uint64)
        kern.slice_bits(self.ent, self._pos, self._head, self._st.priority, self._st.is_car, self._unary_rows(),
                        spec, ipar, fpar, coins[0], coins[1], coins[2], coins[3], out)
        if skipped:
            rows = np.empty((len(skipped),) + self.valid.shape, dtype=bool)
            for r, i in enumerate(skipped):
                kind, p = keys[i]
                np.logical_and(self._compute_binary(self.ontology[p], self._ego_pairs(kind, {})), self.valid,
                               out=rows[r])
            packed = np.empty((len(skipped), self.valid.shape[0]), dtype=np.uint64)
            kern.pack_bits(rows, packed)
            out[list(skipped)] = packed
        return out

    def _kernel_coins(self) -> tuple[np.ndarray, ...]:
        """(reach2 [P, N], coin keys, outcomes, offsets [P + 1]) of the CollidingClose predicates in ontology
        order, packed for the slice kernel."""
        packed = self._packed_coins
        if packed is None:
            gr, n = self.grounder, len(self.names)
            names = [p.name for p in gr._colliding]
            reach2 = np.stack([self._st.reach2[nm] for nm in names]) if names else np.zeros((1, n), np.int64)
            drawn = [self._coins.get(nm, (np.zeros(0, np.int64), np.zeros(0, bool))) for nm in names]
            keys = np.concatenate([d[0] for d in drawn] + [np.zeros(0, np.int64)]).astype(np.int64)
            vals = np.concatenate([d[1] for d in drawn] + [np.zeros(0, bool)]).astype(bool)
            off = np.cumsum([0] + [len(d[0]) for d in drawn]).astype(np.int64)
            packed = self._packed_coins = (np.ascontiguousarray(reach2, dtype=np.int64), keys, vals, off)
        return packed

    def _ego_pairs(self, kind: str, made: Mapping[str, PairGeom]) -> PairGeom:
        """Geometry of the pairs (ego, V) ("bxv") or (V, ego) ("bvx") of every view, [E, K]; the second is the
        first mirrored (offsets negated, same distances and mask), so only one is computed from positions."""
        ego, ent = self.ent[:, :1].astype(np.int64), self.ent.astype(np.int64)
        a, b = (ego, ent) if kind == "bxv" else (ent, ego)
        other = made.get("bvx" if kind == "bxv" else "bxv")
        if other is None:
            p = self._pos.astype(np.int32)
            pe, pv = p[self.ent[:, 0]], p[self.ent]   # [E, 2], [E, K, 2]; padding (-1) masked by ok
            dr = pv[..., 0] - pe[:, None, 0]
            dc = pv[..., 1] - pe[:, None, 1]
            if kind == "bvx":
                dr, dc = -dr, -dc
            ok = self.valid.copy()
            ok[:, 0] = False   # the ego itself: a pair of equal agents
            return PairGeom(a, b, dr, dc, ok)
        mirrored = PairGeom(a, b, -other.dr, -other.dc, other.ok)
        return mirrored

    def ego_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        if self._flat is None:  # P(X, X) is False for every binary grounding (see _sparse_var_slices)
            out = np.zeros((len(keys), self.valid.shape[0]), dtype=bool)
            slots = [i for i, (kind, _) in enumerate(keys) if kind == "u"]
            if slots:   # the egos' own unary values: column 0 of every view is the ego
                rows = [self.grounder._unary_row[keys[i][1]] for i in slots]
                out[slots] = self._unary_rows()[rows][:, self.ent[:, 0]]
            return out
        keys = tuple(keys)
        plans = self.grounder._slice_plans
        plan = plans.get(("ego", keys))
        if plan is None:  # (slots of the unary keys, their unary rows [S', 1])
            slots = [i for i, (kind, _) in enumerate(keys) if kind == "u"]
            plan = plans[("ego", keys)] = (np.asarray(slots, dtype=np.int64), np.asarray(
                [self.grounder._unary_row[keys[i][1]] for i in slots], dtype=np.int64)[:, None])
        slots, rows = plan
        out = np.zeros((len(keys), self.ent.shape[0]), dtype=bool)  # P(X, X) is always False (diagonal)
        if len(slots):
            out[slots] = self._unary_rows()[rows, self.ent[:, 0]]
        return out


def kernel_plan(gr: Grounder, kern, keys: tuple[tuple[str, str], ...]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, ...]]:
    """The slice kernel's description of ``keys`` (see kernels.slices): spec [S, 3] = (kind, grounding, row),
    integer squared-distance bounds [S, 2], cos²(angle) [S], and the slots left to numpy."""
    codes = {"is_close": kern.G_CLOSE, "next_to": kern.G_NEXT, "higher_priority": kern.G_PRI,
             "left_of": kern.G_LEFT, "right_of": kern.G_RIGHT, "colliding_close": kern.G_COLL, None: kern.G_NONE}
    kinds = {"valid": kern.K_VALID, "u": kern.K_UNARY, "bxv": kern.K_XV, "bvx": kern.K_VX, "bvv": kern.K_VV}
    colliding = [p.name for p in gr._colliding]
    spec = np.zeros((len(keys), 3), dtype=np.int64)
    ipar = np.zeros((len(keys), 2), dtype=np.int64)
    fpar = np.zeros(len(keys), dtype=np.float64)
    skipped = []
    for i, (kind, name) in enumerate(keys):
        spec[i, 0] = kinds[kind]
        if kind == "u":
            spec[i, 2] = gr._unary_row[name]
        elif kind in ("bxv", "bvx"):
            p = gr.ontology[name]
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
    return spec, ipar, fpar, tuple(skipped)
