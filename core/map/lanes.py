"""One-way car lane graph and car routing (docs/reference.md#car-lane-graph, docs/reference.md#car-routes).

Why it is built this way:

* Node and edge *insertion order* is exactly the reference's (lanes per mid-lane segment in scan order, then
  transitions end-node-major / start-node-minor), and routes are found with ``networkx.shortest_path``
  without a weight, i.e. the same bidirectional BFS. Fewest hops with the same adjacency order gives the same
  tie-breaks, so routes match the reference cell for cell.
* Transitions connect every lane end to every lane start in the same *junction area* (a connected part of
  the drivable cells outside the straight road stretches). On the reference map this is exactly the
  reference's distance rule (< 25.63 cells; a test checks it edge by edge) but it also holds for other street
  widths and block sizes, where a fixed distance would join a lane's end back to its own start.
* One graph per map, built once with numpy (the reference rebuilds it for every car, which dominates its start).
  A route query adds its connector edges, runs the search and removes exactly what it added, under a lock:
  the shared graph never accumulates edges (the reference's connector edges pile up across re-plans) and
  concurrent calls are safe.
* A cell from which no lane can be entered raises :class:`core.base.errors.RouteError` (the reference returns
  ``None`` and crashes later; docs/reference.md#car-routes).
"""
from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

import networkx as nx
import numpy as np
from scipy import ndimage

from core.base.errors import RouteError
from core.map.spec import Street


class LaneCity(Protocol):
    """What the lane graph reads of a city (:class:`core.map.model.CityMap`, which caches its lane graph)."""

    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def drivable(self) -> np.ndarray: ...

    midline: np.ndarray
    streets: tuple[Street, ...]

__all__ = ["Lane", "LaneGraph", "LaneGeometryError", "interpolate_path", "lane_offset", "midline_segments"]

Cell = tuple[int, int]


