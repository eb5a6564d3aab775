"""Reachable single-agent states around one intersection: where the analysis puts agents on a real map.

Why: a conflict witness or a deadlock is only useful if the user can load it as a scene and see it happen, so
the agents must stand where the simulator could really have put them — a car on a lane cell it reached by
driving its planned route, heading the way it last moved; a pedestrian on its walking path. We get such states
by planning real trips through the intersection with the simulator's own planners (cars on the lane graph,
pedestrians by A* on the walking network) between the start/goal candidate cells around it, and keeping every
cell of those trips inside the neighbourhood with the heading of the move that reached it, the whole path and
the index on it. A state therefore carries everything a :class:`core.sim.scene.SceneAgent` needs.

The neighbourhood is the junction square (the intersection's "at" lines and "in" box) grown by ``margin``
cells on every side; trips start and end on candidate cells within ``margin + reach`` of the square.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.base.codes import Kind
from core.map.model import CityMap
from core.map.sampling import StartGoalSampler
from core.map.spec import Junction
from core.map.walking import walk_path

__all__ = ["AgentState", "JunctionStates", "junction_states", "pick_junction", "DEFAULT_MARGIN"]

#: Cells around the junction square that count as "around the intersection" (a car's CollidingClose reach is 8).
DEFAULT_MARGIN = 8
#: How far beyond the neighbourhood trips start and end.
_REACH = 14
#: At most this many start (and goal) cells per kind; spread evenly over the candidates.
_ENDPOINTS = 10
_HEADING = {(0, -1): 0, (0, 1): 1, (-1, 0): 2, (1, 0): 3}


@dataclass(frozen=True)
class AgentState:
    """One agent state on a real trip: ``cell`` reached by a move in direction ``heading`` (0 Left, 1 Right,
    2 Up, 3 Down); ``path`` is the whole planned trip and ``index`` the position's index on it."""

    kind: Kind
    cell: tuple[int, int]
    heading: int
    path: tuple[tuple[int, int], ...]
    index: int


@dataclass(frozen=True)
class JunctionStates:
    junction: Junction
    index: int                      # position of the junction in city.junctions
    region: tuple[int, int, int, int]   # top, bottom, left, right (inclusive) of the neighbourhood
    states: tuple[AgentState, ...]

    def of_kind(self, kind: Kind) -> tuple[AgentState, ...]:
        return tuple(s for s in self.states if s.kind == kind)


def pick_junction(city: CityMap, index: int | None = None) -> int:
    """``index`` checked, or the first intersection with four arms (else the first intersection)."""
    if index is not None:
        if not (0 <= index < len(city.junctions)) or not city.junctions[index].is_intersection:
            ok = [i for i, j in enumerate(city.junctions) if j.is_intersection]
            raise ValueError(f"junction {index} is not an intersection of this map (intersections: "
                             f"{ok[:10]}{'…' if len(ok) > 10 else ''})")
        return index
    four = [i for i, j in enumerate(city.junctions) if len(j.lines) == 4]
    any_ = [i for i, j in enumerate(city.junctions) if j.is_intersection]
    if not any_:
        raise ValueError("this map has no intersection")
    return (four or any_)[0]


def _spread(cells: np.ndarray, n: int) -> np.ndarray:
    if len(cells) <= n:
        return cells
    return cells[np.linspace(0, len(cells) - 1, n).round().astype(int)]


def junction_states(city: CityMap, junction: int | None = None, margin: int = DEFAULT_MARGIN,
                    kinds: tuple[Kind, ...] = (Kind.CAR, Kind.PEDESTRIAN)) -> JunctionStates:
    """The reachable states of ``kinds`` inside the neighbourhood of a junction (see module doc)."""
    ji = pick_junction(city, junction)
    j = city.junctions[ji]
    top, bottom, left, right = j.box
    h, w = city.shape
    region = (max(0, top - margin), min(h - 1, bottom + margin), max(0, left - margin), min(w - 1, right + margin))
    outer = (top - margin - _REACH, bottom + margin + _REACH, left - margin - _REACH, right + margin + _REACH)
    sampler = StartGoalSampler(city)
    states: dict[tuple[int, tuple[int, int], int], AgentState] = {}
    for kind in kinds:
        cells = sampler.candidate_cells(kind).astype(np.int64)
        r, c = cells[:, 0], cells[:, 1]
        in_outer = (r >= outer[0]) & (r <= outer[1]) & (c >= outer[2]) & (c <= outer[3])
        in_region = (r >= region[0]) & (r <= region[1]) & (c >= region[2]) & (c <= region[3])
        ends = _spread(cells[in_outer & ~in_region], _ENDPOINTS)
        for s in ends:
            for g in ends:
                if tuple(s) == tuple(g):
                    continue
                try:
                    path = (city.lane_graph.route(tuple(s), tuple(g)) if kind == Kind.CAR
                            else walk_path(city, tuple(s), tuple(g)))
                except Exception:  # noqa: BLE001 - a pair the planner cannot route is simply not a trip
                    continue
                _collect(states, kind, np.asarray(path, dtype=np.int64), region)
    ordered = sorted(states.values(), key=lambda s: (int(s.kind), s.cell, s.heading))
    return JunctionStates(j, ji, region, tuple(ordered))


def _collect(states: dict, kind: Kind, path: np.ndarray, region: tuple[int, int, int, int]) -> None:
    if len(path) < 2:
        return
    cells = tuple((int(a), int(b)) for a, b in path)
    for i in range(1, len(cells)):
        r, c = cells[i]
        if not (region[0] <= r <= region[1] and region[2] <= c <= region[3]):
            continue
        d = (r - cells[i - 1][0], c - cells[i - 1][1])
        head = _HEADING.get(d)
        if head is None:
            continue
        key = (int(kind), (r, c), head)
        if key not in states:
            states[key] = AgentState(kind, (r, c), head, cells, i)
