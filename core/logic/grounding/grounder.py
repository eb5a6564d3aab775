"""Grounding: the truth of every ontology predicate for every agent's own view, computed vectorised.

Layout (why): each agent is an ego with its own closed domain — itself first, then the agents inside its
field of view in ascending agent order (docs/reference.md#who-is-in-view). We keep these domains as a padded
matrix ``ent[N, K]`` (global agent indices, -1 = padding) so the engines evaluate all egos at once with array
operations.
Unary predicates do not depend on the ego and are computed once per agent (``[N]``) then gathered;
binary predicates are pure functions of the global pair, computed lazily and cached — an engine only pays
for the predicates its rules use. Small scenes (≤ :data:`DENSE_PAIR_AGENTS` agents) compute each one once on
all N×N pairs and gather every view's tables from it; larger ones compute on the gathered ``[N, K, K]`` pairs
only (never on all N×N pairs).

This module is the public entry: :class:`Grounder` runs one step (domains, coins, then a :class:`Grounding`)
and :class:`Grounding` adds the inspector's and SPF's plain-data reads. The parts, one job each:

* core/logic/grounding/field_of_view.py — field-of-view boxes and the domains ``ent[N, K]``;
* core/logic/grounding/coins.py — the CollidingClose coin draws (one draw per coin pair and step, in ascending (a, b)
  order, so all views agree and a run is reproducible from the rng alone; docs/reference.md#collidingclose);
* core/logic/grounding/pair_geometry.py — offsets, distances and angle tests of agent pairs;
* core/logic/grounding/predicate_tables.py — the unary and binary truth tables of a step (``GroundingTables``);
* core/logic/grounding/view_slices.py — the per-view slices the engines read (``GroundingSlices``).
"""
from __future__ import annotations

import threading
from typing import Mapping

import numpy as np

from core.base.codes import HEADING_NAMES
from core.map.model import CityMap
from core.base.world import AgentTable, WorldSnapshot
from core.logic.grounding.coins import coin_pairs, collide_range, draw_coins, draw_coins_dense, force_coins
from core.logic.fast import kernels as fast_kernels
from core.logic.grounding.field_of_view import FieldOfView, domains_from_mask, domains_from_pairs
from core.logic.grounding.interpretation import EgoView, EntityRow, Interpretation, TableInterpretation
from core.logic.lang.ontology import Ontology, Predicate
from core.logic.grounding.pair_geometry import PairGeom
from core.logic.grounding.predicate_tables import AgentStatic
from core.logic.grounding.spatial import box_mask, box_members
from core.logic.grounding.view_slices import GroundingSlices

__all__ = ["Interpretation", "TableInterpretation", "Grounder", "Grounding", "EgoView", "EntityRow",
           "PLACEHOLDER"]

#: Name of padding entities in observations (the reference's ``Entity_PH_k``).
PLACEHOLDER = "PH"

#: Scenes with at most this many agents ground binary predicates once on all N×N global pairs and gather each
#: view's tables from those matrices. At this size numpy's per-call overhead, not the element count, is the
#: cost, so one pass over N² pairs (shared by every view, every slice and the coin draw) is cheaper than
#: per-view [N, K, K] work (measured on the expert rules: grounding + decision 20 % faster at 40–128 agents,
#: equal near 200, 1.4× slower at 300). Larger scenes keep per-view geometry (memory O(N·K²) instead of
#: O(N²)). Both paths give identical values: a binary predicate is a pure function of the global pair.
DENSE_PAIR_AGENTS = 128


