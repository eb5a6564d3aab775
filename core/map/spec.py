"""What a user draws a city with: straight streets, rectangular buildings and the junctions where traffic streets
cross — plain frozen data, the specification that :class:`core.map.model.CityMap` derives its raster layers from.

Why a module of its own: the lane graph reads the streets of a city and the city model caches its lane graph;
with the specification here, both import it and neither imports the other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StreetKind = Literal["walking", "traffic"]
Orientation = Literal["horizontal", "vertical"]


@dataclass(frozen=True)
class Street:
    """A straight street. Horizontal: rows [row, row+width), cols [col, col+length); vertical: swapped."""

    kind: StreetKind
    orientation: Orientation
    row: int
    col: int
    length: int
    width: int
    directions: int = 2  # stored for the reference format; has no effect on simulation

    def footprint(self) -> tuple[slice, slice]:
        if self.orientation == "horizontal":
            return slice(self.row, self.row + self.width), slice(self.col, self.col + self.length)
        return slice(self.row, self.row + self.length), slice(self.col, self.col + self.width)


@dataclass(frozen=True)
class Building:
    """A rectangular building of one type covering rows [row, row+rows), cols [col, col+cols)."""

    kind: str  # one of core.base.codes.BUILDING_CODES
    row: int
    col: int
    rows: int
    cols: int
    block: int  # 1-based block id; buildings of one block share it
    height: int | None = None  # stored for rendering; no effect on simulation

    def footprint(self) -> tuple[slice, slice]:
        return slice(self.row, self.row + self.rows), slice(self.col, self.col + self.cols)


@dataclass(frozen=True)
class Junction:
    """One traffic crossing and its junction square (inclusive bounds), as found by
    :func:`core.map.layers.find_junctions` and kept in :attr:`CityMap.junctions`.

    ``lines`` maps the arm side ("up", "down", "left", "right") that has an "at" line to nothing more than its
    presence; the geometry follows from ``box`` and ``mid``. ``label`` is 0 for crossings that are not
    intersections (no line: map corners).
    """

    crossing: tuple[int, int, int, int]   # top, bottom, left, right of the traffic x traffic square
    box: tuple[int, int, int, int]        # top, bottom, left, right of the junction square Q
    mid: tuple[int, int]                  # midline row of the horizontal street, midline col of the vertical one
    lines: tuple[str, ...]
    label: int = 0

    @property
    def is_intersection(self) -> bool:
        return bool(self.lines)

    def line_cells(self, side: str, half: bool = False) -> tuple[slice, slice]:
        """Index of the pedestrian line (or, ``half=True``, the car half-line) on ``side``."""
        top, bottom, left, right = self.box
        mr, mc = self.mid
        if side == "up":      # southbound arrivals drive left of the midline
            return slice(top, top + 1), slice(left, (mc if half else right + 1))
        if side == "down":    # northbound arrivals drive right of the midline
            return slice(bottom, bottom + 1), slice((mc + 1 if half else left), right + 1)
        if side == "left":    # eastbound arrivals drive below the midline
            return slice((mr + 1 if half else top), bottom + 1), slice(left, left + 1)
        if side == "right":   # westbound arrivals drive above the midline
            return slice(top, (mr if half else bottom + 1)), slice(right, right + 1)
        raise ValueError(side)
