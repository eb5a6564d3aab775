"""Cell edits of a city: the city editor's paint, rectangle, erase, eyedropper and move-block tools, and canvas
resizing, as pure functions on a :class:`CityDraft` (no Qt; tests/core/map/test_edit.py).

Why a raster draft: a city file lists streets and buildings as rectangles, but users paint cells. The draft keeps
one int64 per cell packing what the specification can express — walking street, horizontal traffic street,
vertical traffic street (both: an intersection; walking and traffic: a zebra crossing), building type, block id and
building height — so every cell state a tool can make maps back to a specification
(:meth:`CityDraft.to_spec`: rectangles found row/column-wise, block ids kept or assigned per city block) and from it
to the derived layers (:mod:`core.map.derived`). The packing and the cut into rectangles live in
:mod:`core.map.cells`. Traffic keeps its orientation because the derived layers need it
(a crossing is where a horizontal and a vertical street overlap; mid lanes run along a street's centre line).

Every tool returns a :class:`Patch` — the bounding box of the change with the cells before and after — so an undo
step stores only what changed (unlimited undo stays small) and applying or reverting it is one slice assignment.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import ndimage

from core.base.codes import BUILDING_CODES
from core.map.cells import (
    BLD_SHIFT,
    BLK_SHIFT,
    HGT_SHIFT,
    KINDS,
    PAINT_KINDS,
    TH,
    TV,
    WALK,
    building_spec,
    check_kind,
    kind_of,
    paint_values,
    traffic_streets,
    walking_streets,
)
from core.map.layers import paint_streets
from core.map.model import CityMap
from core.map.spec import Building, Street

__all__ = ["CityDraft", "Patch", "KINDS", "PAINT_KINDS", "WALK", "TH", "TV", "BLD_SHIFT", "BLK_SHIFT", "HGT_SHIFT",
           "kind_of", "paint_values", "brush_offsets", "stroke_cells", "plan_stroke",
           "plan_rect", "pick", "block_rect", "plan_move", "resized"]

@dataclass(frozen=True)
class Patch:
    """A change of the rectangle ``rows r0..r0+h-1, cols c0..c0+w-1``: packed cells ``before`` and ``after``."""

    r0: int
    c0: int
    before: np.ndarray
    after: np.ndarray

    @property
    def rect(self) -> tuple[int, int, int, int]:
        """(top, left, bottom, right), inclusive."""
        h, w = self.before.shape
        return (self.r0, self.c0, self.r0 + h - 1, self.c0 + w - 1)

    @property
    def changed(self) -> bool:
        return not np.array_equal(self.before, self.after)

    def changed_cells(self) -> np.ndarray:
        """(row, col) of every cell the patch changes, int [N, 2]."""
        return np.argwhere(self.before != self.after) + (self.r0, self.c0)

    def merged(self, later: "Patch") -> "Patch":
        """One patch doing this one and then ``later`` (a paint stroke's segments become one undo step)."""
        a0, a1 = self.rect, later.rect
        top, left = min(a0[0], a1[0]), min(a0[1], a1[1])
        bottom, right = max(a0[2], a1[2]), max(a0[3], a1[3])
        after = np.zeros((bottom - top + 1, right - left + 1), np.int64)
        before = np.zeros_like(after)
        known = np.zeros(after.shape, bool)
        # after: later's after where it covers, else this one's after (cells only this one touched)
        _paste(after, self.after, self.r0 - top, self.c0 - left)
        _paste(after, later.after, later.r0 - top, later.c0 - left)
        # before: this one's before where it covers, else later's before (which equals the state this one left)
        _paste(before, later.before, later.r0 - top, later.c0 - left)
        _paste(before, self.before, self.r0 - top, self.c0 - left)
        _paste(known, np.ones(self.before.shape, bool), self.r0 - top, self.c0 - left)
        _paste(known, np.ones(later.before.shape, bool), later.r0 - top, later.c0 - left)
        if not known.all():   # cells of the union box neither touched: unchanged, taken from the state in between
            gap = ~known
            before[gap] = after[gap] = -1
        return Patch(top, left, before, after)


def _paste(dst: np.ndarray, src: np.ndarray, r: int, c: int) -> None:
    dst[r:r + src.shape[0], c:c + src.shape[1]] = src


class CityDraft:
    """The editable city: ``cells`` (int64 ``[H, W]``, packed as the module docstring says), its name and how it
    was generated (kept until the first edit)."""

    def __init__(self, cells: np.ndarray, name: str = "city", generator: dict | None = None) -> None:
        self.cells = np.ascontiguousarray(cells, dtype=np.int64)
        self.name = name
        self.generator = generator

    # ---- conversions ------------------------------------------------------------------------------------------
    @classmethod
    def from_city(cls, city: CityMap) -> "CityDraft":
        h, w = city.shape
        cover = paint_streets(h, w, city.streets)
        cells = (cover.walking.astype(np.int64) * WALK | cover.traffic_h.astype(np.int64) * TH
                 | cover.traffic_v.astype(np.int64) * TV)
        for b in city.buildings:
            rs = slice(max(b.row, 0), min(b.row + b.rows, h))
            cs = slice(max(b.col, 0), min(b.col + b.cols, w))
            hgt = 0 if b.height is None else min(int(b.height), 0xFFFE) + 1
            cells[rs, cs] = ((BUILDING_CODES.get(b.kind, 0) << BLD_SHIFT) | (int(b.block) << BLK_SHIFT)
                             | (hgt << HGT_SHIFT))
        return cls(cells, city.name, dict(city.generator) if city.generator else None)

    def copy(self) -> "CityDraft":
        return CityDraft(self.cells.copy(), self.name, dict(self.generator) if self.generator else None)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.cells.shape[0]), int(self.cells.shape[1]))

    def masks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(walking, horizontal traffic, vertical traffic) bool masks."""
        c = self.cells
        return (c & WALK) != 0, (c & TH) != 0, (c & TV) != 0

    def building_codes(self) -> np.ndarray:
        return ((self.cells >> BLD_SHIFT) & 7).astype(np.int8)

    # ---- patches ----------------------------------------------------------------------------------------------
    def apply(self, patch: Patch, undo: bool = False) -> None:
        """Put the patch's ``after`` (``undo``: its ``before``) into the draft (-1: a cell the patch leaves)."""
        src = patch.before if undo else patch.after
        dst = self.cells[patch.r0:patch.r0 + src.shape[0], patch.c0:patch.c0 + src.shape[1]]
        keep = src < 0
        if keep.any():
            dst[~keep] = src[~keep]
        else:
            dst[...] = src

    # ---- specification ----------------------------------------------------------------------------------------
    def to_spec(self) -> tuple[tuple[Street, ...], tuple[Building, ...]]:
        """Streets and buildings that paint exactly these cells (see the module docstring)."""
        walk, th, tv = self.masks()
        streets = (traffic_streets(th, "horizontal") + traffic_streets(tv, "vertical")
                   + walking_streets(walk))
        regions, _ = ndimage.label(~(th | tv))
        return tuple(streets), building_spec(self.cells, regions)[0]


