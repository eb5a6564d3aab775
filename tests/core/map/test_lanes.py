"""Car lane graph (docs/reference.md#car-lane-graph): node order, edges, routes of the reference, connector hygiene,
thread safety."""
import math
import threading
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from core.base.errors import RouteError
from core.map.lanes import LaneGraph, interpolate_path, lane_offset
from tests.support.maps import ROAD_GRAPH, generated, reference_city, turning_points

ROUTES = [
    ((10, 39), (35, 56), 61, [(10, 39), (10, 41), (7, 41), (7, 49), (41, 49), (41, 53), (35, 53), (35, 56)]),
    ((46, 25), (56, 21), 27, [(46, 25), (49, 25), (49, 15), (53, 15), (53, 21), (56, 21)]),
    ((36, 10), (92, 86), 221, [(36, 10), (36, 7), (7, 7), (7, 95), (95, 95), (95, 87), (92, 87), (92, 86)]),
    ((102, 24), (56, 35), 132, [(102, 24), (99, 24), (99, 41), (95, 41), (95, 7), (53, 7), (53, 35), (56, 35)]),
]


@pytest.fixture(scope="module")
def lanes(reference_configs):
    return LaneGraph.from_map(reference_city())


def test_nodes_in_reference_file_order(lanes):
    ref = np.loadtxt(ROAD_GRAPH).astype(int)
    assert lanes.lane_nodes.shape == (240, 2)
    assert np.array_equal(lanes.lane_nodes, ref)
    assert list(lanes.graph.nodes)[:4] == [(7, 15), (7, 41), (3, 41), (3, 15)]
    assert list(lanes.graph.nodes)[120:124] == [(15, 3), (41, 3), (41, 7), (15, 7)]


def test_edge_counts_and_degrees(lanes):
    g = lanes.graph
    assert g.number_of_nodes() == 240 and g.number_of_edges() == 536
    assert len(lanes.lanes) == 120
    ends = [tuple(n) for n in lanes.end_nodes.tolist()]
    assert Counter(g.out_degree(n) for n in ends) == {2: 8, 3: 48, 4: 64}
    assert {ln.length for ln in lanes.lanes} == {26}
    assert nx.is_strongly_connected(g)


def test_transitions_equal_reference_distance_rule_in_insertion_order(lanes):
    """The junction-area rule gives exactly the reference's edges, in the same adjacency order."""
    threshold = max(2 * 5 + 11, math.sqrt(2) * (5 + 11)) + 3
    expected = [(ln.start, ln.end) for ln in lanes.lanes]
    starts = [tuple(n) for n in lanes.start_nodes.tolist()]
    for e in (tuple(n) for n in lanes.end_nodes.tolist()):
        expected += [(e, s) for s in starts if math.dist(e, s) < threshold]
    g = lanes.graph
    for node in g.nodes:
        assert list(g.successors(node)) == [b for a, b in expected if a == node]
        assert list(g.predecessors(node)) == [a for a, b in expected if b == node]
    turns = Counter(d["turn"] for _, _, d in g.edges(data=True))
    # 16 four-way x 4 arrivals x (straight, left, right, U); 16 T x (2 straight, 2 left, 2 right, 3 U);
    # 4 corners x (1 left, 1 right, 2 U)
    assert turns == {"lane": 120, "straight": 64 + 32, "left": 64 + 32 + 4, "right": 64 + 32 + 4,
                     "uturn": 64 + 48 + 8}


@pytest.mark.parametrize("start,goal,cells,points", ROUTES)
def test_reference_routes(lanes, start, goal, cells, points):
    path = lanes.route(start, goal)
    assert path.dtype == np.int32 and path.shape == (cells, 2)
    assert turning_points(path) == points
    drivable = lanes.city.drivable
    assert drivable[path[:, 0], path[:, 1]].all()
    assert (np.abs(np.diff(path, axis=0)).sum(axis=1) == 1).all()


