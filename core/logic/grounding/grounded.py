"""One grounded step as the engines, the inspector and SPF read it: :class:`Grounding`.

Why a module of its own: a :class:`Grounding` is what :meth:`core.logic.grounding.grounder.Grounder.ground` returns,
made of two explicit parts — the step's truth tables (:class:`~core.logic.grounding.predicate_tables.PredicateTables`)
and the engines' slice reads over them (:class:`~core.logic.grounding.view_slices.ViewSlices`). It implements
:class:`~core.logic.grounding.interpretation.Interpretation` by handing each read to the part that owns it, and
adds the plain-data reads of one ego's view (the inspector's table, SPF's observation vector).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from core.base.codes import HEADING_NAMES
from core.logic.grounding.coins import NO_COINS, CoinDraws
from core.logic.grounding.interpretation import EgoView, EntityRow, Interpretation
from core.logic.grounding.pair_geometry import PairGeom
from core.logic.grounding.predicate_tables import PredicateTables
from core.logic.grounding.view_slices import ViewSlices

__all__ = ["Grounding", "PLACEHOLDER"]

#: Name of padding entities in observations (the reference's ``Entity_PH_k``).
PLACEHOLDER = "PH"
_NO_PAIRS = np.zeros((0, 2), np.int64)
_NO_PAIRS.setflags(write=False)


class Grounding(Interpretation):
    """All predicate truths of one step, per ego view. Thread-safe for reading (lazy parts are locked).

    ``grounder`` is the :class:`~core.logic.grounding.grounder.Grounder` that made it (its field of view:
    ``grounder.fov_boxes``)."""

    def __init__(self, tables: PredicateTables, slices: ViewSlices, grounder: Any) -> None:
        self.tables = tables
        self.slices = slices
        self.grounder = grounder
        self.ontology = tables.ontology
        self.snapshot = tables.snapshot
        self.step = tables.snapshot.step
        self.names = tables.names
        self.ent = tables.ent
        self.valid = tables.valid

    # -- the drawn coins ------------------------------------------------------------------------------------------
    @property
    def coins(self) -> CoinDraws:
        """The CollidingClose coins of this step (after any forcing): per predicate, keys a·N + b ascending and
        their outcomes (core/logic/grounding/coins.py). Read-only by convention: the tables read them."""
        return self.tables.coins

    def coin_outcomes(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """:attr:`coins` as agent pairs: per CollidingClose predicate (ontology order), (int64 [K, 2] pairs (a, b)
        in draw order, bool [K] outcomes) — what an episode records and ``Grounder.ground(forced_coins=)`` takes."""
        n = len(self.names)
        out = {}
        for name in self.tables.index.colliding_names:
            keys, vals = self.tables.coins.get(name, NO_COINS)
            if not len(keys):   # most steps of most predicates: no coin (recorded every step, so kept cheap)
                out[name] = (_NO_PAIRS, vals)
                continue
            pairs = np.empty((len(keys), 2), np.int64)
            np.divmod(keys, n, out=(pairs[:, 0], pairs[:, 1]))
            out[name] = (pairs, vals)
        return out

    # -- Interpretation: global values (the tables) ---------------------------------------------------------------
    def unary(self, pred: str) -> np.ndarray:
        """bool [N]: the unary predicate for every agent (independent of who looks)."""
        return self.tables.unary(pred)

    def pair(self, pred: str, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
        """Binary predicate for global index arrays ``a`` (first argument) and ``b`` (broadcast; -1 → False)."""
        return self.tables.pair(pred, a, b)

    def truth(self, pred: str, *agents: int) -> bool:
        """Truth of one ground atom over global agent indices, e.g. ``truth("NextTo", 3, 5)``."""
        return self.tables.truth(pred, *agents)

    # -- Interpretation: per-ego views ------------------------------------------------------------------------
    def unary_local(self, pred: str) -> np.ndarray:
        return self.tables.unary_local(pred)

    def binary_local(self, pred: str) -> np.ndarray:
        return self.tables.binary_local(pred)

    def binary_view(self, pred: str, ego: int) -> np.ndarray:
        """bool [K, K]: ``binary_local(pred)[ego]`` without the other views' tables (the inspector shows one view)."""
        return self.tables.binary_view(pred, ego)

    def binary_rows(self, pred: str, rows: np.ndarray) -> np.ndarray:
        return self.tables.binary_rows(pred, rows)

    # -- Interpretation: the engines' slices ----------------------------------------------------------------------
    def var_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        return self.slices.var_slices(keys)

    def var_bits(self, keys: Sequence[tuple[str, str]], kern: Any) -> np.ndarray | None:
        if self.slices.packs_bits:
            return self.slices.var_bits(keys, kern)
        return super().var_bits(keys, kern)

    def ego_slices(self, keys: Sequence[tuple[str, str]]) -> np.ndarray:
        return self.slices.ego_slices(keys)

    # -- one ego's view as plain data -----------------------------------------------------------------------------
    def ego_view(self, ego: int) -> EgoView:
        """Plain data: every entity of ego's view with its true unary predicates and true relations."""
        ents = self.entities(ego)
        names = [self.names[a] for a in ents]
        rows = []
        binaries = self.ontology.binary
        pair_vals = {p.name: self.pair(p.name, ents[:, None], ents[None, :]) for p in binaries}
        for i, a in enumerate(ents):
            unary = tuple(p.name for p in self.ontology.unary if self.unary(p.name)[a])
            rel = tuple((p.name, names[j]) for p in binaries for j in range(len(ents)) if pair_vals[p.name][i, j])
            rows.append(EntityRow(i, int(a), names[i], unary, rel))
        return EgoView(ego, self.names[ego], self.step, tuple(rows))

    def observation(self, ego: int, n_entities: int = 5) -> np.ndarray:
        """The SPF observation (docs/reference.md#spf-observation): float32, predicates in ontology order, each a
        contiguous block — unary ``[P(e0..e{n-1})]``, binary row-major ``[P(ei, ej)]``; missing entities are
        placeholders (0)."""
        # The SPF env builds this every step, so it reads the per-view tables the engine already computed
        # (binary predicates are pure functions of the pair, so ego's [k, k] slice of its view is exactly the
        # block wanted) and computes only the missing ones, on one shared pair geometry.
        n = int(n_entities)
        k = min(n, int(self.valid[ego].sum()))
        t = self.tables
        if t.dense is not None:
            return self._observation_dense(ego, n, k)
        out = np.zeros(sum(n ** p.arity for p in self.ontology.grounded), dtype=np.float32)
        u_local = t.built_unary_local()
        geom = None
        off = 0
        for p in self.ontology.grounded:
            if p.arity == 1:
                if u_local is not None:
                    out[off: off + k] = u_local[p.name][ego, :k]
                else:
                    out[off: off + k] = self.unary(p.name)[self.ent[ego, :k]]
                off += n
                continue
            b = t.built_binary_local(p.name)
            blk = out[off: off + n * n].reshape(n, n)
            if b is not None:
                blk[:k, :k] = b[ego, :k, :k]
            else:
                if geom is None:
                    idx = self.ent[ego, :k].astype(np.int64)
                    geom = PairGeom.of(t.positions, np.repeat(idx, k), np.tile(idx, k))
                blk[:k, :k] = t.compute_binary(p, geom).reshape(k, k)
            off += n * n
        return out

    def _observation_dense(self, ego: int, n: int, k: int) -> np.ndarray:
        """:meth:`observation` gathered from the global tables: every unary block with one gather, every
        binary block with another, scattered into the layout by precomputed positions."""
        onto, t = self.ontology, self.tables
        idx = self.ent[ego, :k]
        ub = np.zeros((len(onto.unary), n), dtype=bool)
        ub[:, :k] = t.unary_rows()[:, idx]
        bb = np.zeros((len(onto.binary), n, n), dtype=bool)
        if onto.binary:
            pairs = t.pair_rows(range(len(onto.binary)))
            bb[:, :k, :k] = pairs[:, idx[:, None], idx[None, :]]
        pos = self.slices.plans.observation(n)
        out = np.empty(len(pos), dtype=np.float32)
        out[pos] = np.concatenate([ub.ravel(), bb.ravel()])
        return out

    def entity_names(self, ego: int, n_entities: int | None = None) -> list[str]:
        """Names of ego's entities (padded with ``PH`` to ``n_entities`` when given)."""
        names = [self.names[a] for a in self.entities(ego)]
        if n_entities is not None:
            names = names[:n_entities] + [PLACEHOLDER] * max(0, n_entities - len(names))
        return names

    def heading_name(self, agent: int) -> str:
        return HEADING_NAMES[int(self.tables.headings[agent])]