# ---- tools --------------------------------------------------------------------------------------------------
def brush_offsets(size: int) -> tuple[int, int]:
    """(before, after) cells of a brush of ``size`` around its centre: 1 → (0, 0), 3 → (1, 1), 4 → (1, 2)."""
    size = max(1, int(size))
    return (size - 1) // 2, size // 2


def stroke_cells(points: Sequence[tuple[int, int]]) -> np.ndarray:
    """Every cell on the straight segments between consecutive ``points`` (a fast mouse leaves no gaps)."""
    pts = np.asarray(points, np.int64).reshape(-1, 2)
    if len(pts) < 2:
        return pts
    out = [pts[:1]]
    for a, b in zip(pts[:-1], pts[1:]):
        n = int(np.abs(b - a).max())
        if n == 0:
            continue
        t = np.arange(1, n + 1) / n
        out.append(np.rint(a + np.outer(t, b - a)).astype(np.int64))
    return np.concatenate(out)


def _clip_rect(shape, r0, c0, r1, c1):
    h, w = shape
    return max(r0, 0), max(c0, 0), min(r1, h - 1), min(c1, w - 1)


def stroke_kind(kind: str, points: Sequence[tuple[int, int]]) -> str:
    """``traffic`` becomes ``traffic_h`` or ``traffic_v`` by the stroke's main direction (a click: horizontal)."""
    if kind != "traffic":
        return kind
    pts = np.asarray(points, np.int64).reshape(-1, 2)
    d = np.abs(pts[-1] - pts[0]) if len(pts) else np.zeros(2)
    return "traffic_v" if d[0] > d[1] else "traffic_h"


def plan_stroke(draft: CityDraft, points: Sequence[tuple[int, int]], kind: str, size: int = 1) -> Patch | None:
    """Paint ``kind`` with a square brush of ``size`` along ``points`` (cells); None when it lies off the map."""
    kind = stroke_kind(kind, points)
    check_kind(kind)
    cells = stroke_cells(points)
    if not len(cells):
        return None
    lo, hi = brush_offsets(size)
    r0, c0 = cells.min(axis=0) - lo
    r1, c1 = cells.max(axis=0) + hi
    r0, c0, r1, c1 = _clip_rect(draft.shape, int(r0), int(c0), int(r1), int(c1))
    if r0 > r1 or c0 > c1:
        return None
    mask = np.zeros((r1 - r0 + 1, c1 - c0 + 1), bool)
    for r, c in cells.tolist():
        mask[max(r - lo - r0, 0):max(r + hi + 1 - r0, 0), max(c - lo - c0, 0):max(c + hi + 1 - c0, 0)] = True
    before = draft.cells[r0:r1 + 1, c0:c1 + 1].copy()
    after = before.copy()
    paint_values(after, mask, kind)
    return Patch(r0, c0, before, after)