def test_routes_do_not_accumulate_edges(lanes):
    g = lanes.graph
    before = (list(g.nodes), [(u, v, dict(d)) for u, v, d in g.edges(data=True)])
    adjacency = {n: list(g.successors(n)) for n in g.nodes}
    for start, goal, _, _ in ROUTES:
        lanes.route(start, goal)
    lanes.route((7, 41), (3, 15))   # lane nodes as start/goal: connector edges coincide with real ones
    assert (list(g.nodes), [(u, v, dict(d)) for u, v, d in g.edges(data=True)]) == before
    assert {n: list(g.successors(n)) for n in g.nodes} == adjacency
    # a second identical query gives the identical route (fresh-graph semantics)
    assert np.array_equal(lanes.route((10, 39), (35, 56)), lanes.route((10, 39), (35, 56)))


def test_concurrent_routes_are_safe(lanes):
    city = lanes.city
    cells = np.argwhere(city.street == 2)
    rng = np.random.default_rng(3)
    pairs = [(tuple(cells[i]), tuple(cells[j])) for i, j in rng.integers(len(cells), size=(40, 2))]
    expected = [lanes.route(a, b) for a, b in pairs]
    results: list = [None] * 4
    errors = []

    def work(k):
        try:
            results[k] = [lanes.route(a, b) for a, b in pairs]
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for res in results:
        assert all(np.array_equal(a, b) for a, b in zip(res, expected))
    assert lanes.graph.number_of_edges() == 536


def test_every_drivable_cell_can_route(lanes):
    city = lanes.city
    cells = np.argwhere(city.drivable)
    rng = np.random.default_rng(7)
    for i, j in rng.integers(len(cells), size=(150, 2)):
        path = lanes.route(tuple(cells[i]), tuple(cells[j]))
        assert city.drivable[path[:, 0], path[:, 1]].all()


def test_route_errors(lanes):
    with pytest.raises(RouteError, match="not on a drivable cell"):
        lanes.route((20, 20), (10, 39))
    with pytest.raises(RouteError, match="goal"):
        lanes.route((10, 39), (-1, 5))


def test_lane_node_membership_and_skipping(lanes):
    assert lanes.is_lane_node((41, 49)) and not lanes.is_lane_node((40, 49)) and not lanes.is_lane_node((-1, 0))
    assert lanes.node_mask.sum() == 240
    assert lanes.skips_lane_node((39, 49), (3, 0))       # passes 40 and the node (41, 49)
    assert not lanes.skips_lane_node((39, 49), (2, 0))   # lands exactly on the node
    assert not lanes.skips_lane_node((40, 49), (1, 0))   # single steps never skip
    assert lanes.skips_lane_node((43, 49), (-3, 0))      # passes 42 and (41, 49)
    assert not lanes.skips_lane_node((44, 49), (-2, 0))  # passes 43 only
    assert not lanes.skips_lane_node((20, 49), (0, 3))   # mid-lane sideways: no node in between


def test_reference_city_lane_graph_is_cached(reference_configs):
    city = reference_city()
    assert city.lane_graph is city.lane_graph


def test_interpolation_turns_at_the_drivable_corner(lanes):
    drivable = lanes.city.drivable
    # left turn (south -> east) from (41,49) to (53,61): (41,61) is a sidewalk, so turn at (53,49)
    path = interpolate_path([(41, 49), (53, 61)], drivable)
    assert turning_points(path) == [(41, 49), (53, 49), (53, 61)]
    # right turn (east -> south) from (7,41) to (15,49): (7,49) is asphalt
    assert turning_points(interpolate_path([(7, 41), (15, 49)], drivable)) == [(7, 41), (7, 49), (15, 49)]
    assert interpolate_path([(5, 5), (5, 5)], drivable).tolist() == [[5, 5]]


def test_lane_offsets_generalise():
    assert [lane_offset(h) for h in (1, 2, 3, 4, 5, 6)] == [1, 1, 1, 2, 2, 3]
    for tw, ww, bs in ((7, 3, 20), (3, 1, 6), (13, 6, 30)):
        city = generated(2, (2, 2), bs, tw, ww)
        lanes = city.lane_graph
        h = tw // 2
        assert {ln.length for ln in lanes.lanes} == {bs + 1}
        out_deg = Counter(lanes.graph.out_degree(tuple(n)) for n in lanes.end_nodes.tolist())
        assert out_deg == {2: 8, 3: 12, 4: 4}  # 4 corners x 2, 4 T-junctions x 3, one 4-way x 4
        mids = {ln.start[0] for ln in lanes.lanes if ln.heading == (0, 1)}
        assert mids == {k * (tw + 2 * ww + bs) + h + lane_offset(h) for k in range(3)}
