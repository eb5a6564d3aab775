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
    heap = [(h0, h0, s)]
    pop, push = heapq.heappop, heapq.heappush
    last_row = (h - 1) * w
    while heap:
        _, _, u = pop(heap)
        if u == t:
            break
        if u in closed:
            continue
        closed.add(u)
        gu = g[u]
        ur, uc = divmod(u, w)
        # Neighbours: up, down, left, right (within the map).
        for v, vr, vc in ((u - w, ur - 1, uc) if u >= w else (-1, 0, 0),
                          (u + w, ur + 1, uc) if u < last_row else (-1, 0, 0),
                          (u - 1, ur, uc - 1) if uc > 0 else (-1, 0, 0),
                          (u + 1, ur, uc + 1) if uc < w - 1 else (-1, 0, 0)):
            if v < 0 or v in closed:
                continue
            gv = gu + cost[v]
            old = g.get(v)
            if old is None or gv < old:
                g[v] = gv
                parent[v] = u
                hv = (vr - tr if vr > tr else tr - vr) + (vc - tc if vc > tc else tc - vc)
                push(heap, (gv + hv, hv, v))
    else:  # pragma: no cover - the grid is connected through expensive cells, so the goal is always found
        raise RouteError(f"no walking path from {(sr, sc)} to {(tr, tc)}")
    out = []
    v = t
    while v >= 0:
        out.append(v)
        v = parent[v]
    idx = np.asarray(out[::-1], dtype=np.int64)
    return np.stack([idx // w, idx % w], axis=1).astype(np.int32)
