"""Predicate tables: the truth of every predicate on agents and on pairs of agents, for one grounded step.

Why a module of its own: a step's truth values come in three layers — per agent-table facts that hold for the
whole episode (core/logic/grounding/agent_static.py), per-step unary rows (intersections, :class:`IntersectionLayers`)
and binary predicates, which are pure functions of the global pair (IsClose, NextTo, HigherPri, LeftOf/RightOf,
CollidingClose from the step's drawn coins). :class:`PredicateTables` owns that state and computes each table
lazily, once, under a lock: small scenes keep global [N, N] tables in one flat buffer, large ones compute on each
view's pairs. How the engines read slices of these tables is core/logic/grounding/view_slices.py; who is in a view
is core/logic/grounding/field_of_view.py; the coins themselves are drawn by core/logic/grounding/coins.py.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.base.world import WorldSnapshot
from core.logic.grounding.agent_static import AgentStatic
from core.logic.grounding.coins import NO_COINS, CoinDraws
from core.logic.grounding.index import PredicateIndex
from core.logic.grounding.pair_geometry import DIRS_C, DIRS_R, PairGeom, d2_bounds, straight_ahead
from core.logic.lang.ontology import Predicate
from core.map.model import CityMap

__all__ = ["IntersectionLayers", "PredicateTables"]


@dataclass(frozen=True)
class IntersectionLayers:
    """The city's intersection layers stacked (car crossing cells, pedestrian crossing cells, intersection boxes),
    bool [3, H, W] and read-only, so that every agent's cell is one gather."""

    stack: np.ndarray

    @classmethod
    def of(cls, city: CityMap) -> "IntersectionLayers":
        inter = np.asarray(city.intersections)
        stack = np.stack([inter[0] != 0, inter[1] != 0, inter[2] != 0])
        stack.setflags(write=False)
        return cls(stack)


