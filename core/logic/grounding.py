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

CollidingClose coin flips (docs/reference.md#collidingclose): the reference draws a fresh coin each time a pair is
grounded, so one physical pair can get different values in different agents' views. Here every ordered pair (a, b)
that needs a coin in a step (a has moved, distance ≤ range(a), and same cell or a pedestrian with b straight ahead)
gets exactly one draw ``rng.random() < coin``, in ascending (a, b) order, independent of who sees the pair and of
``view_limits``. All views therefore agree, and a run is reproducible from the rng alone.
"""
from __future__ import annotations

import math
import threading
from typing import Mapping, NamedTuple, Sequence

import numpy as np

from ..codes import HEADING_NAMES, Kind
from ..map.model import CityMap
from ..world import AgentTable, WorldSnapshot
from .fast import kernels as fast_kernels
from .ontology import Ontology, Predicate
from .interpretation import EgoView, EntityRow, Interpretation, TableInterpretation
from .registry import CONCEPT_ORDER
from .spatial import DENSE_LIMIT, box_mask, box_members

__all__ = ["Interpretation", "TableInterpretation", "Grounder", "Grounding", "EgoView", "EntityRow",
           "PLACEHOLDER"]

#: Name of padding entities in observations (the reference's ``Entity_PH_k``).
PLACEHOLDER = "PH"

# (d_row, d_col) per heading index; row -1 (Heading.NONE) is the zero vector. int64 like the positions (mixed
# integer widths make numpy cast on every operation, which dominates at a few hundred elements).
_DIRS = np.array([[0, -1], [0, 1], [-1, 0], [1, 0], [0, 0]], dtype=np.int64)
_DIRS_R = np.ascontiguousarray(_DIRS[:, 0])
_DIRS_C = np.ascontiguousarray(_DIRS[:, 1])
# columns of a position giving (r0, r1, c0, c1) before the per-heading offsets (fov_boxes)
_BOX_COLS = np.array([0, 0, 1, 1])

_CAR = int(Kind.CAR)
_PED = int(Kind.PEDESTRIAN)


class _PairGeom:
    """Pair geometry for first-argument indices ``a`` and second-argument indices ``b`` (broadcastable, -1 =
    none): offsets ``b - a`` and squared distance, plus the mask of real, distinct pairs."""

    __slots__ = ("a", "b", "dr", "dc", "d2", "ok", "side", "complete")

    def __init__(self, a: np.ndarray, b: np.ndarray, dr: np.ndarray, dc: np.ndarray, ok: np.ndarray,
                 complete: bool = False) -> None:
        self.a, self.b, self.dr, self.dc, self.ok = a, b, dr, dc, ok
        self.d2 = dr * dr + dc * dc
        self.side: tuple[np.ndarray, np.ndarray] | None = None  # LeftOf/RightOf intermediate (Grounding._side)
        self.complete = complete  # a = arange(N)[:, None], b = arange(N)[None, :] (all_pairs)

    def at_a(self, values: np.ndarray) -> np.ndarray:
        """Per-agent ``values`` of each pair's first argument (a broadcastable view for all_pairs)."""
        return values[:, None] if self.complete else values[self.a]

    def at_b(self, values: np.ndarray) -> np.ndarray:
        """Per-agent ``values`` of each pair's second argument (a broadcastable view for all_pairs)."""
        return values[None, :] if self.complete else values[self.b]

    @classmethod
    def of(cls, pos: np.ndarray, a: np.ndarray, b: np.ndarray) -> "_PairGeom":
        pa, pb = pos[a], pos[b]
        return cls(a, b, pb[..., 0] - pa[..., 0], pb[..., 1] - pa[..., 1], (a >= 0) & (b >= 0) & (a != b))

    @classmethod
    def all_pairs(cls, pos: np.ndarray, index: np.ndarray, distinct: np.ndarray) -> "_PairGeom":
        """Every ordered pair of the N agents, as [N, N] arrays (``a`` = row = first argument). ``index`` is
        ``arange(N)`` and ``distinct`` the off-diagonal mask, passed in so that callers can reuse them."""
        r, c = pos[:, 0], pos[:, 1]
        return cls(index[:, None], index[None, :], r[None, :] - r[:, None], c[None, :] - c[:, None], distinct,
                   complete=True)

    @classmethod
    def local(cls, pos: np.ndarray, ent: np.ndarray, valid: np.ndarray) -> "_PairGeom":
        """All pairs (ent[e, i], ent[e, j]) of each ego's domain: arrays broadcast to [E, K, K] (int32: map
        coordinates are small, and half-width arrays halve the memory traffic for thousands of agents)."""
        p = pos.astype(np.int32)[ent]  # [E, K, 2]
        k = ent.shape[1]
        ok = valid[:, :, None] & valid[:, None, :] & ~np.eye(k, dtype=bool)[None]
        a = ent[:, :, None].astype(np.int64)
        b = ent[:, None, :].astype(np.int64)
        pr = np.ascontiguousarray(p[..., 0])
        pc = np.ascontiguousarray(p[..., 1])
        return cls(a, b, pr[:, None, :] - pr[:, :, None], pc[:, None, :] - pc[:, :, None], ok)


#: Scenes with at most this many agents ground binary predicates once on all N×N global pairs and gather each
#: view's tables from those matrices. At this size numpy's per-call overhead, not the element count, is the
#: cost, so one pass over N² pairs (shared by every view, every slice and the coin draw) is cheaper than
#: per-view [N, K, K] work (measured on the expert rules: grounding + decision 20 % faster at 40–128 agents,
#: equal near 200, 1.4× slower at 300). Larger scenes keep per-view geometry (memory O(N·K²) instead of
#: O(N²)). Both paths give identical values: a binary predicate is a pure function of the global pair.
DENSE_PAIR_AGENTS = 128


class _AgentStatic:
    """Per-agent-table arrays reused across steps (the agent table rarely changes within an episode)."""

    def __init__(self, grounder: "Grounder", agents: AgentTable) -> None:
        self.agents = agents
        n = len(agents)
        self.kinds = np.asarray(agents.kinds, dtype=np.int64)
        self.is_car = self.kinds == _CAR
        self.is_ped = self.kinds == _PED
        self.priority = np.asarray(agents.priorities, dtype=np.int32)

        def concept(name: str) -> np.ndarray:
            arr = agents.concepts.get(name)
            return np.asarray(arr, dtype=bool) if arr is not None else np.zeros(n, dtype=bool)

        self.semantic: dict[str, np.ndarray] = {}
        for p in grounder.ontology.unary:
            g = p.grounding
            if g is None:
                v = np.zeros(n, dtype=bool)
            elif g == "is_pedestrian":
                v = self.is_ped
            elif g == "is_car":
                v = self.is_car
            elif g in ("is_ambulance", "is_bus", "is_police", "is_tiro", "is_reckless"):
                v = ~self.is_ped & concept(g[3:])
            elif g in ("is_old", "is_young"):
                v = ~self.is_car & concept(g[3:])
            else:
                continue
            self.semantic[p.name] = v
        # every unary predicate as one [U, N] array (ontology order) for gathers: the semantic rows are fixed by
        # the agent table; the spatial rows (intersections) are filled in per step by Grounding._unary_rows
        self.unary_rows = np.zeros((len(grounder.ontology.unary), n), dtype=bool)
        for i, p in enumerate(grounder.ontology.unary):
            if p.name in self.semantic:
                self.unary_rows[i] = self.semantic[p.name]
        self.unary_rows.setflags(write=False)
        self.reach = {p.name: grounder.collide_range(p, agents) for p in grounder._colliding}
        #: floor(reach²): d2 <= reach² ⟺ d2 <= floor(reach²) for integer d2
        self.reach2 = {k: np.floor(v * v).astype(np.int64) for k, v in self.reach.items()}


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
        view = ontology.view
        self.fov = f = int(view["fov"])
        b = view["behind"]
        self.behind = (int(b["left"]), int(b["right"]), int(b["up"]), int(b["down"]))
        left, right, up, down = self.behind
        # (r0, r1, c0, c1) offsets per heading LEFT, RIGHT, UP, DOWN, NONE (index -1 → last row); see
        # docs/reference.md#field-of-view: 25 ahead and aside, 1 behind Left/Up, 2 behind Right/Down by default
        self._box_off = np.array([[-f, f, -f, left], [-f, f, -right, f], [-f, up, -f, f], [-down, f, -f, f],
                                  [-f, f, -f, f]], dtype=np.int64)
        self._box_hi = np.array([self.height - 1, self.height - 1, self.width - 1, self.width - 1],
                                dtype=np.int64)
        self._colliding = [p for p in ontology.grounded if p.grounding == "colliding_close"]
        self._unary_names = [p.name for p in ontology.unary]
        self._unary_row = {nm: i for i, nm in enumerate(self._unary_names)}
        self._spatial_unary = [(i, p.grounding) for i, p in enumerate(ontology.unary)
                               if p.grounding in ("is_at_intersection", "is_in_intersection")]
        self._binary_row = {p.name: i for i, p in enumerate(ontology.binary)}
        self._static: _AgentStatic | None = None
        self._static_lock = threading.Lock()
        # per agent count: (arange(N), off-diagonal mask) for the dense pair geometry (read-only, shared)
        self._dense_index: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # gather plans of Grounding.var_slices / ego_slices, per key tuple (an engine asks with the same keys
        # every step)
        self._slice_plans: dict[tuple, tuple] = {}
        self._obs_positions: dict[int, np.ndarray] = {}
        self._limit_cache: dict[tuple, np.ndarray] = {}
        self._no_limits: dict[int, np.ndarray] = {}

    def static(self, agents: AgentTable) -> _AgentStatic:
        st = self._static
        if st is None or st.agents is not agents:
            st = _AgentStatic(self, agents)
            with self._static_lock:
                self._static = st
        return st

    # -- field of view ---------------------------------------------------------------------------------------
    def fov_boxes(self, positions: np.ndarray, headings: np.ndarray) -> np.ndarray:
        """Inclusive crop boxes (r0, r1, c0, c1) per agent, clipped to the map (docs/reference.md#field-of-view)."""
        pos = np.asarray(positions, dtype=np.int64)
        boxes = pos[:, _BOX_COLS] + self._box_off[np.asarray(headings, dtype=np.int64)]
        return np.minimum(np.maximum(boxes, 0), self._box_hi)

    def ground(self, snapshot: WorldSnapshot, rng: np.random.Generator,
               view_limits: Mapping[int, int] | None = None,
               forced_coins: Mapping[tuple[str, int, int], bool] | None = None) -> "Grounding":
        """Ground every predicate for every agent's view of ``snapshot``.

        ``view_limits[ego]`` caps that ego's domain (ego included) to the ego plus the first in-view others
        in agent order (SPF, docs/reference.md#spf-observation). ``rng`` supplies the CollidingClose coin flips
        (see module doc).
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
        lim = self._view_limits(n, view_limits) if view_limits else None
        if n > DENSE_PAIR_AGENTS:
            kern = fast_kernels()
            ent = self._kernel_domains(kern, pos, boxes, lim) if kern is not None else None
            if ent is None:
                ent = _domains_from_pairs(*box_members(pos, boxes), n, lim)
            coins = {p.name: self._draw_coins(p, pos, head, st, rng, kern) for p in self._colliding}
            if forced_coins:
                _force_coins(coins, None, forced_coins, n)
            return Grounding(self, snapshot, st, ent, ent >= 0, coins)
        m = box_mask(pos, boxes)
        # every ego inside its own box is the normal case (positions on the map); else the general path
        ent = _domains_from_mask(m, lim) if m.diagonal().all() else _domains_from_pairs(*np.nonzero(m), n, lim)
        geom = _PairGeom.all_pairs(pos, *self._dense_indices(n))
        coins, tables = {}, {}
        for p in self._colliding:  # ontology order: the order of the rng draws
            coins[p.name], tables[p.name] = self._draw_coins_dense(p, geom, head, st, rng)
        if forced_coins:
            _force_coins(coins, tables, forced_coins, n)
        return Grounding(self, snapshot, st, ent, ent >= 0, coins, dense=geom, pair_tables=tables)

    def _kernel_domains(self, kern, pos: np.ndarray, boxes: np.ndarray, lim: np.ndarray | None
                        ) -> np.ndarray | None:
        """:func:`_domains_from_pairs` of the in-view pairs by the compiled kernel (one loop, a bucket grid of
        half the view's side); None when some ego lies outside its own box (an off-map position),
        which the numpy path handles."""
        n = len(pos)
        if lim is None:
            lim = self._no_limits.get(n)
            if lim is None:
                lim = self._no_limits[n] = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        ent, ok = kern.domains(pos, boxes, lim, max(2, (2 * self.fov + 1) // 2))
        return ent if ok else None

    def _view_limits(self, n: int, view_limits: Mapping[int, int]) -> np.ndarray:
        """int64 [N]: the domain size cap per ego (no cap = int64 max), memoised per limits (a simulation passes
        the same ones every step)."""
        key = (n, tuple(view_limits.items()))
        lim = self._limit_cache.get(key)
        if lim is None:
            lim = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
            for ego, v in view_limits.items():
                lim[int(ego)] = max(int(v), 1)
            lim.setflags(write=False)
            if len(self._limit_cache) > 64:
                self._limit_cache.clear()
            self._limit_cache[key] = lim
        return lim

    def _dense_indices(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        hit = self._dense_index.get(n)
        if hit is None:
            index = np.arange(n)
            distinct = ~np.eye(n, dtype=bool)
            index.setflags(write=False)
            distinct.setflags(write=False)
            hit = self._dense_index[n] = (index, distinct)
        return hit

    # -- CollidingClose coins -----------------------------------------------------------------------------------
    def coin_pairs(self, snapshot: WorldSnapshot) -> dict[str, np.ndarray]:
        """Per CollidingClose predicate, the ordered agent pairs (a, b) that draw a coin when ``snapshot`` is
        grounded, in draw order (int64 ``[K, 2]``): a has moved, b is another agent within a's range, and b is on
        a's cell or (a being a pedestrian) straight ahead of a. Scenes check forced coins against it."""
        pos = np.asarray(snapshot.positions, dtype=np.int64)
        head = np.asarray(snapshot.headings, dtype=np.int64)
        n = len(pos)
        if n == 0:
            return {p.name: np.zeros((0, 2), dtype=np.int64) for p in self._colliding}
        st = self.static(snapshot.agents)
        out = {}
        for p in self._colliding:  # the draws of a throwaway generator: only the pairs are wanted
            keys, _ = self._draw_coins(p, pos, head, st, np.random.default_rng(0))
            out[p.name] = np.stack([keys // n, keys % n], axis=1)
        return out

    def collide_range(self, pred: Predicate, agents: AgentTable) -> np.ndarray:
        """Reach per agent: the first concept (tiro, bus, ambulance, old, young, police, reckless) with an entry
        in the range table, else the kind's entry (docs/reference.md#collisions)."""
        table = pred.params["range"]
        kinds = np.asarray(agents.kinds)
        reach = np.where(kinds == _CAR, float(table["car"]), float(table["pedestrian"]))
        done = np.zeros(len(agents), dtype=bool)
        for concept in CONCEPT_ORDER:
            if concept in table and concept in agents.concepts:
                has = np.asarray(agents.concepts[concept], dtype=bool) & ~done
                reach = np.where(has, float(table[concept]), reach)
                done |= has
        return reach

    def _draw_coins(self, pred: Predicate, pos: np.ndarray, head: np.ndarray, st: _AgentStatic,
                    rng: np.random.Generator, kern=None) -> tuple[np.ndarray, np.ndarray]:
        """The coin pairs of ``pred`` as keys a·N + b ascending and their outcomes, drawn from ``rng``;
        ``kern``: the compiled kernels (core/logic/fast.py), used for the pairs when given."""
        n = len(pos)
        reach = st.reach[pred.name]
        idx = np.nonzero(head >= 0)[0]
        if len(idx) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        angle = float(pred.params["angle"])
        if kern is not None and angle < math.pi / 2:   # the kernel knows the straight-ahead test below π/2
            keys = kern.coin_keys(pos, head, reach, st.reach2[pred.name], st.is_car, math.cos(angle) ** 2,
                                  max(2, int(math.ceil(float(reach.max())))))
        elif len(idx) * n <= DENSE_LIMIT:
            g = _PairGeom.of(pos, idx[:, None], np.arange(n)[None, :])
            need = _coin_needed(pred, g, head, st.reach2[pred.name], st.is_car)
            qa, b = np.nonzero(need)
            keys = idx[qa] * n + b  # row-major: sorted by (a, b)
        else:
            ri = np.ceil(reach[idx]).astype(np.int64)
            p = pos[idx]
            boxes = np.stack([p[:, 0] - ri, p[:, 0] + ri, p[:, 1] - ri, p[:, 1] + ri], axis=1)
            qq, b = box_members(pos, boxes)
            a = idx[qq]
            g = _PairGeom.of(pos, a, b)
            need = _coin_needed(pred, g, head, st.reach2[pred.name], st.is_car)
            keys = a[need] * n + b[need]  # sorted: box_members orders by (query, agent) and idx ascends
        vals = rng.random(len(keys)) < float(pred.params["coin"])
        return keys, vals

    def _draw_coins_dense(self, pred: Predicate, g: _PairGeom, head: np.ndarray, st: _AgentStatic,
                          rng: np.random.Generator) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        """:meth:`_draw_coins` on the all-pairs geometry, plus the predicate's whole [N, N] table.

        The coin-needing pairs are taken row-major from the [N, N] mask, i.e. in ascending (a, b) order — the
        same pairs in the same order as :meth:`_draw_coins`, hence the same draws. Table: a car's pair holds
        when b is straight ahead within reach; every coin pair holds iff its coin came up."""
        base, ahead = _colliding_parts(pred, g, head, st.reach2[pred.name])
        car = st.is_car[:, None]
        need = base & ((g.d2 == 0) | (~car & ahead))
        table = base & ahead & car
        if not (head >= 0).any():  # nobody has moved yet: no coin, and no draw (as _draw_coins)
            return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)), table
        keys = np.flatnonzero(need)  # = a * n + b, ascending
        vals = rng.random(len(keys)) < float(pred.params["coin"])
        np.put(table, keys, vals)  # coin pairs are never in the car part (ahead of a car excludes d2 == 0)
        return (keys, vals), table


def _force_coins(drawn: dict[str, tuple[np.ndarray, np.ndarray]], tables: dict[str, np.ndarray] | None,
                 forced: Mapping[tuple[str, int, int], bool], n: int) -> None:
    """Replace drawn coin outcomes by ``forced`` ones, in place (keys are sorted, so a binary search finds
    each pair); ``tables`` are the dense path's [N, N] predicate tables, kept in step."""
    for (name, a, b), value in forced.items():
        if name not in drawn:
            raise ValueError(f"{name} is not a CollidingClose predicate of this ontology "
                             f"(those are: {', '.join(drawn) or 'none'})")
        keys, vals = drawn[name]
        key = int(a) * n + int(b)
        j = int(np.searchsorted(keys, key))
        if j >= len(keys) or int(keys[j]) != key:
            raise ValueError(f"{name}({a}, {b}) draws no coin in this state (see Grounder.coin_pairs)")
        vals[j] = bool(value)
        if tables is not None:
            tables[name][int(a), int(b)] = bool(value)


def _domains_from_pairs(q: np.ndarray, a: np.ndarray, n: int, lim: np.ndarray | None) -> np.ndarray:
    """ent [N, K] from the in-view pairs (q = ego, a = agent), sorted by (q, a): per ego, itself first, then
    the others ascending, at most ``lim[ego]`` entities; -1 pads."""
    counts = np.bincount(q, minlength=n)
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(q)) - starts[q]
    # ego first: entries before the ego move one slot right, the ego goes to slot 0
    rank = np.where(a == q, 0, rank + (a < q))
    if lim is not None:
        keep = rank < lim[q]
        q, a, rank = q[keep], a[keep], rank[keep]
    k = int(rank.max()) + 1
    ent = np.full((n, k), -1, dtype=np.int32)
    ent[q, rank] = a
    return ent


def _domains_from_mask(m: np.ndarray, lim: np.ndarray | None) -> np.ndarray:
    """:func:`_domains_from_pairs` from the [N, N] in-view mask whose diagonal is all True, with one row sort
    instead of a dozen operations on pair lists: key = agent index if in view else N, the ego's key -1."""
    n = len(m)
    key = np.where(m, np.arange(n)[None, :], n)
    key.flat[:: n + 1] = -1
    key.sort(axis=1)
    counts = m.sum(axis=1)
    if lim is not None:
        counts = np.minimum(counts, lim)
    k = int(counts.max())
    ent = key[:, :k].astype(np.int32)
    ent[:, 0] = np.arange(n)
    ent[np.arange(k)[None, :] >= counts[:, None]] = -1
    return ent


def _d2_bounds(p: Predicate) -> tuple[int, int]:
    """Integer squared-distance thresholds of IsClose / NextTo: squared distances are integers, so
    ``lo < d <= hi`` ⟺ ``floor(lo²) < d² <= floor(hi²)`` and ``d < hi`` ⟺ ``d² < ceil(hi²)`` (exact, no floats
    on the arrays). Returns (floor(min²), floor(max²)) for is_close and (0, ceil(max²)) for next_to; memoised
    on the (immutable) predicate."""
    hit = p.__dict__.get("_d2_bounds")
    if hit is None:
        hi = float(p.params["max"])
        if p.grounding == "is_close":
            lo = float(p.params["min"])
            hit = (math.floor(lo * lo), math.floor(hi * hi))
        else:
            hit = (0, math.ceil(hi * hi))
        object.__setattr__(p, "_d2_bounds", hit)
    return hit


def _straight_ahead(pred: Predicate, g: _PairGeom, head_a: np.ndarray) -> np.ndarray:
    """angle between a's heading and (b - a) below the threshold (distance > 0 assumed by callers).

    For angles below π/2, ``arccos(dot/dist) < angle`` ⟺ ``dot > 0 and dot² > cos²(angle)·dist²``; with integer
    offsets the two never disagree (no offset ratio lies within rounding distance of cos(angle))."""
    dot = _DIRS_R[head_a] * g.dr + _DIRS_C[head_a] * g.dc
    angle = float(pred.params["angle"])
    if angle < math.pi / 2:
        c2 = math.cos(angle) ** 2
        return (dot > 0) & (dot * dot > c2 * g.d2)
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = np.where(g.d2 > 0, dot / np.sqrt(np.maximum(g.d2, 1)), -1.0)
    return np.arccos(np.clip(cos, -1.0, 1.0)) < angle


def _colliding_parts(pred: Predicate, g: _PairGeom, head: np.ndarray, reach2: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(base, ahead): a has moved and b is a distinct agent within a's reach; b is straight ahead of a."""
    ha = g.at_a(head)
    base = g.ok & (ha >= 0) & (g.d2 <= g.at_a(reach2))
    return base, _straight_ahead(pred, g, ha)


def _coin_needed(pred: Predicate, g: _PairGeom, head: np.ndarray, reach2: np.ndarray,
                 is_car: np.ndarray) -> np.ndarray:
    base, ahead = _colliding_parts(pred, g, head, reach2)
    same = g.d2 == 0
    return base & (same | (~g.at_a(is_car) & ahead))


class _SlicePlan(NamedTuple):
    """How :meth:`Grounding.var_slices` gathers a key tuple from the flat buffer."""

    bases: np.ndarray                # int64 [S, 1, 1]: each slot's row start in the buffer
    kinds: tuple[str, ...]           # the distinct view-offset kinds used ("u", "bxv", "bvx", "bvv")
    kind_of_slot: np.ndarray         # int64 [S]: index into ``kinds`` per slot
    pair_rows: tuple[int, ...]       # pair-table rows that must be computed first
    needs_unary: bool                # whether the unary rows must be filled first


class Grounding(Interpretation):
    """All predicate truths of one step, per ego view. Thread-safe for reading (lazy parts are locked)."""

    def __init__(self, grounder: Grounder, snapshot: WorldSnapshot, static: _AgentStatic, ent: np.ndarray,
                 valid: np.ndarray, coins: Mapping[str, tuple[np.ndarray, np.ndarray]],
                 dense: _PairGeom | None = None, pair_tables: Mapping[str, np.ndarray] | None = None) -> None:
        """``dense``: the all-pairs geometry when the scene is small (:data:`DENSE_PAIR_AGENTS`); binary
        predicates are then global [N, N] tables (``pair_tables`` holds those already computed) and every
        per-view table is gathered from them."""
        self.grounder = grounder
        self.ontology = grounder.ontology
        self.snapshot = snapshot
        self.step = snapshot.step
        self.names = tuple(snapshot.agents.names)
        self.ent = ent
        self.valid = valid
        self._st = static
        self._coins = coins
        self._pos = np.asarray(snapshot.positions, dtype=np.int64)
        self._head = np.asarray(snapshot.headings, dtype=np.int64)  # int64: an index array (no casts)
        self._lock = threading.RLock()
        self._unary: dict[str, np.ndarray] | None = None
        self._unary_local: dict[str, np.ndarray] | None = None
        self._binary_local: dict[str, np.ndarray] = {}
        self._geom: _PairGeom | None = None
        self._dense = dense
        self._unary_stack: np.ndarray | None = None
        # Dense scenes keep every global truth value in one flat bool buffer — [N ones | unary [U, N] | pair
        # tables [B, N, N]] (ontology order) — so that any set of per-view slices, of any predicates and kinds,
        # is one integer-array gather (see var_slices). The ones row is the source of the domain mask. Unary
        # and pair rows are filled in on first use.
        self._flat: np.ndarray | None = None
        self._pairs: np.ndarray | None = None
        self._pair_done: list[bool] = []
        self._offsets: dict[str, np.ndarray] = {}
        self._packed_coins: tuple[np.ndarray, ...] | None = None   # the slice kernel's coin tables
        if dense is not None:
            n, nu, nb = len(self.names), len(self.ontology.unary), len(self.ontology.binary)
            self._flat = np.empty(n + nu * n + nb * n * n, dtype=bool)
            self._flat[:n] = True
            self._pairs = self._flat[n + nu * n:].reshape(nb, n, n)
            self._pair_done = [False] * nb
            for name, table in (pair_tables or {}).items():
                row = grounder._binary_row[name]
                self._pairs[row] = table
                self._pair_done[row] = True

    # -- global values --------------------------------------------------------------------------------------
    def _all_unary(self) -> dict[str, np.ndarray]:
        u = self._unary
        if u is None:
            with self._lock:
                u = self._unary
                if u is None:
                    u = self._unary = dict(zip(self.grounder._unary_names, self._unary_rows()))
        return u

    def unary(self, pred: str) -> np.ndarray:
        """bool [N]: the unary predicate for every agent (independent of who looks)."""
        return self._all_unary()[pred]

    def _unary_rows(self) -> np.ndarray:
        """bool [U, N]: every unary predicate (ontology order) for every agent: the agent table's semantic rows
        plus this step's spatial ones."""
        us = self._unary_stack
        if us is None:
            with self._lock:
                us = self._unary_stack
                if us is None:
                    if self._flat is not None:  # fill the unary part of the flat buffer
                        n = len(self.names)
                        us = self._flat[n: n + len(self.ontology.unary) * n].reshape(-1, n)
                        us[...] = self._st.unary_rows
                    else:
                        us = self._st.unary_rows.copy()
                    gr, st = self.grounder, self._st
                    if gr._spatial_unary:
                        # the three intersection layers at every agent's cell, with one gather
                        at_car, at_ped, in_box = gr._cell_layers[:, self._pos[:, 0], self._pos[:, 1]]
                        for row, grounding in gr._spatial_unary:
                            if grounding == "is_at_intersection":
                                us[row] = (st.is_car & at_car) | (st.is_ped & at_ped)
                            else:
                                us[row] = in_box
                    self._unary_stack = us
        return us

    def _pair_rows(self, rows: Sequence[int]) -> np.ndarray:
        """The [B, N, N] pair tables (dense scenes only) with ``rows`` (indices in ontology.binary) computed:
        ``pairs[r, a, b]`` = predicate r on (a, b) for distinct agents; the diagonal is False. Only the rows
        something reads are ever computed."""
        pairs, done = self._pairs, self._pair_done
        assert pairs is not None and self._dense is not None
        for row in rows:
            if not done[row]:
                with self._lock:
                    if not done[row]:
                        pairs[row] = self._compute_binary(self.ontology.binary[row], self._dense)
                        done[row] = True
        return pairs

    def _pair_table(self, pred: str) -> np.ndarray:
        """bool [N, N] (dense scenes only): ``pred(a, b)`` for every ordered pair of agents."""
        row = self.grounder._binary_row[pred]
        return self._pair_rows((row,))[row]

    def pair(self, pred: str, a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
        """Binary predicate for global index arrays ``a`` (first argument) and ``b`` (broadcast; -1 → False)."""
        a_, b_ = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        shape = a_.shape
        out = self._compute_binary(self.ontology[pred], _PairGeom.of(self._pos, a_.reshape(-1), b_.reshape(-1)))
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
                    stacked = self._unary_rows()[:, self.ent] & self.valid[None]
                    ul = dict(zip(self.grounder._unary_names, stacked))
                    self._unary_local = ul
        return ul[pred]

    def binary_local(self, pred: str) -> np.ndarray:
        v = self._binary_local.get(pred)
        if v is None:
            with self._lock:
                v = self._binary_local.get(pred)
                if v is None:
                    if self._dense is not None:
                        # the diagonal of a pair table is False, so masking the padding is enough
                        ent = self.ent
                        v = self._pair_table(pred)[ent[:, :, None], ent[:, None, :]]
                        v &= self.valid[:, :, None]
                        v &= self.valid[:, None, :]
                    else:
                        if self._geom is None:
                            self._geom = _PairGeom.local(self._pos, self.ent, self.valid)
                        v = self._compute_binary(self.ontology[pred], self._geom)
                    self._binary_local[pred] = v
        return v

    def binary_rows(self, pred: str, rows: np.ndarray) -> np.ndarray:
        full = self._binary_local.get(pred)
        if full is not None or self._dense is not None:
            return self.binary_local(pred)[rows]
        ent, valid = self.ent[rows], self.valid[rows]   # large scene: ground those views only
        return self._compute_binary(self.ontology[pred], _PairGeom.local(self._pos, ent, valid))

    # Gather plans (why): the compiled engine reads ~15 one-variable slices per step. In a dense scene each is
    # "flat buffer at (row offset + per-view position offset)", where the per-view offsets depend only on the
    # slice kind (P(V): ent, P(X, V): ego·N + ent, ...), so all slices come out of one integer-array gather.
    def _slice_plan(self, keys: tuple[tuple[str, str], ...]) -> "_SlicePlan":
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
            plan = plans[(keys, n)] = _SlicePlan(
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
        once per step in :meth:`Grounder.ground` and only read here); a table already built is sliced instead."""
        out = np.empty((len(keys),) + self.valid.shape, dtype=bool)
        geoms: dict[str, _PairGeom] = {}
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
            plan = gr._slice_plans[("kernel", keys)] = _kernel_plan(gr, kern, keys)
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

    def _ego_pairs(self, kind: str, made: Mapping[str, _PairGeom]) -> _PairGeom:
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
            return _PairGeom(a, b, dr, dc, ok)
        mirrored = _PairGeom(a, b, -other.dr, -other.dc, other.ok)
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

    # -- binary predicate implementations ------------------------------------------------------------------------
    def _compute_binary(self, p: Predicate, geom: _PairGeom) -> np.ndarray:
        g = p.grounding
        if g is None:
            return np.zeros(np.broadcast_shapes(geom.a.shape, geom.b.shape), dtype=bool)
        # squared distances are integers: compare with integer thresholds (exact, and no float arrays)
        if g == "is_close":
            lo2, hi2 = _d2_bounds(p)
            return geom.ok & (geom.d2 > lo2) & (geom.d2 <= hi2)
        if g == "next_to":
            return geom.ok & (geom.d2 < _d2_bounds(p)[1])
        if g == "higher_priority":
            pri = self._st.priority
            return geom.ok & (geom.at_a(pri) < geom.at_b(pri))
        if g in ("left_of", "right_of"):
            moved, z = self._side(geom)
            return moved & (z > 0) if g == "left_of" else moved & (z < 0)
        if g == "colliding_close":
            return self._colliding(p, geom)
        raise ValueError(f"{p.name}: grounding {g!r} is not binary")  # pragma: no cover

    def _side(self, geom: _PairGeom) -> tuple[np.ndarray, np.ndarray]:
        """(pair ok and Y has moved, z) shared by LeftOf and RightOf on one geometry: X = a, Y = b; Y's heading
        (hr, hc); (rr, rc) = pos_X - pos_Y = -(dr, dc); z = hr*rc - hc*rr, positive on Y's left."""
        if geom.side is None:
            hb = geom.at_b(self._head)
            geom.side = (geom.ok & (hb >= 0), _DIRS_C[hb] * geom.dr - _DIRS_R[hb] * geom.dc)
        return geom.side

    def _colliding(self, p: Predicate, geom: _PairGeom) -> np.ndarray:
        reach2 = self._st.reach2[p.name]
        ha = geom.at_a(self._head)
        base = geom.ok & (ha >= 0) & (geom.d2 <= geom.at_a(reach2))
        out = np.zeros(base.shape, dtype=bool)
        idx = np.nonzero(base)  # few pairs are within reach: do the angle test on those only
        if len(idx[0]) == 0:
            return out
        a_, b_ = np.broadcast_arrays(geom.a, geom.b)
        sub = _PairGeom(a_[idx], b_[idx], geom.dr[idx], geom.dc[idx], np.ones(len(idx[0]), dtype=bool))
        ahead = _straight_ahead(p, sub, self._head[sub.a])
        car = self._st.is_car[sub.a]
        val = ahead & car  # ahead implies distance > 0
        need = (sub.d2 == 0) | (ahead & ~car)
        if need.any():
            keys, vals = self._coins.get(p.name, (np.zeros(0, np.int64), np.zeros(0, bool)))
            qk = sub.a[need] * len(self.names) + sub.b[need]
            if len(keys):
                i = np.minimum(np.searchsorted(keys, qk), len(keys) - 1)
                val[need] = (keys[i] == qk) & vals[i]
            else:
                val[need] = False
        out[idx] = val
        return out

    # -- inspector / SPF ------------------------------------------------------------------------------------------
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
                    geom = _PairGeom.of(self._pos, np.repeat(idx, k), np.tile(idx, k))
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


def _kernel_plan(gr: Grounder, kern, keys: tuple[tuple[str, str], ...]
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
                ipar[i] = _d2_bounds(p)
            elif p.grounding == "colliding_close":
                angle = float(p.params["angle"])
                if angle >= math.pi / 2:
                    spec[i, 0] = kern.K_SKIP
                    skipped.append(i)
                spec[i, 2] = colliding.index(name)
                fpar[i] = math.cos(angle) ** 2
    return spec, ipar, fpar, tuple(skipped)


def _observation_positions(onto: Ontology, n: int) -> np.ndarray:
    """Index in the observation vector of each value of [unary blocks (ontology.unary order), binary blocks
    (ontology.binary order)] — the observation interleaves them in file order."""
    unary, binary, off = [], [], 0
    for p in onto.grounded:
        (unary if p.arity == 1 else binary).append(np.arange(off, off + n ** p.arity))
        off += n ** p.arity
    return np.concatenate(unary + binary + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
