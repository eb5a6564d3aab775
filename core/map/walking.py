"""Pedestrian global planning: 4-connected A* on the walking cost map (§3.1 of the reference semantics).

Cost of entering a cell: 1 on walkable cells (walking street or crossing), 1000 elsewhere — non-walkable cells
are expensive, not forbidden, exactly like the reference's ``pyastar2d`` call. The heuristic is the Manhattan
distance (admissible: every step costs at least 1), so paths are optimal and their cell count matches the
reference wherever the optimum is unique in length.

Why this is fast in pure Python: ties between equal ``f = g + h`` are broken towards the smaller ``h`` (the node
closer to the goal), so on the open sidewalk grid the search walks almost straight to the goal and expands
about as many nodes as the path has cells. The reference's private pyastar2d fork is not available; its
tie-breaking among equally short paths is unknown, so only path costs/lengths are parity-tested
(docs/planning.md).
"""
from __future__ import annotations

import heapq
import threading
import weakref

import numpy as np

from ..errors import RouteError
from .model import CityMap

__all__ = ["walk_path", "walking_cost", "WALK_COST", "BLOCKED_COST"]

WALK_COST = 1
BLOCKED_COST = 1000

_cache: "weakref.WeakKeyDictionary[CityMap, tuple[list[int], np.ndarray]]" = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()


def walking_cost(city: CityMap) -> np.ndarray:
    """The per-cell cost map (int32 ``[H, W]``), cached per city."""
    return _costs(city)[1]


def _costs(city: CityMap) -> tuple[list[int], np.ndarray]:
    with _cache_lock:
        hit = _cache.get(city)
        if hit is None:
            cost = np.where(city.walkable, WALK_COST, BLOCKED_COST).astype(np.int32)
            cost.setflags(write=False)
            hit = (cost.ravel().tolist(), cost)
            _cache[city] = hit
        return hit


def walk_path(city: CityMap, start, goal) -> np.ndarray:
    """Optimal 4-connected path from ``start`` to ``goal`` (int32 ``[L, 2]``, both ends included)."""
    h, w = city.shape
    sr, sc = int(start[0]), int(start[1])
    tr, tc = int(goal[0]), int(goal[1])
    for what, (r, c) in (("start", (sr, sc)), ("goal", (tr, tc))):
        if not (0 <= r < h and 0 <= c < w):
            raise RouteError(f"pedestrian {what} ({r}, {c}) is outside the {h}x{w} map")
    cost, _ = _costs(city)
    s = sr * w + sc
    t = tr * w + tc
    if s == t:
        return np.asarray([[sr, sc]], dtype=np.int32)
    g = {s: 0}
    parent = {s: -1}
    closed = set()
    h0 = abs(sr - tr) + abs(sc - tc)
    # Heap entries are the triples (f, h, cell) ordered lexicographically, packed into one int
    # ((f * hb + h) * nc + cell, with h < hb and cell < nc) because heapq compares ints much faster than tuples.
    hb, nc = h + w, h * w
    heap = [(h0 * hb + h0) * nc + s]
    pop, push = heapq.heappop, heapq.heappush
    last_row, last_col = h - 1, w - 1
    # Why this loop is shaped like this (the hot part of pedestrian re-planning):
    # * heap entries (f, h, cell) are all distinct (a cell is re-pushed only with a smaller g, hence f), so the
    #   pop order — and therefore the path — does not depend on the order in which neighbours are pushed;
    # * a neighbour's heuristic is the popped cell's h ± 1 (one step changes exactly one coordinate by one);
    # * closed neighbours need no test: Manhattan distance is consistent (every step costs ≥ 1), so a closed
    #   cell's g is already optimal and ``gv < g[v]`` can never hold for it.
    while heap:
        fh, u = divmod(pop(heap), nc)
        if u == t:
            break
        if u in closed:
            continue
        closed.add(u)
        hu = fh % hb
        gu = g[u]
        ur, uc = divmod(u, w)
        if ur > 0:  # up
            v = u - w
            gv = gu + cost[v]
            old = g.get(v)
            if old is None or gv < old:
                g[v] = gv
                parent[v] = u
                hv = hu - 1 if ur > tr else hu + 1
                push(heap, ((gv + hv) * hb + hv) * nc + v)
        if ur < last_row:  # down
            v = u + w
            gv = gu + cost[v]
            old = g.get(v)
            if old is None or gv < old:
                g[v] = gv
                parent[v] = u
                hv = hu - 1 if ur < tr else hu + 1
                push(heap, ((gv + hv) * hb + hv) * nc + v)
        if uc > 0:  # left
            v = u - 1
            gv = gu + cost[v]
            old = g.get(v)
            if old is None or gv < old:
                g[v] = gv
                parent[v] = u
                hv = hu - 1 if uc > tc else hu + 1
                push(heap, ((gv + hv) * hb + hv) * nc + v)
        if uc < last_col:  # right
            v = u + 1
            gv = gu + cost[v]
            old = g.get(v)
            if old is None or gv < old:
                g[v] = gv
                parent[v] = u
                hv = hu - 1 if uc < tc else hu + 1
                push(heap, ((gv + hv) * hb + hv) * nc + v)
    else:  # pragma: no cover - the grid is connected through expensive cells, so the goal is always found
        raise RouteError(f"no walking path from {(sr, sc)} to {(tr, tc)}")
    out = []
    v = t
    while v >= 0:
        out.append(v)
        v = parent[v]
    idx = np.asarray(out[::-1], dtype=np.int64)
    return np.stack([idx // w, idx % w], axis=1).astype(np.int32)
