"""Derived layers of an edited city, recomputed after each edit — only the parts the edit can change.

Why not :func:`core.map.layers.derive_layers` from the specification each time: it repaints every street from the
list, and the editor's specification (:meth:`core.map.edit.CityDraft.to_spec`) is itself found from the cells, so
the editor would pay for both on every stroke. :class:`CityBuilder` derives from the cell masks directly and keeps
what the last build computed, keyed by what it depends on:

* the *street stage* — street codes, junction squares, intersections, mid lanes, the traffic streets of the
  specification, the block regions and the lane graph — depends on the walking and traffic masks only: a stroke
  that paints or erases buildings reuses all of it (the commonest edit);
* the walking streets of the specification depend on the walking mask, the traffic streets on their orientation's
  mask: a walking stroke does not re-cut the traffic streets and the other way round;
* the lane graph is rebuilt only when the mid lanes or the drivable cells changed (sidewalk strokes away from the
  junctions leave it as it is) — on demand, since only validation and the simulation read it.

The result equals ``derive_layers`` of the same specification layer for layer (tests/core/map/test_derived.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.base.codes import STREET_MIDLANE, STREET_TRAFFIC
from core.map.cells import BLD_SHIFT, building_spec, runs_2d, traffic_streets, walking_streets
from core.map.edit import CityDraft
from core.map.layers import StreetCover, find_junctions, intersection_layers, street_codes
from core.map.model import CityMap
from core.map.spec import Building, Street

__all__ = ["CityBuilder", "centre_lines", "midline_from_masks"]


def centre_lines(th: np.ndarray, tv: np.ndarray) -> np.ndarray:
    """The centre cell of each traffic street's cross-section (what :func:`core.map.layers.midline_mask` takes from
    the street list): per column for horizontal streets, per row for vertical ones."""
    mid = np.zeros(th.shape, bool)
    cols, r0, r1, _ = runs_2d(th.T)          # per column: vertical runs of horizontal streets
    mid[r0 + (r1 - r0) // 2, cols] = True
    rows, c0, c1, _ = runs_2d(tv)             # per row: horizontal runs of vertical streets
    mid[rows, c0 + (c1 - c0) // 2] = True
    return mid


def midline_from_masks(th: np.ndarray, tv: np.ndarray, street: np.ndarray, junctions,
                       centre: np.ndarray | None = None) -> np.ndarray:
    """Mid lanes: the :func:`centre_lines` (given or computed) outside every junction square, on pure traffic
    cells."""
    mid = (centre if centre is not None else centre_lines(th, tv)).copy()
    for j in junctions:
        top, bottom, left, right = j.box
        mid[top:bottom + 1, left:right + 1] = False
    mid &= street == STREET_TRAFFIC
    return mid


@dataclass
class _StreetStage:
    walk: np.ndarray
    th: np.ndarray
    tv: np.ndarray
    streets_h: list[Street]
    streets_v: list[Street]
    streets_w: list[Street]
    street: np.ndarray
    midline: np.ndarray
    inter: np.ndarray
    junctions: tuple
    regions: np.ndarray
    lane_graph: Any = None
    lane_city: Any = None


@dataclass
class BuildStats:
    """What the last build reused (benchmarks and tests read it)."""

    street_stage: bool = False       # True: reused
    walking_spec: bool = False
    traffic_spec: bool = False
    buildings: bool = False
    lane_graph: bool = False
    extra: dict = field(default_factory=dict)


class CityBuilder:
    """Builds :class:`CityMap`s from successive drafts of one city, reusing what an edit did not change."""

    def __init__(self) -> None:
        self._stage: _StreetStage | None = None
        # the last building result: (building bits of the cells, buildings, building codes, block ids)
        self._bcache: tuple[np.ndarray, tuple[Building, ...], np.ndarray, np.ndarray] | None = None
        self._bregions: np.ndarray | None = None
        self._centre: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None   # (th, tv, centre lines)
        self.stats = BuildStats()

    def build(self, draft: CityDraft, source: str | None = None) -> CityMap:
        cells = draft.cells
        walk = (cells & 1) != 0
        th = (cells & 2) != 0
        tv = (cells & 4) != 0
        stats = BuildStats()
        stage = self._stage
        if stage is not None and stage.walk.shape == walk.shape and np.array_equal(stage.walk, walk) \
                and np.array_equal(stage.th, th) and np.array_equal(stage.tv, tv):
            stats.street_stage = True
        else:
            stage = self._street_stage(walk, th, tv, stage, stats)
        # buildings: codes and ids from the cells; the specification only when a building bit changed
        bpart = cells >> BLD_SHIFT
        # (block ids follow the city blocks: the same buildings in the same block regions give the same result)
        cached = self._bcache
        if cached is not None and cached[0].shape == bpart.shape and np.array_equal(cached[0], bpart) \
                and (stats.street_stage or (self._bregions is not None
                                            and np.array_equal(self._bregions, stage.regions))):
            stats.buildings = True
            _, buildings, bld, blk = cached
        else:
            buildings, bld, blk = building_spec(cells, stage.regions)
            self._bcache = (bpart, buildings, bld, blk)
        self._bregions = stage.regions
        streets = tuple(stage.streets_h + stage.streets_v + stage.streets_w)
        h, w = draft.shape
        city = CityMap(name=draft.name, height=h, width=w, streets=streets, buildings=buildings,
                       street=stage.street.copy(), building=bld.copy(), block=blk.copy(),
                       midline=stage.midline.copy(), intersections=stage.inter.copy(), source=source,
                       generator=dict(draft.generator) if draft.generator else None, junctions=stage.junctions)
        if stage.lane_graph is None and stage.lane_city is not None:   # built since (validation, simulation)
            stage.lane_graph = stage.lane_city.__dict__.get("lane_graph")
        if stage.lane_graph is not None:
            city.__dict__["lane_graph"] = stage.lane_graph
            stats.lane_graph = True
        else:
            stage.lane_city = city      # built on demand from this city; the next builds pick it up
        self.stats = stats
        return city

    def _street_stage(self, walk, th, tv, old: _StreetStage | None, stats: BuildStats) -> _StreetStage:
        if old is not None and old.walk.shape != walk.shape:
            old = None   # nothing of another shape is reused
        if old is not None and np.array_equal(old.th, th):
            streets_h = old.streets_h
        else:
            streets_h = traffic_streets(th, "horizontal")
        if old is not None and np.array_equal(old.tv, tv):
            streets_v = old.streets_v
        else:
            streets_v = traffic_streets(tv, "vertical")
        stats.traffic_spec = old is not None and streets_h is old.streets_h and streets_v is old.streets_v
        if old is not None and np.array_equal(old.walk, walk):
            streets_w = old.streets_w
            stats.walking_spec = True
        else:
            streets_w = walking_streets(walk)
        traffic = th | tv
        cover = StreetCover(walk, traffic, th, tv)
        street = street_codes(cover)
        junctions, regions, _ = find_junctions(cover)
        inter = intersection_layers(street.shape, junctions)
        if self._centre is not None and self._centre[0].shape == th.shape and np.array_equal(self._centre[0], th) \
                and np.array_equal(self._centre[1], tv):
            centre = self._centre[2]
        else:
            centre = centre_lines(th, tv)
            self._centre = (th, tv, centre)
        mid = midline_from_masks(th, tv, street, junctions, centre)
        street[mid] = STREET_MIDLANE
        stage = _StreetStage(walk, th, tv, streets_h, streets_v, streets_w, street, mid, inter, tuple(junctions),
                             regions)
        if old is not None:
            old_graph = old.lane_graph if old.lane_graph is not None else \
                (old.lane_city.__dict__.get("lane_graph") if old.lane_city is not None else None)
            if old_graph is not None and streets_h is old.streets_h and streets_v is old.streets_v \
                    and np.array_equal(old.midline, mid) and np.array_equal(old.street, street):
                stage.lane_graph = old_graph     # mid lanes, drivable cells and widths as before
        self._stage = stage
        return stage