def plan_rect(draft: CityDraft, corner_a: tuple[int, int], corner_b: tuple[int, int], kind: str) -> Patch | None:
    """Fill the rectangle between two corner cells (inclusive) with ``kind`` (``traffic``: along its long side)."""
    (ra, ca), (rb, cb) = corner_a, corner_b
    if kind == "traffic":
        kind = "traffic_v" if abs(rb - ra) > abs(cb - ca) else "traffic_h"
    check_kind(kind)
    r0, c0, r1, c1 = _clip_rect(draft.shape, min(ra, rb), min(ca, cb), max(ra, rb), max(ca, cb))
    if r0 > r1 or c0 > c1:
        return None
    before = draft.cells[r0:r1 + 1, c0:c1 + 1].copy()
    after = before.copy()
    paint_values(after, np.ones(after.shape, bool), kind)
    return Patch(r0, c0, before, after)


def pick(draft: CityDraft, row: int, col: int) -> str | None:
    """The eyedropper: the paint kind of a cell (None off the map)."""
    h, w = draft.shape
    if not (0 <= row < h and 0 <= col < w):
        return None
    return kind_of(draft.cells[row, col])


def block_rect(draft: CityDraft, row: int, col: int) -> tuple[int, int, int, int] | None:
    """The city block under a cell — the bounding box of the traffic-free area around it (its sidewalks, walkways
    and buildings) — as (top, left, bottom, right); None on a traffic street or off the map."""
    h, w = draft.shape
    if not (0 <= row < h and 0 <= col < w):
        return None
    _, th, tv = draft.masks()
    free = ~(th | tv)
    if not free[row, col]:
        return None
    labels, _ = ndimage.label(free)
    sl = ndimage.find_objects((labels == labels[row, col]).astype(np.int32))[0]
    return (sl[0].start, sl[1].start, sl[0].stop - 1, sl[1].stop - 1)


def plan_move(draft: CityDraft, rect: tuple[int, int, int, int], dr: int, dc: int) -> Patch | None:
    """Move the cells of ``rect`` by (dr, dc): they replace what is at the destination, the place they leave is
    emptied (parts moved off the map are dropped). None when nothing moves."""
    if dr == 0 and dc == 0:
        return None
    top, left, bottom, right = _clip_rect(draft.shape, *rect)
    if top > bottom or left > right:
        return None
    h, w = draft.shape
    r0, c0 = min(top, top + dr), min(left, left + dc)
    r1, c1 = max(bottom, bottom + dr), max(right, right + dc)
    r0, c0, r1, c1 = _clip_rect(draft.shape, r0, c0, r1, c1)
    before = draft.cells[r0:r1 + 1, c0:c1 + 1].copy()
    after = before.copy()
    content = draft.cells[top:bottom + 1, left:right + 1].copy()
    after[top - r0:bottom - r0 + 1, left - c0:right - c0 + 1] = 0
    dt, dl = top + dr, left + dc                      # destination top-left (may lie partly off the map)
    sr0, sc0 = max(0, -dt), max(0, -dl)
    sr1 = min(content.shape[0], h - dt)
    sc1 = min(content.shape[1], w - dl)
    if sr0 < sr1 and sc0 < sc1:
        after[dt + sr0 - r0:dt + sr1 - r0, dl + sc0 - c0:dl + sc1 - c0] = content[sr0:sr1, sc0:sc1]
    return Patch(r0, c0, before, after)


def resized(draft: CityDraft, height: int, width: int, anchor: tuple[int, int] = (0, 0)) -> CityDraft:
    """A draft of ``height`` × ``width`` with the old cells placed at ``anchor`` (row, col offset; negative values
    crop from the top/left); new cells are empty."""
    if height < 1 or width < 1:
        raise ValueError(f"a city needs at least 1x1 cells, got {height}x{width}")
    out = np.zeros((int(height), int(width)), np.int64)
    h, w = draft.shape
    ar, ac = int(anchor[0]), int(anchor[1])
    sr0, sc0 = max(0, -ar), max(0, -ac)
    sr1, sc1 = min(h, height - ar), min(w, width - ac)
    if sr0 < sr1 and sc0 < sc1:
        out[ar + sr0:ar + sr1, ac + sc0:ac + sc1] = draft.cells[sr0:sr1, sc0:sc1]
    return CityDraft(out, draft.name, None)
