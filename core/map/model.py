"""City map data model: the blocks/streets/buildings a user edits plus the raster layers derived from them.

A :class:`CityMap` is built from its specification (:class:`Street` and :class:`Building` lists) by
:func:`core.map.layers.derive_layers`; the layers are never edited by hand, so a map file stays small and the
derived data (mid lanes, intersections) is always consistent with the specification.

Dependencies point one way: this module imports :mod:`core.map.lanes` (for the cached :attr:`CityMap.lane_graph`);
``lanes`` needs nothing from here at run time and ``layers`` builds on both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np

from .lanes import LaneGraph

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

    kind: str  # one of core.codes.BUILDING_CODES
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


@dataclass(eq=False)
class CityMap:
    """A city: specification plus derived layers (all arrays ``[H, W]`` unless stated).

    * ``street`` float32 — street codes (core.codes STREET_*): 1 walking, 2 traffic, -1 crossing, 2.5 mid lane.
    * ``building`` int8 — building type codes 3..7, 0 elsewhere.
    * ``block`` int16 — block id of building cells, 0 elsewhere.
    * ``midline`` bool — mid-lane cells.
    * ``intersections`` int16 ``[3, H, W]`` — layer 0 car "at" lines, layer 1 pedestrian "at" lines,
      layer 2 "in" boxes; values are intersection labels 1..K (0 = none).

    ``junctions`` lists every traffic crossing with its junction square (intersections have ``label`` > 0);
    ``generator`` keeps the parameters of :func:`core.map.generate.generate_city` for generated maps.
    """

    name: str
    height: int
    width: int
    streets: tuple[Street, ...]
    buildings: tuple[Building, ...]
    street: np.ndarray = field(repr=False)
    building: np.ndarray = field(repr=False)
    block: np.ndarray = field(repr=False)
    midline: np.ndarray = field(repr=False)
    intersections: np.ndarray = field(repr=False)
    source: str | None = None
    generator: dict | None = field(default=None, repr=False)
    junctions: tuple[Junction, ...] = field(default=(), repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    @property
    def walkable(self) -> np.ndarray:
        """Cells pedestrians walk on: walking street or crossing (docs/reference.md#pedestrian-planning)."""
        return (self.street == 1.0) | (self.street == -1.0)

    @property
    def drivable(self) -> np.ndarray:
        """Cells cars drive on: traffic street, mid lane or crossing."""
        return (self.street == 2.0) | (self.street == 2.5) | (self.street == -1.0)

    @cached_property
    def lane_graph(self) -> LaneGraph:
        """The car lane graph of this map (built once, shared; routing never mutates it)."""
        return LaneGraph.from_map(self)
