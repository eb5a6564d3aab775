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

This module is the public entry: :class:`Grounder` runs one step (domains, coins, then a
:class:`~core.logic.grounding.grounded.Grounding`). The parts, one job each:

* core/logic/grounding/index.py — which table row holds which predicate (``PredicateIndex``, one per ontology);
* core/logic/grounding/field_of_view.py — field-of-view boxes and the domains ``ent[N, K]``;
* core/logic/grounding/agent_static.py — what the agent table fixes (kinds, semantic rows, reaches), cached per table;
* core/logic/grounding/coins.py — the CollidingClose coin draws (one draw per coin pair and step, in ascending (a, b)
  order, so all views agree and a run is reproducible from the rng alone; docs/reference.md#collidingclose);
* core/logic/grounding/pair_geometry.py — offsets, distances and angle tests of agent pairs;
* core/logic/grounding/predicate_tables.py — the unary and binary truth tables of a step (``PredicateTables``);
* core/logic/grounding/gather_plans.py — the memoised index arithmetic of the engines' reads (``GatherPlans``);
* core/logic/grounding/view_slices.py — the per-view slices the engines read (``ViewSlices``);
* core/logic/grounding/grounded.py — one grounded step, made of those two (``Grounding``).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from core.base.world import AgentTable, WorldSnapshot
from core.logic.fast import kernels as fast_kernels
from core.logic.grounding.agent_static import AgentStatic, AgentStaticCache, collide_range
from core.logic.grounding.coins import CoinDraws, coin_pairs, draw_coins, draw_coins_dense, force_coins
from core.logic.grounding.field_of_view import FieldOfView, domains_from_mask, domains_from_pairs
from core.logic.grounding.gather_plans import GatherPlans
from core.logic.grounding.grounded import PLACEHOLDER, Grounding
from core.logic.grounding.index import PredicateIndex
from core.logic.grounding.interpretation import EgoView, EntityRow, Interpretation, TableInterpretation
from core.logic.grounding.pair_geometry import PairGeom
from core.logic.grounding.predicate_tables import IntersectionLayers, PredicateTables
from core.logic.grounding.spatial import box_mask, box_members
from core.logic.grounding.view_slices import ViewSlices
from core.logic.lang.ontology import Ontology, Predicate
from core.map.model import CityMap

__all__ = ["Interpretation", "TableInterpretation", "Grounder", "Grounding", "EgoView", "EntityRow",
           "PLACEHOLDER", "DENSE_PAIR_AGENTS"]

#: Scenes with at most this many agents ground binary predicates once on all N×N global pairs and gather each
#: view's tables from those matrices. At this size numpy's per-call overhead, not the element count, is the
#: cost, so one pass over N² pairs (shared by every view, every slice and the coin draw) is cheaper than
#: per-view [N, K, K] work up to about this size (on the expert rules). Larger scenes keep per-view geometry
#: (memory O(N·K²) instead of O(N²)). Both paths give identical values: a binary predicate is a pure function of
#: the global pair.
DENSE_PAIR_AGENTS = 128


class Grounder:
    """Grounds an ontology on a city: ``Grounder(city, ontology).ground(snapshot, rng)``.

    Uses only ``city.intersections``, the city shape and the snapshot's positions/headings/agent table. Its parts
    are fixed at construction and shared by every step it grounds: the :class:`PredicateIndex` of the ontology,
    the city's :class:`IntersectionLayers`, the :class:`FieldOfView`, the :class:`AgentStaticCache` and the
    :class:`GatherPlans`. Thread-safe: one grounder may serve a simulation and an inspector at once (its caches
    hold values computed from their keys alone).
    """

    def __init__(self, city: CityMap, ontology: Ontology) -> None:
        self.city = city
        self.ontology = ontology
        self.height, self.width = int(city.height), int(city.width)
        self.index = PredicateIndex.of(ontology)
        self.layers = IntersectionLayers.of(city)
        self.field_of_view = FieldOfView(self.height, self.width, ontology.view)
        self.fov, self.behind = self.field_of_view.fov, self.field_of_view.behind
        self.statics = AgentStaticCache(self.index)
        self.plans = GatherPlans(self.index)
        # per agent count: (arange(N), off-diagonal mask) for the dense pair geometry (read-only, shared)
        self._dense_index: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def fov_boxes(self, positions: np.ndarray, headings: np.ndarray) -> np.ndarray:
        """Inclusive crop boxes (r0, r1, c0, c1) per agent, clipped to the map (docs/reference.md#field-of-view)."""
        return self.field_of_view.boxes(positions, headings)

    def ground(self, snapshot: WorldSnapshot, rng: np.random.Generator,
               view_limits: Mapping[int, int] | None = None,
               forced_coins: Mapping[tuple[str, int, int], bool] | None = None) -> Grounding:
        """Ground every predicate for every agent's view of ``snapshot``.

        ``view_limits[ego]`` caps that ego's domain (ego included) to the ego plus the first in-view others
        in agent order (SPF, docs/reference.md#spf-observation). ``rng`` supplies the CollidingClose coin flips
        (see core/logic/grounding/coins.py).
        ``forced_coins`` ``{(predicate, a, b): outcome}`` fixes some of those flips (scenes, core/sim/scene.py; the
        inspector replaying the recorded coins of a step, core/view/inspect.py): every coin is still drawn from
        ``rng``, so the random stream after this call is the same as without forcing, then the listed outcomes
        replace the drawn ones. A key that draws no coin in this snapshot (see :meth:`coin_pairs`) is a ValueError.
        """
        pos = np.asarray(snapshot.positions, dtype=np.int64)
        head = np.asarray(snapshot.headings, dtype=np.int64)
        n = len(pos)
        st = self.statics.get(snapshot.agents)
        colliding = self.index.colliding
        ent: np.ndarray | None
        if n == 0:
            ent = np.zeros((0, 1), dtype=np.int32)
            return self._grounding(snapshot, st, ent, {})
        boxes = self.fov_boxes(pos, head)
        view = self.field_of_view
        lim = view.view_limits(n, view_limits) if view_limits else None
        if n > DENSE_PAIR_AGENTS:
            kern = fast_kernels()
            ent = view.kernel_domains(kern, pos, boxes, lim) if kern is not None else None
            if ent is None:
                ent = domains_from_pairs(*box_members(pos, boxes), n, lim)
            coins = {p.name: draw_coins(p, pos, head, st, rng, kern) for p in colliding}
            if forced_coins:
                force_coins(coins, None, forced_coins, n)
            return self._grounding(snapshot, st, ent, coins)
        m = box_mask(pos, boxes)
        # every ego inside its own box is the normal case (positions on the map); else the general path
        if m.diagonal().all():
            ent = domains_from_mask(m, lim)
        else:
            q, a = np.nonzero(m)
            ent = domains_from_pairs(q, a, n, lim)
        geom = PairGeom.all_pairs(pos, *self._dense_indices(n))
        coins, tables = {}, {}
        for p in colliding:  # ontology order: the order of the rng draws
            coins[p.name], tables[p.name] = draw_coins_dense(p, geom, head, st, rng)
        if forced_coins:
            force_coins(coins, tables, forced_coins, n)
        return self._grounding(snapshot, st, ent, coins, geom, tables)

    def _grounding(self, snapshot: WorldSnapshot, st: AgentStatic, ent: np.ndarray, coins: CoinDraws,
                   dense: PairGeom | None = None, pair_tables: dict[str, np.ndarray] | None = None) -> Grounding:
        tables = PredicateTables(self.index, self.layers, snapshot, st, ent, ent >= 0, coins, dense, pair_tables)
        return Grounding(tables, ViewSlices(tables, self.plans), self)

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
            return {p.name: np.zeros((0, 2), dtype=np.int64) for p in self.index.colliding}
        return coin_pairs(self.index.colliding, pos, head, self.statics.get(snapshot.agents))

    def collide_range(self, pred: Predicate, agents: AgentTable) -> np.ndarray:
        """Reach per agent of the CollidingClose predicate ``pred`` (see
        :func:`core.logic.grounding.agent_static.collide_range`)."""
        return collide_range(pred, agents)
