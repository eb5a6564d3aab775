"""Validation of city maps with located errors.

Two stages, both raising :class:`core.base.errors.ConfigError` that names the file and the line of the offending
street/building (``Locator`` maps list indices to lines; generated cities have no file):

* :func:`check_spec` — the specification alone: sizes and types, streets/buildings inside the map, unknown
  building types, overlapping buildings, buildings on streets, traffic-street widths, no traffic street.
* :func:`check_city` — the derived city: every block has a core, lanes end in junctions, the car lane graph
  is strongly connected and all pedestrian goal cells lie in one walking network, so every goal is reachable.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import networkx as nx
import numpy as np
from scipy import ndimage

from core.base.codes import BUILDING_CODES, HOUSE, OFFICE, STREET_WALKING
from core.base.errors import ConfigError
from core.map.lanes import LaneGeometryError, LaneGraph
from core.map.layers import _region_cores, paint_streets
from core.map.model import CityMap
from core.map.spec import Building, Street

__all__ = ["Locator", "check_spec", "check_city", "validate_city", "MIN_TRAFFIC_WIDTH"]

MIN_TRAFFIC_WIDTH = 3


@dataclass
class Locator:
    """Where the parts of a map came from: file, line of the top level / ``streets:`` key, and item lines."""

    file: str | None = None
    root_line: int | None = None
    streets_line: int | None = None
    street_lines: Sequence[int | None] = field(default_factory=tuple)
    building_lines: Sequence[int | None] = field(default_factory=tuple)

    def root(self, message: str, line: int | None = None) -> ConfigError:
        return ConfigError(message, self.file, line if line is not None else self.root_line)

    def street(self, i: int, message: str) -> ConfigError:
        line = self.street_lines[i] if i < len(self.street_lines) else None
        return ConfigError(f"street #{i + 1}: {message}", self.file, line)

    def building(self, i: int, message: str) -> ConfigError:
        line = self.building_lines[i] if i < len(self.building_lines) else None
        return ConfigError(f"building #{i + 1}: {message}", self.file, line)

    def describe_building(self, i: int) -> str:
        line = self.building_lines[i] if i < len(self.building_lines) else None
        return f"building #{i + 1}" + (f" (line {line})" if line else "")


def _rect(r0: int, c0: int, rows: int, cols: int) -> str:
    return f"rows {r0}..{r0 + rows - 1}, cols {c0}..{c0 + cols - 1}"


#: Largest map side accepted (a 4096² city already needs ~200 MB of derived layers and lane data).
MAX_MAP_SIDE = 4096
#: Largest building block id (the block layer stores ids as int16).
MAX_BLOCK_ID = 32767


def check_spec(height: int, width: int, streets: Sequence[Street], buildings: Sequence[Building],
               loc: Locator | None = None) -> None:
    """Check the specification; raises a located :class:`ConfigError` for the first problem found."""
    loc = loc or Locator()
    if height < 1 or width < 1:
        raise loc.root(f"map size must be positive, got {height}x{width}")
    if height > MAX_MAP_SIDE or width > MAX_MAP_SIDE:
        raise loc.root(f"map size {height}x{width} is too large (at most {MAX_MAP_SIDE} cells per side; the "
                       f"reference city is 241x241)")
    if not any(s.kind == "traffic" for s in streets):
        raise loc.root("the map has no traffic street: cars need at least one", loc.streets_line)
    for i, s in enumerate(streets):
        if s.kind not in ("traffic", "walking"):
            raise loc.street(i, f"unknown street kind {s.kind!r} (expected traffic or walking)")
        if s.orientation not in ("horizontal", "vertical"):
            raise loc.street(i, f"unknown orientation {s.orientation!r} (expected horizontal or vertical)")
        if s.length < 1 or s.width < 1:
            raise loc.street(i, f"length and width must be at least 1 (got length {s.length}, width {s.width})")
        if s.kind == "traffic" and (s.width < MIN_TRAFFIC_WIDTH or s.width % 2 == 0):
            raise loc.street(i, f"traffic street width must be odd and at least {MIN_TRAFFIC_WIDTH} (a mid lane "
                                f"with one lane on each side), got {s.width}")
        rs, cs = s.footprint()
        if rs.start < 0 or cs.start < 0 or rs.stop > height or cs.stop > width:
            area = _rect(rs.start, cs.start, rs.stop - rs.start, cs.stop - cs.start)
            raise loc.street(i, f"{s.kind} street covering {area} lies outside the {height}x{width} map")
    _check_traffic_ends(streets, loc)
    cover = paint_streets(height, width, streets)
    any_street = cover.walking | cover.traffic
    owner = np.full((height, width), -1, dtype=np.int32)
    for i, b in enumerate(buildings):
        if b.kind not in BUILDING_CODES:
            raise loc.building(i, f"unknown building type {b.kind!r} (expected one of "
                                  f"{', '.join(BUILDING_CODES)})")
        if b.rows < 1 or b.cols < 1:
            raise loc.building(i, f"size must be at least 1x1, got {b.rows}x{b.cols}")
        if not 1 <= b.block <= MAX_BLOCK_ID:  # the block layer is int16
            raise loc.building(i, f"block id must be an integer 1..{MAX_BLOCK_ID}, got {b.block}")
        if b.row < 0 or b.col < 0 or b.row + b.rows > height or b.col + b.cols > width:
            raise loc.building(i, f"{b.kind} covering {_rect(b.row, b.col, b.rows, b.cols)} lies outside the "
                                  f"{height}x{width} map")
        fp = b.footprint()
        taken = owner[fp]
        if (taken >= 0).any():
            other = int(taken[taken >= 0][0])
            raise loc.building(i, f"{b.kind} at ({b.row}, {b.col}) overlaps {loc.describe_building(other)}")
        if any_street[fp].any():
            r, c = np.argwhere(any_street[fp])[0]
            cell = (int(r) + b.row, int(c) + b.col)
            j = street_at(streets, cell)
            raise loc.building(i, f"{b.kind} at ({b.row}, {b.col}) overlaps street #{j + 1} at cell {cell}")
        owner[fp] = i


def _check_traffic_ends(streets: Sequence[Street], loc: Locator) -> None:
    """A traffic street that ends at a crossing traffic street must overlap that street's whole width.

    Ending inside the other street, or right beside it, would leave no clean junction square (no T-junction
    is recognised and its lanes would not connect).
    """
    traffic = [(i, s) for i, s in enumerate(streets) if s.kind == "traffic"]
    for i, a in traffic:
        ar, ac = a.footprint()
        for j, b in traffic:
            if b.orientation == a.orientation:
                continue
            br, bc = b.footprint()
            if a.orientation == "horizontal":
                if br.stop <= ar.start or br.start >= ar.stop:
                    continue
                (lo, hi), (s0, s1), axis = (bc.start, bc.stop), (ac.start, ac.stop), "cols"
            else:
                if bc.stop <= ac.start or bc.start >= ac.stop:
                    continue
                (lo, hi), (s0, s1), axis = (br.start, br.stop), (ar.start, ar.stop), "rows"
            if lo < s1 < hi or s1 == lo or lo < s0 < hi or s0 == hi:
                raise loc.street(i, f"traffic street ends inside or right beside traffic street #{j + 1} "
                                    f"({axis} {lo}..{hi - 1}); extend it across that street's full width so "
                                    "the two form a junction")


def street_at(streets: Sequence[Street], cell, kind: str | None = None) -> int:
    """Index of the first street (of ``kind``) covering ``cell``; else the nearest one; -1 if there is none."""
    r, c = int(cell[0]), int(cell[1])
    best, best_d = -1, None
    for i, s in enumerate(streets):
        if kind is not None and s.kind != kind:
            continue
        rs, cs = s.footprint()
        dr = max(rs.start - r, 0, r - (rs.stop - 1))
        dc = max(cs.start - c, 0, c - (cs.stop - 1))
        d = dr + dc
        if d == 0:
            return i
        if best_d is None or d < best_d:
            best, best_d = i, d
    return best


def _at_street(loc: Locator, city: CityMap, cell, kind: str | None, message: str) -> ConfigError:
    i = street_at(city.streets, cell, kind)
    return loc.street(i, message) if i >= 0 else loc.root(message)


def check_city(city: CityMap, loc: Locator | None = None) -> LaneGraph:
    """Check the derived city (see module docstring); returns the lane graph it built (and caches it)."""
    loc = loc or Locator(file=city.source)
    cover = paint_streets(city.height, city.width, city.streets)
    regions, cores = _region_cores(cover)
    for k, core in enumerate(cores):
        if core is None:
            r, c = np.argwhere(regions == k + 1)[0]
            raise _at_street(loc, city, (r, c), "walking",
                             f"the block around cell ({r}, {c}) is paved entirely with walking streets; a block "
                             "needs buildings or empty lots inside its sidewalks")
    # Buildings of one block id must lie in one block region (goal exclusion uses whole blocks).
    seen: dict[int, tuple[int, int]] = {}
    for i, b in enumerate(city.buildings):
        reg = int(regions[b.row, b.col])
        if b.block in seen and seen[b.block][1] != reg:
            raise loc.building(i, f"block id {b.block} is also used by {loc.describe_building(seen[b.block][0])} "
                                  "in another city block; use one id per block")
        seen.setdefault(b.block, (i, reg))
    try:
        lanes = LaneGraph.from_map(city)
    except LaneGeometryError as exc:
        raise _at_street(loc, city, exc.cell, "traffic", exc.message) from None
    if not lanes.lanes:
        raise loc.root("the traffic streets form no lane: each needs a straight stretch of at least 2 cells "
                       "between junctions", loc.streets_line)
    sccs = sorted(nx.strongly_connected_components(lanes.graph), key=len, reverse=True)
    if len(sccs) > 1:
        order = {n: i for i, n in enumerate(lanes.graph.nodes)}
        node = min(sccs[1], key=order.__getitem__)
        raise _at_street(loc, city, node, "traffic",
                         f"the car lane graph is split into {len(sccs)} parts: lanes at {node} and "
                         f"{len(sccs[1]) - 1} other lane ends cannot reach (or be reached from) the rest, so some "
                         "car goals are unreachable")
    city.__dict__["lane_graph"] = lanes  # cache for CityMap.lane_graph
    walk_lab, _ = ndimage.label(city.walkable)
    goals = (city.street == STREET_WALKING) & ndimage.binary_dilation(
        np.isin(city.building, (HOUSE, OFFICE)), structure=np.ones((3, 3), bool))
    parts = walk_lab[goals]
    if parts.size:
        ids, counts = np.unique(parts, return_counts=True)
        if len(ids) > 1:
            main = ids[np.argmax(counts)]
            other = ids[ids != main][0]
            r, c = np.argwhere(goals & (walk_lab == other))[0]
            raise _at_street(loc, city, (r, c), "walking",
                             f"the walking network is split: pedestrian goal cells around ({r}, {c}) "
                             f"({int(counts[ids == other][0])} cells) are not connected to the others by walking "
                             "streets or crossings, so some pedestrian goals are unreachable")
    return lanes


def validate_city(city: CityMap, loc: Locator | None = None) -> LaneGraph:
    """Both stages of validation; returns the city's lane graph."""
    loc = loc or Locator(file=city.source)
    check_spec(city.height, city.width, city.streets, city.buildings, loc)
    return check_city(city, loc)