class Grounder:
    """Grounds an ontology on a city: ``Grounder(city, ontology).ground(snapshot, rng)``.

    Uses only ``city.intersections``, the city shape and the snapshot's positions/headings/agent table.
    """

    def __init__(self, city: CityMap, ontology: Ontology) -> None:
        self.city = city
        self.ontology = ontology
        inter = np.asarray(city.intersections)
        self.height, self.width = int(city.height), int(city.width)
        self.at_car = inter[0] != 0
        self.at_ped = inter[1] != 0
        self.in_box = inter[2] != 0
        # the same three layers stacked, for gathering all agents' cells at once
        self._cell_layers = np.stack([self.at_car, self.at_ped, self.in_box])
        self._view = FieldOfView(self.height, self.width, ontology.view)
        self.fov, self.behind = self._view.fov, self._view.behind
        self._colliding = [p for p in ontology.grounded if p.grounding == "colliding_close"]
        self._unary_names = [p.name for p in ontology.unary]
        self._unary_row = {nm: i for i, nm in enumerate(self._unary_names)}
        self._spatial_unary = [(i, p.grounding) for i, p in enumerate(ontology.unary)
                               if p.grounding in ("is_at_intersection", "is_in_intersection")]
        self._binary_row = {p.name: i for i, p in enumerate(ontology.binary)}
        self._static: AgentStatic | None = None
        self._static_lock = threading.Lock()
        # per agent count: (arange(N), off-diagonal mask) for the dense pair geometry (read-only, shared)
        self._dense_index: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # gather plans of Grounding.var_slices / ego_slices, per key tuple (an engine asks with the same keys
        # every step)
        self._slice_plans: dict[tuple, tuple] = {}
        self._obs_positions: dict[int, np.ndarray] = {}

    def static(self, agents: AgentTable) -> AgentStatic:
        st = self._static
        if st is None or st.agents is not agents:
            st = AgentStatic(self, agents)
            with self._static_lock:
                self._static = st
        return st

    def fov_boxes(self, positions: np.ndarray, headings: np.ndarray) -> np.ndarray:
        """Inclusive crop boxes (r0, r1, c0, c1) per agent, clipped to the map (docs/reference.md#field-of-view)."""
        return self._view.boxes(positions, headings)

    def ground(self, snapshot: WorldSnapshot, rng: np.random.Generator,
               view_limits: Mapping[int, int] | None = None,
               forced_coins: Mapping[tuple[str, int, int], bool] | None = None) -> "Grounding":
        """Ground every predicate for every agent's view of ``snapshot``.

        ``view_limits[ego]`` caps that ego's domain (ego included) to the ego plus the first in-view others
        in agent order (SPF, docs/reference.md#spf-observation). ``rng`` supplies the CollidingClose coin flips
        (see core/logic/grounding/coins.py).
        ``forced_coins`` ``{(predicate, a, b): outcome}`` fixes some of those flips (scenes, core/sim/scene.py):
        every coin is still drawn from ``rng``, so the random stream after this call is the same as without
        forcing, then the listed outcomes replace the drawn ones. A key that draws no coin in this snapshot
        (see :meth:`coin_pairs`) is a ValueError.
        """
        pos = np.asarray(snapshot.positions, dtype=np.int64)
        head = np.asarray(snapshot.headings, dtype=np.int64)
        n = len(pos)
        st = self.static(snapshot.agents)
        if n == 0:
            ent = np.zeros((0, 1), dtype=np.int32)
            return Grounding(self, snapshot, st, ent, ent >= 0, {})
        boxes = self.fov_boxes(pos, head)
        lim = self._view.view_limits(n, view_limits) if view_limits else None
        if n > DENSE_PAIR_AGENTS:
            kern = fast_kernels()
            ent = self._view.kernel_domains(kern, pos, boxes, lim) if kern is not None else None
            if ent is None:
                ent = domains_from_pairs(*box_members(pos, boxes), n, lim)
            coins = {p.name: draw_coins(p, pos, head, st, rng, kern) for p in self._colliding}
            if forced_coins:
                force_coins(coins, None, forced_coins, n)
            return Grounding(self, snapshot, st, ent, ent >= 0, coins)
        m = box_mask(pos, boxes)
        # every ego inside its own box is the normal case (positions on the map); else the general path
        ent = domains_from_mask(m, lim) if m.diagonal().all() else domains_from_pairs(*np.nonzero(m), n, lim)
        geom = PairGeom.all_pairs(pos, *self._dense_indices(n))
        coins, tables = {}, {}
        for p in self._colliding:  # ontology order: the order of the rng draws
            coins[p.name], tables[p.name] = draw_coins_dense(p, geom, head, st, rng)
        if forced_coins:
            force_coins(coins, tables, forced_coins, n)
        return Grounding(self, snapshot, st, ent, ent >= 0, coins, dense=geom, pair_tables=tables)

    def _dense_indices(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        hit = self._dense_index.get(n)
        if hit is None:
            index = np.arange(n)
            distinct = ~np.eye(n, dtype=bool)
            index.setflags(write=False)
            distinct.setflags(write=False)
            hit = self._dense_index[n] = (index, distinct)
        return hit

    def coin_pairs(self, snapshot: WorldSnapshot) -> dict[str, np.ndarray]:
        """Per CollidingClose predicate, the ordered agent pairs (a, b) that draw a coin when ``snapshot`` is
        grounded, in draw order (int64 ``[K, 2]``): a has moved, b is another agent within a's range, and b is on
        a's cell or (a being a pedestrian) straight ahead of a. Scenes check forced coins against it."""
        pos = np.asarray(snapshot.positions, dtype=np.int64)
        head = np.asarray(snapshot.headings, dtype=np.int64)
        if len(pos) == 0:
            return {p.name: np.zeros((0, 2), dtype=np.int64) for p in self._colliding}
        return coin_pairs(self._colliding, pos, head, self.static(snapshot.agents))

    def collide_range(self, pred: Predicate, agents: AgentTable) -> np.ndarray:
        """Reach per agent of the CollidingClose predicate ``pred`` (see :func:`core.logic.grounding.coins.collide_range`)."""
        return collide_range(pred, agents)


class Grounding(GroundingSlices):
    """All predicate truths of one step, per ego view. Thread-safe for reading (lazy parts are locked).

    The tables and their state: core/logic/grounding/predicate_tables.py; the engines' slices: core/logic/grounding/view_slices.py;
    here, the inspector's and SPF's reads of one ego's view."""

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
        if self._dense is not None:
            return self._observation_dense(ego, n, k)
        out = np.zeros(sum(n ** p.arity for p in self.ontology.grounded), dtype=np.float32)
        u_local = self._unary_local
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
            b = self._binary_local.get(p.name)
            blk = out[off: off + n * n].reshape(n, n)
            if b is not None:
                blk[:k, :k] = b[ego, :k, :k]
            else:
                if geom is None:
                    idx = self.ent[ego, :k].astype(np.int64)
                    geom = PairGeom.of(self._pos, np.repeat(idx, k), np.tile(idx, k))
                blk[:k, :k] = self._compute_binary(p, geom).reshape(k, k)
            off += n * n
        return out

    def _observation_dense(self, ego: int, n: int, k: int) -> np.ndarray:
        """:meth:`observation` gathered from the global tables: every unary block with one gather, every
        binary block with another, scattered into the layout by precomputed positions."""
        onto = self.ontology
        idx = self.ent[ego, :k]
        ub = np.zeros((len(onto.unary), n), dtype=bool)
        ub[:, :k] = self._unary_rows()[:, idx]
        bb = np.zeros((len(onto.binary), n, n), dtype=bool)
        if onto.binary:
            pairs = self._pair_rows(range(len(onto.binary)))
            bb[:, :k, :k] = pairs[:, idx[:, None], idx[None, :]]
        pos = self.grounder._obs_positions.get(n)
        if pos is None:
            pos = self.grounder._obs_positions[n] = _observation_positions(onto, n)
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
        return HEADING_NAMES[int(self._head[agent])]


def _observation_positions(onto: Ontology, n: int) -> np.ndarray:
    """Index in the observation vector of each value of [unary blocks (ontology.unary order), binary blocks
    (ontology.binary order)] — the observation interleaves them in file order."""
    unary, binary, off = [], [], 0
    for p in onto.grounded:
        (unary if p.arity == 1 else binary).append(np.arange(off, off + n ** p.arity))
        off += n ** p.arity
    return np.concatenate(unary + binary + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
