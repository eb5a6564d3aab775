"""Pedestrian global planning: the reference's grid A* (``pyastar2d``) on the walking cost map.

Cost of entering a cell: 1 on walkable cells (walking street or crossing), 1000 elsewhere — non-walkable cells
are expensive, not forbidden, exactly like the reference's call ``pyastar2d.astar_path(cost, start, goal,
allow_diagonal=False)`` (4-connected, Manhattan heuristic, path includes both ends); see docs/reference.md.

Why pyastar2d and not our own A*: a sidewalk grid has many equally short paths between two cells, and which one
an A* returns depends on how its priority queue breaks ties among equal ``f = g + h``. pyastar2d's compiled
search orders its queue by ``f`` alone, so equal-``f`` nodes leave it in the binary heap's own order, and an A* that
breaks ties otherwise (towards the smaller ``h``, then the smaller cell index) returns equally short but different
cells. Only pyastar2d itself reproduces the reference's pedestrian routes cell for cell (docs/planning.md); it is
also faster.

We call the package's compiled search directly with a cached, flattened float32 cost array: the public
``astar_path`` re-checks ``weights.min() >= 1`` and copies the whole grid on every call (on a large city that
costs more than the search itself). Those checks hold by construction here (costs are 1 or 1000) and the
bounds are checked below, so the result is the same path ``astar_path`` returns.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np
import pyastar2d  # noqa: F401  (importing the package sets the ctypes signature of pyastar2d.astar.astar)
import pyastar2d.astar as _pyastar

from core.base.errors import RouteError
from core.map.model import CityMap

__all__ = ["walk_path", "walking_cost", "WALK_COST", "BLOCKED_COST"]

WALK_COST = 1
BLOCKED_COST = 1000

_cache: "weakref.WeakKeyDictionary[CityMap, tuple[np.ndarray, np.ndarray]]" = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()


def walking_cost(city: CityMap) -> np.ndarray:
    """The per-cell cost map (int32 ``[H, W]``, read-only), cached per city."""
    return _costs(city)[1]


def _costs(city: CityMap) -> tuple[np.ndarray, np.ndarray]:
    """(flat C-contiguous float32 weights for pyastar2d, int32 ``[H, W]`` cost map), cached per city."""
    with _cache_lock:
        hit = _cache.get(city)
        if hit is None:
            cost = np.where(city.walkable, WALK_COST, BLOCKED_COST).astype(np.int32)
            cost.setflags(write=False)
            flat = np.ascontiguousarray(cost.ravel(), dtype=np.float32)
            flat.setflags(write=False)
            hit = (flat, cost)
            _cache[city] = hit
        return hit


def walk_path(city: CityMap, start, goal) -> np.ndarray:
    """The reference's pedestrian path from ``start`` to ``goal`` (int32 ``[L, 2]``, both ends included).

    Optimal under the cost map (1 walkable, 1000 elsewhere); among equally cheap paths, the one pyastar2d 1.1.4
    returns. Raises :class:`RouteError` for a start or goal outside the map.
    """
    h, w = city.shape
    sr, sc = int(start[0]), int(start[1])
    tr, tc = int(goal[0]), int(goal[1])
    for what, (r, c) in (("start", (sr, sc)), ("goal", (tr, tc))):
        if not (0 <= r < h and 0 <= c < w):
            raise RouteError(f"pedestrian {what} ({r}, {c}) is outside the {h}x{w} map")
    if (sr, sc) == (tr, tc):
        return np.asarray([[sr, sc]], dtype=np.int32)
    flat, _ = _costs(city)
    path = _pyastar.astar(flat, h, w, sr * w + sc, tr * w + tc, False, 0)
    if path is None:  # pragma: no cover - every cell is enterable (cost 1000 at worst), so a path always exists
        raise RouteError(f"no walking path from {(sr, sc)} to {(tr, tc)}")
    return np.ascontiguousarray(path, dtype=np.int32)
