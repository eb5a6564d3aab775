"""Derive the raster layers of a city (street codes, buildings, blocks, mid lanes, intersections) from its spec.

Why a general algorithm: the reference derives mid lanes and intersections from block bounding boxes with
hard-coded distances (11, 20) and asserts 80 lines / 32 boxes, so only its 5×5 map loads. Here everything is
computed from the street geometry, so generated cities with other block counts, block sizes and street widths
work, while the reference map still gives exactly the reference layers (docs/reference.md#maps-and-layers; tests
check every number).

The algorithm (documented for users in docs/formats.md, "Derived layers"):

1. Paint streets: cells covered only by walking streets get 1, only by traffic streets 2, by both −1
   (a zebra crossing). This equals the reference's order-dependent painting rule for every street order.
2. *Block regions* are the 4-connected components of cells not covered by any traffic street. A region's
   *sidewalk depth* on each side is the number of outermost rows/columns that consist of walking cells only;
   the rest is the region's *core* (the block proper: its building lots and inner walkways).
3. *Crossings* are the connected components where a horizontal and a vertical traffic street overlap. Around a
   crossing ``X`` the *junction square* ``Q`` reaches out to the cores of the diagonal neighbour regions
   (one cell outside them); where no region lies on a side ``Q`` ends at ``X``'s own edge (the map border
   for border streets).
4. An *arm* of a crossing (the traffic street leaving it up/down/left/right) has an "at" line on ``Q``'s
   boundary when the street continues there and has a different block region on each of its sides. Pedestrian lines
   (layer 1) are the whole side of ``Q``; car lines (layer 0) the half on which incoming traffic arrives
   (right-hand traffic). A crossing with at least one line is an intersection: its ``Q`` minus its lines is
   the "in" box (layer 2). So border T-junctions only have the city-side line and the four map corners (no
   line at all) are not intersections — as in the reference. Labels 1..K follow the raster order of the
   boxes' top-left cells (the order scipy's component labelling gives on the reference).
5. Mid lanes: the centre row/column of every traffic street, outside every junction square, on pure traffic
   cells (a mid-block zebra crossing interrupts it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from scipy import ndimage

from core.base.codes import BUILDING_CODES, STREET_MIDLANE, STREET_OVERLAP, STREET_TRAFFIC, STREET_WALKING
from core.map.model import CityMap
from core.map.spec import Building, Junction, Street

__all__ = ["Junction", "StreetCover", "derive_layers", "paint_streets", "find_junctions"]


@dataclass(frozen=True)
class StreetCover:
    """Which cells each kind of street covers (before codes are combined)."""

    walking: np.ndarray      # bool [H, W]
    traffic: np.ndarray      # bool [H, W]
    traffic_h: np.ndarray    # bool [H, W], horizontal traffic streets only
    traffic_v: np.ndarray    # bool [H, W], vertical traffic streets only


def _clip(sl: slice, n: int) -> slice:
    return slice(min(max(sl.start, 0), n), min(max(sl.stop, 0), n))


def paint_streets(height: int, width: int, streets: Iterable[Street]) -> StreetCover:
    """Coverage masks of all streets (footprints clipped to the map)."""
    walk = np.zeros((height, width), dtype=bool)
    th = np.zeros((height, width), dtype=bool)
    tv = np.zeros((height, width), dtype=bool)
    for s in streets:
        rs, cs = s.footprint()
        idx = (_clip(rs, height), _clip(cs, width))
        if s.kind == "walking":
            walk[idx] = True
        elif s.orientation == "horizontal":
            th[idx] = True
        else:
            tv[idx] = True
    return StreetCover(walk, th | tv, th, tv)


def street_codes(cover: StreetCover) -> np.ndarray:
    """Street layer before mid lanes: 1 walking, 2 traffic, −1 both (the reference's painting rule,
    docs/reference.md#street-and-building-codes)."""
    street = np.zeros(cover.walking.shape, dtype=np.float32)
    street[cover.walking] = STREET_WALKING
    street[cover.traffic] = STREET_TRAFFIC
    street[cover.walking & cover.traffic] = STREET_OVERLAP
    return street


def _leading_true(flags: np.ndarray) -> int:
    """Number of leading True values of a 1-D bool array."""
    false = np.flatnonzero(~flags)
    return int(false[0]) if false.size else int(flags.size)


def _region_cores(cover: StreetCover) -> tuple[np.ndarray, list[tuple[int, int, int, int] | None]]:
    """Label block regions (non-traffic components) and compute each region's core (inclusive bounds)."""
    labels, n = ndimage.label(~cover.traffic)
    cores: list[tuple[int, int, int, int] | None] = []
    for i, sl in enumerate(ndimage.find_objects(labels)):
        inside = labels[sl] == i + 1
        walkish = cover.walking[sl] | ~inside
        rows_full = walkish.all(axis=1)
        if rows_full.all():              # a fully paved region has no core (validation reports it)
            cores.append(None)
            continue
        cols_full = walkish.all(axis=0)
        top = _leading_true(rows_full)
        bottom = _leading_true(rows_full[::-1])
        left = _leading_true(cols_full)
        right = _leading_true(cols_full[::-1])
        r0, c0 = sl[0].start, sl[1].start
        cores.append((r0 + top, sl[0].stop - 1 - bottom, c0 + left, sl[1].stop - 1 - right))
    return labels, cores


def find_junctions(cover: StreetCover) -> tuple[list[Junction], np.ndarray, list]:
    """All traffic crossings with their junction squares; intersections get labels 1..K in raster order.

    Returns ``(junctions, region_labels, region_cores)``.
    """
    h, w = cover.traffic.shape
    regions, cores = _region_cores(cover)
    xlab, _ = ndimage.label(cover.traffic_h & cover.traffic_v)
    raw: list[Junction] = []

    def region(r: int, c: int) -> int:
        if 0 <= r < h and 0 <= c < w:
            return int(regions[r, c]) - 1
        return -1

    def core(i: int) -> tuple[int, int, int, int] | None:
        return cores[i] if i >= 0 else None

    for sl in ndimage.find_objects(xlab):
        r0, r1, c0, c1 = sl[0].start, sl[0].stop, sl[1].start, sl[1].stop  # exclusive ends
        mr, mc = r0 + (r1 - r0) // 2, c0 + (c1 - c0) // 2
        ul, ur, dl, dr = region(r0 - 1, c0 - 1), region(r0 - 1, c1), region(r1, c0 - 1), region(r1, c1)
        # the cores of the diagonal regions that lie wholly above / below / left / right of the crossing
        up = [b for b in map(core, (ul, ur)) if b is not None and b[1] < r0]
        down = [b for b in map(core, (dl, dr)) if b is not None and b[0] >= r1]
        left = [b for b in map(core, (ul, dl)) if b is not None and b[3] < c0]
        right = [b for b in map(core, (ur, dr)) if b is not None and b[2] >= c1]
        top = min((b[1] + 1 for b in up), default=r0)
        bottom = max((b[0] - 1 for b in down), default=r1 - 1)
        lft = min((b[3] + 1 for b in left), default=c0)
        rgt = max((b[2] - 1 for b in right), default=c1 - 1)
        # An arm has a line when its street continues there with a (different) block region on each side;
        # at least one of them must lie wholly on that side of the crossing to place the line.
        lines = []
        if r0 > 0 and cover.traffic_v[r0 - 1, mc] and min(ul, ur) >= 0 and ul != ur and up:
            lines.append("up")
        if r1 < h and cover.traffic_v[r1, mc] and min(dl, dr) >= 0 and dl != dr and down:
            lines.append("down")
        if c0 > 0 and cover.traffic_h[mr, c0 - 1] and min(ul, dl) >= 0 and ul != dl and left:
            lines.append("left")
        if c1 < w and cover.traffic_h[mr, c1] and min(ur, dr) >= 0 and ur != dr and right:
            lines.append("right")
        raw.append(Junction((r0, r1 - 1, c0, c1 - 1), (top, bottom, lft, rgt), (mr, mc), tuple(lines)))

    order = sorted((j for j in raw if j.lines), key=lambda j: (j.box[0], j.box[2]))
    label_of = {id(j): k + 1 for k, j in enumerate(order)}
    out = [Junction(j.crossing, j.box, j.mid, j.lines, label_of.get(id(j), 0)) for j in raw]
    out.sort(key=lambda j: (j.box[0], j.box[2]))
    return out, regions, cores


def intersection_layers(shape: tuple[int, int], junctions: Sequence[Junction]) -> np.ndarray:
    """The ``[3, H, W]`` intersection tensor (layer 0 car at-lines, 1 pedestrian at-lines, 2 in-boxes)."""
    inter = np.zeros((3,) + tuple(shape), dtype=np.int16)
    for j in junctions:
        if not j.label:
            continue
        top, bottom, left, right = j.box
        inter[2, top:bottom + 1, left:right + 1] = j.label
        for side in j.lines:
            inter[1][j.line_cells(side)] = j.label
            inter[0][j.line_cells(side, half=True)] = j.label
    inter[2][inter[1] > 0] = 0
    return inter


def midline_mask(streets: Iterable[Street], street: np.ndarray, junctions: Sequence[Junction]) -> np.ndarray:
    """Mid-lane cells: traffic street centre lines outside every junction square, on pure traffic cells."""
    h, w = street.shape
    mid = np.zeros((h, w), dtype=bool)
    for s in streets:
        if s.kind != "traffic":
            continue
        if s.orientation == "horizontal":
            r = s.row + s.width // 2
            if 0 <= r < h:
                mid[r, _clip(slice(s.col, s.col + s.length), w)] = True
        else:
            c = s.col + s.width // 2
            if 0 <= c < w:
                mid[_clip(slice(s.row, s.row + s.length), h), c] = True
    for j in junctions:
        top, bottom, left, right = j.box
        mid[top:bottom + 1, left:right + 1] = False
    mid &= street == STREET_TRAFFIC
    return mid


def building_layers(shape: tuple[int, int], buildings: Iterable[Building]) -> tuple[np.ndarray, np.ndarray]:
    """Building type codes (int8) and block ids (int16) of building cells."""
    h, w = shape
    bld = np.zeros((h, w), dtype=np.int8)
    blk = np.zeros((h, w), dtype=np.int16)
    for b in buildings:
        rs, cs = b.footprint()
        idx = (_clip(rs, h), _clip(cs, w))
        bld[idx] = BUILDING_CODES.get(b.kind, 0)
        blk[idx] = b.block
    return bld, blk


def derive_layers(name: str, height: int, width: int, streets: Sequence[Street], buildings: Sequence[Building],
                  source: str | None = None, generator: Mapping[str, Any] | None = None) -> CityMap:
    """Build a :class:`CityMap` with every derived layer filled (see the module docstring for the rules).

    Pure derivation: it never raises for odd geometry (the validator in :mod:`core.map.validate` reports
    problems with file locations); out-of-map parts of streets/buildings are clipped.
    """
    streets = tuple(streets)
    buildings = tuple(buildings)
    cover = paint_streets(height, width, streets)
    street = street_codes(cover)
    junctions, _, _ = find_junctions(cover)
    inter = intersection_layers((height, width), junctions)
    mid = midline_mask(streets, street, junctions)
    street[mid] = STREET_MIDLANE
    bld, blk = building_layers((height, width), buildings)
    city = CityMap(name=name, height=height, width=width, streets=streets, buildings=buildings, street=street,
                   building=bld, block=blk, midline=mid, intersections=inter, source=source,
                   generator=dict(generator) if generator else None, junctions=tuple(junctions))
    return city
