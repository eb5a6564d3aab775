"""The packed cells of a city draft and the specification they stand for (no Qt).

Why its own module: :mod:`core.map.edit` (the tools) and :mod:`core.map.derived` (the derived layers) both read the
packing and cut the cells into the rectangles a map file lists; keeping that here leaves each of them one job.

One int64 per cell: bit 0 walking street, bit 1 horizontal traffic, bit 2 vertical traffic (both: an
intersection; walking and traffic: a zebra crossing), bits 3-5 building type code, 6-21 block id, 22-37 building
height + 1 (0: none). The cut (:func:`traffic_streets`, :func:`walking_streets`, :func:`building_spec`) finds row
runs, merges identical runs of consecutive rows into rectangles (vectorised) and keeps or assigns block ids per city
block (:func:`assign_blocks`).
"""
from __future__ import annotations

import numpy as np

from core.base.codes import BUILDING_CODES, BUILDING_NAMES
from core.map.spec import Building, Street

# ---- the packed cell ---------------------------------------------------------------------------------------------
WALK = 1
TH = 2
TV = 4
BLD_SHIFT = 3           # 3 bits: building type code (0, 3..7)
BLK_SHIFT = 6           # 16 bits: block id
HGT_SHIFT = 22          # 16 bits: building height + 1 (0: none)
_HGT_MASK = 0xFFFF << HGT_SHIFT

#: What a paint tool can put on a cell (building types by their names).
PAINT_KINDS: tuple[str, ...] = ("walking", "traffic_h", "traffic_v", "crossing") + tuple(BUILDING_CODES) + ("empty",)
KINDS = PAINT_KINDS + ("traffic",)     # "traffic": the orientation follows the stroke (plan_stroke)


def check_kind(kind: str) -> None:
    if kind not in PAINT_KINDS:
        raise ValueError(f"unknown paint kind {kind!r} (expected one of {', '.join(PAINT_KINDS)})")


def paint_values(sub: np.ndarray, mask: np.ndarray, kind: str) -> None:
    """Put ``kind`` on the cells of ``sub`` (a packed block, changed in place) where ``mask`` is True.

    Streets replace buildings and buildings replace streets (a cell is one or the other); traffic keeps the other
    orientation's traffic (painting across a street makes an intersection) but drops a zebra marking; a crossing
    only marks cells that already carry traffic.
    """
    check_kind(kind)
    v = sub[mask]
    if kind == "empty":
        v[:] = 0
    elif kind == "walking":
        v[:] = WALK
    elif kind == "traffic_h":
        v[:] = (v & TV) | TH
    elif kind == "traffic_v":
        v[:] = (v & TH) | TV
    elif kind == "crossing":
        v[:] = np.where(v & (TH | TV), v | WALK, v)
    else:
        v[:] = BUILDING_CODES[kind] << BLD_SHIFT
    sub[mask] = v


def kind_of(value: int) -> str:
    """The paint kind that best describes one packed cell (the eyedropper's answer)."""
    v = int(value)
    bld = (v >> BLD_SHIFT) & 7
    if bld:
        return BUILDING_NAMES[bld]
    if v & (TH | TV):
        if v & WALK:
            return "crossing"
        return "traffic_v" if (v & TV) and not (v & TH) else "traffic_h"
    return "walking" if v & WALK else "empty"


def building_spec(cells: np.ndarray, regions: np.ndarray) -> tuple[tuple[Building, ...], np.ndarray, np.ndarray]:
    """Buildings of the packed ``cells`` (rectangles of one type, block and height) with the building-type (int8)
    and block-id (int16) layers; ``regions`` labels the traffic-free city blocks (block ids are kept or assigned
    per block, :func:`assign_blocks`)."""
    bld = ((cells >> BLD_SHIFT) & 7).astype(np.int8)
    is_b = bld > 0
    blk = np.zeros(cells.shape, np.int16)
    if not is_b.any():
        return (), bld, blk
    ids = assign_blocks(((cells >> BLK_SHIFT) & 0xFFFF).astype(np.int64), regions, is_b)
    blk[is_b] = ids[is_b]
    key = np.where(is_b, (bld.astype(np.int64) << BLD_SHIFT) | (ids << BLK_SHIFT) | (cells & _HGT_MASK), 0)
    out = []
    for (r0, c0, rows, cols), value in rectangles(key):
        hgt = (value >> HGT_SHIFT) & 0xFFFF
        out.append(Building(BUILDING_NAMES[int((value >> BLD_SHIFT) & 7)], r0, c0, rows, cols,
                            int((value >> BLK_SHIFT) & 0xFFFF), None if hgt == 0 else int(hgt - 1)))
    return tuple(out), bld, blk