class PredicateTables:
    """The state of one grounded step and its global and per-view predicate tables. Thread-safe for reading (lazy
    parts are locked)."""

    def __init__(self, index: PredicateIndex, layers: IntersectionLayers, snapshot: WorldSnapshot,
                 static: AgentStatic, ent: np.ndarray, valid: np.ndarray, coins: CoinDraws,
                 dense: PairGeom | None = None, pair_tables: dict[str, np.ndarray] | None = None) -> None:
        """``dense``: the all-pairs geometry when the scene is small
        (:data:`core.logic.grounding.grounder.DENSE_PAIR_AGENTS`); binary predicates are then global [N, N] tables
        (``pair_tables`` holds those already computed) and every per-view table is gathered from them."""
        self.index = index
        self.ontology = index.ontology
        self.layers = layers
        self.snapshot = snapshot
        self.names = tuple(snapshot.agents.names)
        self.ent = ent
        self.valid = valid
        self.static = static
        self.coins = coins
        self.positions = np.asarray(snapshot.positions, dtype=np.int64)
        self.headings = np.asarray(snapshot.headings, dtype=np.int64)  # int64: an index array (no casts)
        self.dense = dense
        self._lock = threading.RLock()
        self._unary: dict[str, np.ndarray] | None = None
        self._unary_local: dict[str, np.ndarray] | None = None
        self._binary_local: dict[str, np.ndarray] = {}
        self._geom: PairGeom | None = None
        self._unary_stack: np.ndarray | None = None
        #: Dense scenes keep every global truth value in one flat bool buffer — [N ones | unary [U, N] | pair
        #: tables [B, N, N]] (ontology order) — so that any set of per-view slices, of any predicates and kinds,
        #: is one integer-array gather (core/logic/grounding/view_slices.py). The ones row is the source of the
        #: domain mask. Unary and pair rows are filled in on first use. None in large scenes.
        self.flat: np.ndarray | None = None
        self._pairs: np.ndarray | None = None
        self._pair_done: list[bool] = []
        if dense is not None:
            n, nu, nb = len(self.names), len(self.ontology.unary), len(self.ontology.binary)
            self.flat = np.empty(n + nu * n + nb * n * n, dtype=bool)
            self.flat[:n] = True
            self._pairs = self.flat[n + nu * n:].reshape(nb, n, n)
            self._pair_done = [False] * nb
            for name, table in (pair_tables or {}).items():
                row = index.binary_row[name]
                self._pairs[row] = table
                self._pair_done[row] = True

    # -- what is built already (readers that can reuse a table instead of computing its slice) ------------------
    def built_unary_local(self) -> dict[str, np.ndarray] | None:
        """Every unary predicate's per-view table [E, K] when :meth:`unary_local` has built them, else None."""
        return self._unary_local

    def built_binary_local(self, pred: str) -> np.ndarray | None:
        """``binary_local(pred)`` when it is built already, else None (never computes it)."""
        return self._binary_local.get(pred)

    # -- global values --------------------------------------------------------------------------------------
    def _all_unary(self) -> dict[str, np.ndarray]:
        u = self._unary
        if u is None:
            with self._lock:
                u = self._unary
                if u is None:
                    u = self._unary = dict(zip(self.index.unary_names, self.unary_rows()))
        return u

    def unary(self, pred: str) -> np.ndarray:
        """bool [N]: the unary predicate for every agent (independent of who looks)."""
        return self._all_unary()[pred]

    def unary_rows(self) -> np.ndarray:
        """bool [U, N]: every unary predicate (ontology order) for every agent: the agent table's semantic rows
        plus this step's spatial ones."""
        us = self._unary_stack
        if us is None:
            with self._lock:
                us = self._unary_stack
                if us is None:
                    if self.flat is not None:  # fill the unary part of the flat buffer
                        n = len(self.names)
                        us = self.flat[n: n + len(self.ontology.unary) * n].reshape(-1, n)
                        us[...] = self.static.unary_rows
                    else:
                        us = self.static.unary_rows.copy()
                    spatial, st = self.index.spatial_unary, self.static
                    if spatial:
                        # the three intersection layers at every agent's cell, with one gather
                        at_car, at_ped, in_box = self.layers.stack[:, self.positions[:, 0], self.positions[:, 1]]
                        for row, grounding in spatial:
                            if grounding == "is_at_intersection":
                                us[row] = (st.is_car & at_car) | (st.is_ped & at_ped)
                            else:
                                us[row] = in_box
                    self._unary_stack = us
        return us

    def pair_rows(self, rows: Sequence[int]) -> np.ndarray:
        """The [B, N, N] pair tables (dense scenes only) with ``rows`` (indices in ontology.binary) computed:
        ``pairs[r, a, b]`` = predicate r on (a, b) for distinct agents; the diagonal is False. Only the rows
        something reads are ever computed."""
        pairs, done = self._pairs, self._pair_done
        assert pairs is not None and self.dense is not None
        for row in rows:
            if not done[row]:
                with self._lock:
                    if not done[row]:
                        pairs[row] = self.compute_binary(self.ontology.binary[row], self.dense)
                        done[row] = True
        return pairs

    def pair_table(self, pred: str) -> np.ndarray:
        """bool [N, N] (dense scenes only): ``pred(a, b)`` for every ordered pair of agents."""
        row = self.index.binary_row[pred]
        return self.pair_rows((row,))[row]

    def pair(self, pred: str, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
        """Binary predicate for global index arrays ``a`` (first argument) and ``b`` (broadcast; -1 → False)."""
        a_, b_ = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        shape = a_.shape
        out = self.compute_binary(self.ontology[pred], PairGeom.of(self.positions, a_.reshape(-1), b_.reshape(-1)))
        return out.reshape(shape)

    def truth(self, pred: str, *agents: int) -> bool:
        """Truth of one ground atom over global agent indices, e.g. ``truth("NextTo", 3, 5)``."""
        p = self.ontology[pred]
        if p.is_action:
            raise ValueError(f"{pred} is an action predicate; ask the engine's Decisions")
        if len(agents) != p.arity:
            raise ValueError(f"{pred} takes {p.arity} argument(s)")
        if p.arity == 1:
            return bool(self.unary(pred)[agents[0]])
        return bool(self.pair(pred, agents[0], agents[1]))

    # -- per-ego views (engines) ---------------------------------------------------------------------------------
    def unary_local(self, pred: str) -> np.ndarray:
        ul = self._unary_local
        if ul is None:
            with self._lock:
                ul = self._unary_local
                if ul is None:
                    stacked = self.unary_rows()[:, self.ent] & self.valid[None]
                    ul = dict(zip(self.index.unary_names, stacked))
                    self._unary_local = ul
        return ul[pred]

    def binary_local(self, pred: str) -> np.ndarray:
        v = self._binary_local.get(pred)
        if v is None:
            with self._lock:
                v = self._binary_local.get(pred)
                if v is None:
                    if self.dense is not None:
                        # the diagonal of a pair table is False, so masking the padding is enough
                        ent = self.ent
                        v = self.pair_table(pred)[ent[:, :, None], ent[:, None, :]]
                        v &= self.valid[:, :, None]
                        v &= self.valid[:, None, :]
                    else:
                        if self._geom is None:
                            self._geom = PairGeom.local(self.positions, self.ent, self.valid)
                        v = self.compute_binary(self.ontology[pred], self._geom)
                    self._binary_local[pred] = v
        return v

    def binary_view(self, pred: str, ego: int) -> np.ndarray:
        """bool [K, K]: ``binary_local(pred)[ego]`` without the other views' tables (a dense scene gathers the
        one view from its global table; the inspector shows one view)."""
        full = self._binary_local.get(pred)
        if full is not None:
            return full[ego]
        if self.dense is None:
            return self.binary_rows(pred, np.array([ego]))[0]
        ent, valid = self.ent[ego], self.valid[ego]
        v = self.pair_table(pred)[ent[:, None], ent[None, :]]
        v &= valid[:, None]
        v &= valid[None, :]
        return v

    def binary_rows(self, pred: str, rows: np.ndarray) -> np.ndarray:
        full = self._binary_local.get(pred)
        if full is not None or self.dense is not None:
            return self.binary_local(pred)[rows]
        ent, valid = self.ent[rows], self.valid[rows]   # large scene: ground those views only
        return self.compute_binary(self.ontology[pred], PairGeom.local(self.positions, ent, valid))

    # -- binary predicate implementations ------------------------------------------------------------------------
    def compute_binary(self, p: Predicate, geom: PairGeom) -> np.ndarray:
        g = p.grounding
        if g is None:
            return np.zeros(np.broadcast_shapes(geom.a.shape, geom.b.shape), dtype=bool)
        # squared distances are integers: compare with integer thresholds (exact, and no float arrays)
        if g == "is_close":
            lo2, hi2 = d2_bounds(p)
            return geom.ok & (geom.d2 > lo2) & (geom.d2 <= hi2)
        if g == "next_to":
            return geom.ok & (geom.d2 < d2_bounds(p)[1])
        if g == "higher_priority":
            pri = self.static.priority
            return geom.ok & (geom.at_a(pri) < geom.at_b(pri))
        if g in ("left_of", "right_of"):
            moved, z = self._side(geom)
            return moved & (z > 0) if g == "left_of" else moved & (z < 0)
        if g == "colliding_close":
            return self._colliding(p, geom)
        raise ValueError(f"{p.name}: grounding {g!r} is not binary")  # pragma: no cover

    def _side(self, geom: PairGeom) -> tuple[np.ndarray, np.ndarray]:
        """(pair ok and Y has moved, z) shared by LeftOf and RightOf on one geometry: X = a, Y = b; Y's heading
        (hr, hc); (rr, rc) = pos_X - pos_Y = -(dr, dc); z = hr*rc - hc*rr, positive on Y's left."""
        if geom.side is None:
            hb = geom.at_b(self.headings)
            geom.side = (geom.ok & (hb >= 0), DIRS_C[hb] * geom.dr - DIRS_R[hb] * geom.dc)
        return geom.side

    def _colliding(self, p: Predicate, geom: PairGeom) -> np.ndarray:
        reach2 = self.static.reach2[p.name]
        ha = geom.at_a(self.headings)
        base = geom.ok & (ha >= 0) & (geom.d2 <= geom.at_a(reach2))
        out = np.zeros(base.shape, dtype=bool)
        idx = np.nonzero(base)  # few pairs are within reach: do the angle test on those only
        if len(idx[0]) == 0:
            return out
        a_, b_ = np.broadcast_arrays(geom.a, geom.b)
        sub = PairGeom(a_[idx], b_[idx], geom.dr[idx], geom.dc[idx], np.ones(len(idx[0]), dtype=bool))
        ahead = straight_ahead(p, sub, self.headings[sub.a])
        car = self.static.is_car[sub.a]
        val = ahead & car  # ahead implies distance > 0
        need = (sub.d2 == 0) | (ahead & ~car)
        if need.any():
            keys, vals = self.coins.get(p.name, NO_COINS)
            qk = sub.a[need] * len(self.names) + sub.b[need]
            if len(keys):
                i = np.minimum(np.searchsorted(keys, qk), len(keys) - 1)
                val[need] = (keys[i] == qk) & vals[i]
            else:
                val[need] = False
        out[idx] = val
        return out
