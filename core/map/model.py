"""City map data model: the blocks/streets/buildings a user edits plus the raster layers derived from them.

A :class:`CityMap` is built from its specification (:class:`Street` and :class:`Building` lists) by
:func:`core.map.layers.derive_layers`; the layers are never edited by hand, so a map file stays small and the
derived data (mid lanes, intersections) is always consistent with the specification.

Dependencies point one way: this module imports :mod:`core.map.spec` (streets, buildings, junctions) and
:mod:`core.map.lanes` (for the cached :attr:`CityMap.lane_graph`); ``lanes`` reads a city through its own
protocol, and ``layers`` builds on both.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from core.map.lanes import LaneGraph
from core.map.spec import Building, Junction, Street


@dataclass(eq=False)
class CityMap:
    """A city: specification plus derived layers (all arrays ``[H, W]`` unless stated).

    * ``street`` float32 — street codes (core.base.codes STREET_*): 1 walking, 2 traffic, -1 crossing, 2.5 mid lane.
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
