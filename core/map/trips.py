"""A cell and a trip on a city in the simulator's own terms: what a cell is, in words, and the path an agent of a
kind would take between two cells.

Why here: the simulator, the scene checks and the agent editor all judge a start, a goal or a route on a city, and
must judge it the way the simulator plans (cars by the lane graph's route, pedestrians by A* on the walking
network), so the planning and its wording live with the city rather than with any one of them.
"""
from __future__ import annotations

import numpy as np

from core.base.codes import BUILDING_NAMES, Kind
from core.base.errors import RouteError
from core.map.model import CityMap
from core.map.walking import walk_path

__all__ = ["STREET_NAMES", "describe_cell", "plan_trip"]

STREET_NAMES = {0.0: "empty", 1.0: "walking street", 2.0: "traffic street", -1.0: "crossing", 2.5: "mid lane"}


def describe_cell(city: CityMap, r: int, c: int) -> str:
    """'a <building> cell' or 'a <street kind> cell'."""
    b = int(city.building[r, c])
    if b:
        return f"a {BUILDING_NAMES.get(b, 'building')} cell"
    return f"a {STREET_NAMES.get(float(city.street[r, c]), 'unknown')} cell"


def plan_trip(kind: Kind, city: CityMap, start: tuple[int, int], goal: tuple[int, int]) -> np.ndarray:
    """The simulator's planners (cars: lane graph route; pedestrians: A* on the walking network), int32 [L, 2];
    a :class:`RouteError` when no route exists or the pedestrian's shortest way leaves the walking network."""
    if kind is Kind.CAR:
        return np.asarray(city.lane_graph.route(start, goal), np.int32)
    path = np.asarray(walk_path(city, start, goal), np.int32)
    off = ~city.walkable[path[:, 0], path[:, 1]]
    if off.any():
        j = int(np.argmax(off))
        raise RouteError(f"no walking route from {start} to {goal}: the shortest way leaves the walking network at "
                         f"{tuple(int(v) for v in path[j])}")
    return path
