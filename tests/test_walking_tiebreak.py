"""The optimised pedestrian A* must choose exactly the path of the plain textbook formulation (same tie-breaking:
smallest f, then smallest h, then smallest cell index) — recorded episodes and SPF episode sets depend on it."""
import heapq

import numpy as np
import pytest

from core.map.walking import walk_path, walking_cost

from .map_helpers import generated


def plain_astar(cost: np.ndarray, start, goal) -> np.ndarray:
    """Tuple heap (f, h, cell), closed set, neighbours up/down/left/right — no shortcuts."""
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


@pytest.mark.parametrize("seed", [3, 8])
def test_same_path_as_plain_astar(seed):
    city = generated(seed, blocks=(3, 3))
    cost = walking_cost(city)
    rng = np.random.default_rng(seed)
    walk = np.argwhere(city.walkable)
    hh, ww = city.shape
    for i in range(45):
        s = tuple(int(x) for x in walk[rng.integers(len(walk))])
        if i % 3 == 0:  # anywhere, often off the sidewalks (expensive cells)
            t = (int(rng.integers(hh)), int(rng.integers(ww)))
        elif i % 3 == 1:  # short hops: many equal-cost alternatives
            t = tuple(int(x) for x in np.clip(np.array(s) + rng.integers(-6, 7, 2), 0, [hh - 1, ww - 1]))
        else:
            t = tuple(int(x) for x in walk[rng.integers(len(walk))])
        assert np.array_equal(walk_path(city, s, t), plain_astar(cost, s, t)), (s, t)
