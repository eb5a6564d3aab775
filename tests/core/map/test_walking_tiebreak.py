"""Pedestrian routes are pyastar2d's (the A* the reference ran), cell for cell, not just equally short.

Among equally cheap paths, which one an A* returns depends on how its queue breaks ties. Our former pure-Python
A* (kept below as ``plain_astar``: ties towards the smaller h, then the smaller cell index) returned the same
lengths as the reference but different cells; ``walk_path`` now calls pyastar2d, so free-running pedestrians walk
the reference's routes (docs/planning.md)."""
import heapq

import numpy as np
import pyastar2d
import pytest

from core.map.walking import walk_path, walking_cost
from tests.support.maps import generated, reference_city


def plain_astar(cost: np.ndarray, start, goal) -> np.ndarray:
    """Textbook A* with a tuple heap (f, h, cell): our former tie-break; an independent optimality oracle."""
    h, w = cost.shape
    s, t = start[0] * w + start[1], goal[0] * w + goal[1]
    flat = cost.ravel().tolist()
    g, parent, closed = {s: 0}, {s: -1}, set()
    h0 = abs(start[0] - goal[0]) + abs(start[1] - goal[1])
    heap = [(h0, h0, s)]
    while heap:
        _, _, u = heapq.heappop(heap)
        if u == t:
            break
        if u in closed:
            continue
        closed.add(u)
        ur, uc = divmod(u, w)
        for vr, vc in ((ur - 1, uc), (ur + 1, uc), (ur, uc - 1), (ur, uc + 1)):
            v = vr * w + vc
            if not (0 <= vr < h and 0 <= vc < w) or v in closed:
                continue
            gv = g[u] + flat[v]
            if v not in g or gv < g[v]:
                g[v], parent[v] = gv, u
                hv = abs(vr - goal[0]) + abs(vc - goal[1])
                heapq.heappush(heap, (gv + hv, hv, v))
    out, v = [], t
    while v >= 0:
        out.append(divmod(v, w))
        v = parent[v]
    return np.asarray(out[::-1], dtype=np.int32)


def path_cost(cost: np.ndarray, path: np.ndarray) -> int:
    return int(cost[path[1:, 0], path[1:, 1]].sum())


# (start, goal, pyastar2d's path, our former A*'s path) on the reference map: same length, different cells.
TIE_CASES = [
    ((66, 27), (67, 30),
     [[66, 27], [66, 28], [67, 28], [67, 29], [67, 30]],
     [[66, 27], [66, 28], [66, 29], [66, 30], [67, 30]]),
    ((120, 217), (121, 222),
     [[120, 217], [120, 218], [121, 218], [121, 219], [121, 220], [121, 221], [121, 222]],
     [[120, 217], [120, 218], [120, 219], [120, 220], [120, 221], [120, 222], [121, 222]]),
]


@pytest.mark.parametrize("start,goal,pyastar,former", TIE_CASES)
def test_ties_are_broken_like_pyastar2d(reference_configs, start, goal, pyastar, former):
    city = reference_city()
    cost = walking_cost(city)
    assert walk_path(city, start, goal).tolist() == pyastar
    assert plain_astar(cost, start, goal).tolist() == former  # the former tie-break: a different, equal path
    assert len(pyastar) == len(former) and path_cost(cost, np.asarray(pyastar)) == path_cost(cost, np.asarray(former))


def pairs(city, rng, k):
    """Start on a sidewalk; goals anywhere (often on expensive cells), short hops (many ties) and sidewalks."""
    walk = np.argwhere(city.walkable)
    hh, ww = city.shape
    for i in range(k):
        s = tuple(int(x) for x in walk[rng.integers(len(walk))])
        if i % 3 == 0:
            t = (int(rng.integers(hh)), int(rng.integers(ww)))
        elif i % 3 == 1:
            t = tuple(int(x) for x in np.clip(np.array(s) + rng.integers(-6, 7, 2), 0, [hh - 1, ww - 1]))
        else:
            t = tuple(int(x) for x in walk[rng.integers(len(walk))])
        yield s, t


@pytest.mark.parametrize("seed", [3, 8])
def test_same_path_as_the_public_pyastar2d_call(seed):
    """walk_path calls pyastar2d's compiled search directly with a cached cost array; the result must be what
    the reference's call ``astar_path(cost, start, goal, allow_diagonal=False)`` returns."""
    city = generated(seed, blocks=(3, 3))
    weights = walking_cost(city).astype(np.float32)
    for s, t in pairs(city, np.random.default_rng(seed), 45):
        expected = pyastar2d.astar_path(weights, s, t, allow_diagonal=False)
        assert np.array_equal(walk_path(city, s, t), expected), (s, t)


@pytest.mark.parametrize("seed", [3, 8])
def test_paths_as_cheap_as_textbook_astar(seed):
    city = generated(seed, blocks=(3, 3))
    cost = walking_cost(city)
    for s, t in pairs(city, np.random.default_rng(100 + seed), 45):
        path = walk_path(city, s, t)
        assert path.dtype == np.int32 and tuple(path[0]) == s and tuple(path[-1]) == t
        assert (np.abs(np.diff(path, axis=0)).sum(axis=1) == 1).all()
        assert path_cost(cost, path) == path_cost(cost, plain_astar(cost, s, t)), (s, t)