def runs_2d(mask_or_key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Runs of equal non-zero values along each row: (row, start, stop, value) arrays."""
    a = mask_or_key if mask_or_key.dtype != bool else mask_or_key.view(np.int8)   # masks stay one byte a cell
    h, w = a.shape
    pad = np.zeros((h, w + 2), a.dtype)
    pad[:, 1:-1] = a
    change = pad[:, 1:] != pad[:, :-1]                 # [h, w+1]: a run starts/ends between k-1 and k
    rows, cols = np.nonzero(change)
    # consecutive boundaries in one row delimit a run of one value (0-valued runs are dropped)
    same_row = rows[:-1] == rows[1:]
    r, s, e = rows[:-1][same_row], cols[:-1][same_row], cols[1:][same_row]
    vals = a[r, s].astype(np.int64) if len(r) else np.zeros(0, np.int64)
    keep = vals != 0
    return r[keep], s[keep], e[keep], vals[keep]


def rectangles(a: np.ndarray) -> list[tuple[tuple[int, int, int, int], int]]:
    """Cover the non-zero cells of ``a`` with rectangles of one value: each row run merged with the identical runs
    (same columns, same value) of the rows right below it. ((row, col, rows, cols), value), in raster order of their
    top-left cells. Vectorised: runs are sorted by (start, stop, value, row) and a rectangle ends where that key
    changes or a row is skipped."""
    r, s, e, v = runs_2d(a)
    if not len(r):
        return []
    order = np.lexsort((r, v, e, s))
    r, s, e, v = r[order], s[order], e[order], v[order]
    new = np.ones(len(r), bool)
    new[1:] = (s[1:] != s[:-1]) | (e[1:] != e[:-1]) | (v[1:] != v[:-1]) | (r[1:] != r[:-1] + 1)
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, len(r)))
    top, left, right, val = r[starts], s[starts], e[starts], v[starts]
    back = np.lexsort((left, top))
    return [((int(top[i]), int(left[i]), int(counts[i]), int(right[i] - left[i])), int(val[i])) for i in back]


def traffic_streets(mask: np.ndarray, orientation: str) -> list[Street]:
    """Traffic streets of one orientation: across-runs (the street's width) merged along the street."""
    if orientation == "horizontal":   # a horizontal street: per column a vertical run = its width
        rects = rectangles(mask.T)
        return [Street("traffic", "horizontal", c, r, rows, cols) for (r, c, rows, cols), _ in rects]
    rects = rectangles(mask)
    return [Street("traffic", "vertical", r, c, rows, cols) for (r, c, rows, cols), _ in rects]


def walking_streets(mask: np.ndarray) -> list[Street]:
    out = []
    for (r, c, rows, cols), _ in rectangles(mask):
        if rows > cols:
            out.append(Street("walking", "vertical", r, c, rows, cols))
        else:
            out.append(Street("walking", "horizontal", r, c, cols, rows))
    return out


def assign_blocks(blk: np.ndarray, regions: np.ndarray, is_b: np.ndarray) -> np.ndarray:
    """Block ids per building cell: an id shared by two city blocks stays with the block holding most of its cells
    (the other gets a new id); unnumbered (painted) buildings take their block's id, or a new one."""
    blk = blk.copy()
    reg = regions[is_b]
    ids = blk[is_b]
    next_id = int(ids.max(initial=0)) + 1
    numbered = ids > 0
    span = int(regions.max(initial=0)) + 1
    codes, counts = np.unique(ids[numbered] * span + reg[numbered], return_counts=True)
    pairs = np.stack([codes // span, codes % span])
    remap: dict[tuple[int, int], int] = {}
    best: dict[int, tuple[int, int]] = {}
    for (i, r), n in zip(pairs.T.tolist(), counts.tolist()):
        if i not in best or n > best[i][1]:
            best[i] = (r, n)
    for i, r in pairs.T.tolist():
        if best[i][0] != r:
            remap[(i, r)] = next_id
            next_id += 1
    if remap:
        for (i, r), new in remap.items():
            blk[is_b & (blk == i) & (regions == r)] = new
    region_id: dict[int, int] = {}
    for (i, r) in pairs.T.tolist():
        new = remap.get((i, r), i)
        region_id[r] = min(region_id.get(r, new), new)
    missing = is_b & (blk == 0)
    if missing.any():
        for r in np.unique(regions[missing]).tolist():
            if r not in region_id:
                region_id[r] = next_id
                next_id += 1
            blk[missing & (regions == r)] = region_id[r]
    return blk
