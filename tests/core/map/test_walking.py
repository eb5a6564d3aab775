"""Pedestrian A* (docs/reference.md#pedestrian-planning): reference path lengths and optimality against an independent
Dijkstra."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

from core.base.errors import RouteError
from core.map.walking import BLOCKED_COST, walk_path, walking_cost
from tests.support.maps import generated, reference_city


@pytest.fixture(scope="module")
def city(reference_configs):
    return reference_city()


def grid_graph(cost: np.ndarray):
    """Directed 4-neighbour graph whose edge weight is the cost of the cell entered."""
    h, w = cost.shape
    idx = np.arange(h * w).reshape(h, w)
    src, dst = [], []
    for a, b in ((idx[:, :-1], idx[:, 1:]), (idx[:-1, :], idx[1:, :])):
        src += [a.ravel(), b.ravel()]
        dst += [b.ravel(), a.ravel()]
    src, dst = np.concatenate(src), np.concatenate(dst)
    return coo_matrix((cost.ravel()[dst].astype(float), (src, dst)), shape=(h * w, h * w)).tocsr()


def path_cost(cost: np.ndarray, path: np.ndarray) -> int:
    return int(cost[path[1:, 0], path[1:, 1]].sum())


def check_path(city, path, start, goal):
    assert path.dtype == np.int32 and tuple(path[0]) == tuple(start) and tuple(path[-1]) == tuple(goal)
    assert (np.abs(np.diff(path, axis=0)).sum(axis=1) == 1).all()


@pytest.mark.parametrize("start,goal,cells", [((79, 26), (26, 76), 104), ((15, 71), (72, 79), 82)])
def test_reference_path_lengths(city, start, goal, cells):
    path = walk_path(city, start, goal)
    check_path(city, path, start, goal)
    assert len(path) == cells
    assert city.walkable[path[:, 0], path[:, 1]].all()


def test_paths_are_optimal(city):
    cost = walking_cost(city)
    graph = grid_graph(cost)
    walk = np.argwhere(city.walkable)
    rng = np.random.default_rng(5)
    starts = walk[rng.integers(len(walk), size=4)]
    dist = dijkstra(graph, indices=[int(r) * 241 + int(c) for r, c in starts])
    for k, s in enumerate(starts):
        for g in walk[rng.integers(len(walk), size=30)]:
            path = walk_path(city, s, g)
            check_path(city, path, s, g)
            assert path_cost(cost, path) == dist[k, g[0] * 241 + g[1]]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 240), st.integers(0, 240), st.integers(0, 240), st.integers(0, 240))
def test_any_cells_optimal_including_blocked_ones(sr, sc, gr, gc):
    city = reference_city()
    cost = walking_cost(city)
    path = walk_path(city, (sr, sc), (gr, gc))
    check_path(city, path, (sr, sc), (gr, gc))
    best = dijkstra(grid_graph(cost), indices=sr * 241 + sc)[gr * 241 + gc]
    assert path_cost(cost, path) == best


def test_generated_city_paths_stay_on_walkable_cells():
    city = generated(4, (3, 3), 18, 7, 3)
    walk = np.argwhere(city.street == 1)
    rng = np.random.default_rng(1)
    for i, j in rng.integers(len(walk), size=(40, 2)):
        path = walk_path(city, walk[i], walk[j])
        assert city.walkable[path[:, 0], path[:, 1]].all()


def test_edge_cases(city):
    assert walk_path(city, (13, 13), (13, 13)).tolist() == [[13, 13]]
    with pytest.raises(RouteError, match="outside"):
        walk_path(city, (13, 13), (300, 5))
    cost = walking_cost(city)
    assert cost is walking_cost(city)  # cached per city
    assert set(np.unique(cost).tolist()) == {1, BLOCKED_COST}
    assert not cost.flags.writeable