def midline_segments(midline: np.ndarray) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Maximal mid-lane runs of length ≥ 2: all horizontal ones row-major, then all vertical ones column-major.

    This order (the reference's ``find_midroad_segments``) fixes the lane-graph node numbering
    (docs/reference.md#mid-lanes).
    Each segment is ``((row, col) start, (row, col) end)`` with start ≤ end.
    """
    out: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for vertical in (False, True):
        m = midline.T if vertical else midline
        padded = np.zeros((m.shape[0], m.shape[1] + 2), dtype=np.int8)
        padded[:, 1:-1] = m
        d = np.diff(padded, axis=1)
        starts = np.argwhere(d == 1)
        ends = np.argwhere(d == -1)
        for (line, a), (_, b) in zip(starts.tolist(), ends.tolist()):
            if b - a >= 2:
                out.append(((a, line), (b - 1, line)) if vertical else ((line, a), (line, b - 1)))
    return out


class LaneGeometryError(RouteError):
    """A lane end falls outside the map, off the drivable area or outside any junction (bad street layout)."""

    def __init__(self, message: str, cell: Cell) -> None:
        super().__init__(message)
        self.cell = cell


def lane_offset(half_width: int) -> int:
    """Distance of a lane from the mid lane for a traffic street of half-width ``h`` (width 2h+1).

    The reference drives 2 cells off the centre of its 11-wide streets (h = 5); in general ``max(1, h // 2)``:
    the middle of each half, rounded towards the centre, never on the mid lane itself.
    """
    return max(1, half_width // 2)


@dataclass(frozen=True)
class Lane:
    """One directed lane: from ``start`` to ``end`` (both graph nodes), driving along ``heading`` (dr, dc)."""

    start: Cell
    end: Cell
    heading: Cell

    @property
    def length(self) -> int:
        return abs(self.end[0] - self.start[0]) + abs(self.end[1] - self.start[1])


def interpolate_path(nodes: list[Cell], drivable: np.ndarray) -> np.ndarray:
    """Cell-by-cell path through ``nodes`` (reference ``interpolate_car_path`` with ``max_step = 1``).

    Between two nodes that differ in both coordinates the path turns at ``(cur.row, next.col)`` if that cell is
    drivable, else at ``(next.row, cur.col)``. Repeated nodes add no cells. Returns int32 ``[L, 2]``.
    """
    h, w = drivable.shape
    way = [nodes[0]]
    for a, b in zip(nodes, nodes[1:]):
        if a[0] != b[0] and a[1] != b[1]:
            corner = (a[0], b[1])
            if not (0 <= corner[0] < h and 0 <= corner[1] < w and drivable[corner]):
                corner = (b[0], a[1])
            way.append(corner)
        way.append(b)
    pts = np.asarray(way, dtype=np.int32)
    delta = np.diff(pts, axis=0)
    lengths = np.abs(delta).sum(axis=1)
    steps = np.repeat(np.sign(delta), lengths, axis=0)
    cells = np.empty((len(steps) + 1, 2), dtype=np.int32)
    cells[0] = pts[0]
    np.cumsum(steps, axis=0, out=cells[1:])
    cells[1:] += pts[0]
    return cells


def _run_length(drivable: np.ndarray, r: int, c: int, dr: int, dc: int, limit: int = 64) -> int:
    """Number of consecutive drivable cells from (r+dr, c+dc) onwards in direction (dr, dc)."""
    h, w = drivable.shape
    n = 0
    r, c = r + dr, c + dc
    while 0 <= r < h and 0 <= c < w and drivable[r, c] and n < limit:
        n += 1
        r, c = r + dr, c + dc
    return n


def _half_width(city: LaneCity, orientation: str, m: int, along: int, drivable: np.ndarray) -> int:
    """Half-width of the traffic street whose centre line ``m`` holds a mid-lane segment starting at ``along``.

    Taken from the street specification (a run-length measure would run along a crossing street); falls back
    to counting drivable cells across the street when no street matches (hand-made layers).
    """
    for s in city.streets:
        if s.kind != "traffic" or s.orientation != orientation:
            continue
        if orientation == "horizontal" and s.row + s.width // 2 == m and s.col <= along < s.col + s.length:
            return s.width // 2
        if orientation == "vertical" and s.col + s.width // 2 == m and s.row <= along < s.row + s.length:
            return s.width // 2
    if orientation == "horizontal":
        return min(_run_length(drivable, m, along, -1, 0), _run_length(drivable, m, along, 1, 0))
    return min(_run_length(drivable, along, m, 0, -1), _run_length(drivable, along, m, 0, 1))


class LaneGraph:
    """The one-way lane graph of a city; shared by all cars, safe for concurrent :meth:`route` calls.

    Attributes: ``graph`` (networkx DiGraph, nodes are ``(row, col)`` tuples), ``lanes`` (in insertion order),
    ``start_nodes`` / ``end_nodes`` (int32 ``[n, 2]``, the reference's ``start_lists`` / ``end_lists``),
    ``lane_nodes`` (int32 ``[N, 2]``, graph node order = the reference's ``road_graph.txt``), ``node_mask``
    (bool ``[H, W]``) and ``segments`` (the mid-lane segments the lanes were built from).
    """

    def __init__(self, city: LaneCity, lanes: list[Lane], graph: nx.DiGraph,
                 segments: list[tuple[Cell, Cell]], half_width: int) -> None:
        self.city = city
        self.lanes = lanes
        self.graph = graph
        self.segments = segments
        self.half_width = half_width
        self.drivable = city.drivable
        self.start_nodes = np.asarray([ln.start for ln in lanes], dtype=np.int32).reshape(-1, 2)
        self.end_nodes = np.asarray([ln.end for ln in lanes], dtype=np.int32).reshape(-1, 2)
        self.lane_nodes = np.asarray(list(graph.nodes), dtype=np.int32).reshape(-1, 2)
        self.node_mask = np.zeros(city.shape, dtype=bool)
        if len(self.lane_nodes):
            self.node_mask[self.lane_nodes[:, 0], self.lane_nodes[:, 1]] = True
        self.node_mask.setflags(write=False)
        for arr in (self.start_nodes, self.end_nodes, self.lane_nodes):
            arr.setflags(write=False)
        # Nearest-node candidates, enter list first (start: lane ends, then starts; goal: the other way round).
        self._near = {False: np.concatenate([self.end_nodes, self.start_nodes]).astype(np.int64),
                      True: np.concatenate([self.start_nodes, self.end_nodes]).astype(np.int64)}
        self._end_of_start = {ln.start: ln for ln in lanes}
        self._start_of_end = {ln.end: ln for ln in lanes}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_map(cls, city: LaneCity) -> "LaneGraph":
        """Build the lane graph of ``city`` (docs/reference.md#car-lane-graph). Raises :class:`LaneGeometryError` for
        impossible lanes."""
        drivable = city.drivable
        h, w = city.shape
        segments = midline_segments(city.midline)
        traffic_widths = [s.width for s in city.streets if s.kind == "traffic"]
        half = (Counter(traffic_widths).most_common(1)[0][0] // 2) if traffic_widths else 5
        road = np.zeros((h, w), dtype=bool)
        lanes: list[Lane] = []
        g = nx.DiGraph()

        def check(cell: Cell) -> Cell:
            if not (0 <= cell[0] < h and 0 <= cell[1] < w) or not drivable[cell]:
                raise LaneGeometryError(f"lane end {cell} is outside the drivable area: every traffic street must "
                                        "end at another traffic street", cell)
            return cell

        for (sr, sc), (er, ec) in segments:
            if sr == er:  # horizontal segment on row m = sr
                m = sr
                up = down = _half_width(city, "horizontal", m, sc, drivable)
                lo = lane_offset(up)
                road[m - up:m + down + 1, sc:ec + 1] = True
                pairs = [((m + lo, sc - 1), (m + lo, ec + 1), (0, 1)),      # eastbound, row m+lo
                         ((m - lo, ec + 1), (m - lo, sc - 1), (0, -1))]     # westbound, row m-lo
            else:          # vertical segment on column m = sc
                m = sc
                left = right = _half_width(city, "vertical", m, sr, drivable)
                lo = lane_offset(left)
                road[sr:er + 1, m - left:m + right + 1] = True
                pairs = [((sr - 1, m - lo), (er + 1, m - lo), (1, 0)),      # southbound, col m-lo
                         ((er + 1, m + lo), (sr - 1, m + lo), (-1, 0))]     # northbound, col m+lo
            for a, b, heading in pairs:
                lane = Lane(check(a), check(b), heading)
                lanes.append(lane)
                g.add_edge(lane.start, lane.end, weight=float(lane.length), turn="lane")

        # Junction areas: drivable cells outside the straight road stretches; transitions stay inside one.
        junction, _ = ndimage.label(drivable & ~road)
        by_area: dict[int, list[Lane]] = {}
        for ln in lanes:
            area = int(junction[ln.start])
            if area == 0:
                raise LaneGeometryError(f"lane start {ln.start} is not in a junction area", ln.start)
            by_area.setdefault(area, []).append(ln)
        for ln in lanes:
            area = int(junction[ln.end])
            if area == 0:
                raise LaneGeometryError(f"lane end {ln.end} is not in a junction area", ln.end)
            for nxt in by_area.get(area, ()):
                g.add_edge(ln.end, nxt.start, **_transition_attrs(ln, nxt))
        return cls(city, lanes, g, segments, half)

    # ------------------------------------------------------------------ queries
    def is_lane_node(self, cell) -> bool:
        """True if ``cell`` (row, col) is a lane start or end node."""
        r, c = int(cell[0]), int(cell[1])
        return 0 <= r < self.node_mask.shape[0] and 0 <= c < self.node_mask.shape[1] and bool(self.node_mask[r, c])

    def skips_lane_node(self, pos, move) -> bool:
        """True if a lane node lies strictly between ``pos`` and ``pos + move`` (straight move;
        cars may not skip over lane ends, docs/reference.md#choosing-the-move).

        Cars moving more than one cell per step may not jump over lane ends (they must land on them).
        """
        dr, dc = int(move[0]), int(move[1])
        n = max(abs(dr), abs(dc))
        if n <= 1:
            return False
        sr, sc = (1 if dr > 0 else -1 if dr < 0 else 0), (1 if dc > 0 else -1 if dc < 0 else 0)
        r, c = int(pos[0]), int(pos[1])
        return any(self.is_lane_node((r + k * sr, c + k * sc)) for k in range(1, n))

    def lane_cells(self, headings: tuple[Cell, ...] | None = None) -> np.ndarray:
        """Bool mask of lane-line cells from each lane's start to its end node (optionally only some headings)."""
        mask = np.zeros(self.city.shape, dtype=bool)
        for ln in self.lanes:
            if headings is None or ln.heading in headings:
                (r0, c0), (r1, c1) = ln.start, ln.end
                mask[min(r0, r1):max(r0, r1) + 1, min(c0, c1):max(c0, c1) + 1] = True
        return mask

    def _drivable_at(self, r: int, c: int) -> bool:
        return 0 <= r < self.drivable.shape[0] and 0 <= c < self.drivable.shape[1] and bool(self.drivable[r, c])

    def connector(self, p: Cell, for_goal: bool) -> tuple[Cell, Cell]:
        """The reference's ``find_nearest_node``: ``(q, n)`` — projection cell and lane node to enter/leave by.

        For a start, lanes are entered at an *end* node (the car drives to where its lane ends); for a goal they
        are left from a *start* node. See docs/planning.md for the rule and the deliberate fixes.
        """
        enter = self.start_nodes if for_goal else self.end_nodes
        if len(enter) == 0:
            raise RouteError(f"no lanes on this map: cannot drive from {p}")
        nodes = self._near[for_goal]
        d = nodes - np.asarray(p, dtype=np.int64)
        i = int(np.argmin(np.einsum("ij,ij->i", d, d)))
        n = (int(nodes[i, 0]), int(nodes[i, 1]))
        if i < len(enter):
            k = 0 if abs(n[0] - p[0]) <= abs(n[1] - p[1]) else 1
            q = (n[0], p[1]) if k == 0 else (p[0], n[1])
            return q, n
        # The nearest node is on the wrong end of its lane: decide the street's orientation, then take the
        # other end of the lane (reference: the enter node on the same row/col exactly one lane length away).
        hw = self.half_width
        k = 0 if all(self._drivable_at(p[0], c) for c in range(p[1] - hw, p[1] + hw)) else 1
        q = (n[0], p[1]) if k == 0 else (p[0], n[1])
        lane = self._start_of_end[n] if for_goal else self._end_of_start[n]
        length = lane.length
        match = np.flatnonzero((enter[:, k] == n[k]) & (np.abs(enter[:, 1 - k] - n[1 - k]) == length))
        if match.size:
            return q, (int(enter[match[0], 0]), int(enter[match[0], 1]))
        # Reference would return None and crash; use the lane's true other end on the lane's own axis.
        other = lane.start if for_goal else lane.end
        k = 0 if lane.heading[0] == 0 else 1
        q = (n[0], p[1]) if k == 0 else (p[0], n[1])
        if not self._drivable_at(*q):
            raise RouteError(f"cannot enter a lane from {p}: nearest lane node {n} is not reachable in a straight "
                             "line")
        return q, other

    def route_nodes(self, start, goal) -> list[Cell]:
        """Graph nodes of the fewest-hop route from ``start`` to ``goal`` (connector nodes included)."""
        s = (int(start[0]), int(start[1]))
        t = (int(goal[0]), int(goal[1]))
        for what, cell in (("start", s), ("goal", t)):
            if not self._drivable_at(*cell):
                raise RouteError(f"car {what} {cell} is not on a drivable cell")
        qs, ns = self.connector(s, for_goal=False)
        qg, ng = self.connector(t, for_goal=True)
        g = self.graph
        with self._lock:
            new_nodes: list[Cell] = []
            new_edges: list[tuple[Cell, Cell]] = []
            for u, v in ((s, qs), (qs, ns), (ng, qg), (qg, t)):
                for x in (u, v):
                    if x not in g and x not in new_nodes:
                        new_nodes.append(x)
                if not g.has_edge(u, v):
                    g.add_edge(u, v)
                    new_edges.append((u, v))
            try:
                path = nx.shortest_path(g, s, t)
            except nx.NetworkXNoPath:
                raise RouteError(f"no lane route from {s} to {t}: the lane graph is not connected") from None
            finally:
                g.remove_edges_from(new_edges)
                g.remove_nodes_from(new_nodes)
        return [(int(a), int(b)) for a, b in path]

    def route(self, start, goal) -> np.ndarray:
        """Cell-by-cell car route (int32 ``[L, 2]``, start and goal included), every cell drivable."""
        cells = interpolate_path(self.route_nodes(start, goal), self.drivable)
        if not self.drivable[cells[:, 0], cells[:, 1]].all():
            bad = cells[~self.drivable[cells[:, 0], cells[:, 1]]][0]
            raise RouteError(f"car route from {tuple(start)} to {tuple(goal)} leaves the road at {tuple(bad)}")
        return cells


def _transition_attrs(a: Lane, b: Lane) -> dict:
    """Edge attributes of a lane change at a junction: turn kind and the reference's (unused) weight."""
    (ar, ac), (br, bc) = a.heading, b.heading
    if (ar, ac) == (br, bc):
        turn = "straight"
    elif (ar, ac) == (-br, -bc):
        turn = "uturn"
    else:
        turn = "left" if ar * bc - ac * br > 0 else "right"
    length = math.dist(a.end, b.start)
    return {"weight": length + (30.0 if turn != "straight" else 0.0), "turn": turn}
