"""Procedural city generation: a grid of rectangular blocks separated by traffic streets with sidewalks.

Layout (documented in docs/formats.md, "Generated cities"): traffic streets of width ``traffic_width`` run
along every border and between blocks; every block is ringed by walking streets (sidewalks) of
``walking_width`` that run the full length between the border streets; inside a block, short walking streets
split it into building lots (about ``lot_size`` cells each, so 2×2 lots for the reference's 25-cell blocks
and more for larger blocks); each lot holds one building whose type is drawn from ``building_mix``.
With the defaults and ``blocks=(5, 5)`` the street and lot geometry — and the order of the streets and
buildings in the map — are exactly the reference map's; only building types and heights differ (the
reference drew them with numpy's legacy global seed). All randomness comes from
``np.random.default_rng(seed)``.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from core.base.codes import BUILDING_CODES
from core.map.layers import derive_layers
from core.map.model import CityMap
from core.map.spec import Building, Street
from core.map.validate import MAX_BLOCK_ID, MAX_MAP_SIDE, MIN_TRAFFIC_WIDTH, validate_city

__all__ = ["generate_city", "REFERENCE_MIX", "lot_sizes"]

#: Building type probabilities of the reference's ``build_city.py``.
REFERENCE_MIX: dict[str, float] = {"House": 0.2, "Office": 0.2, "Gas Station": 0.05, "Garage": 0.15, "Store": 0.4}

_PED_TYPES = ("House", "Office")
_CAR_TYPES = ("Gas Station", "Garage", "Store")


def lot_sizes(extent: int, walking_width: int, lot_size: int) -> list[int]:
    """Split a block side of ``extent`` cells into lots separated by walkways of ``walking_width``.

    The number of lots is ``(extent + ww) // (lot_size + ww)`` (at least 1); the remaining cells are shared as
    evenly as possible, larger lots first. 25 cells, ww 5, lot 10 → [10, 10].
    """
    n = max(1, (extent + walking_width) // (lot_size + walking_width))
    total = extent - (n - 1) * walking_width
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


def _pair(value: int | tuple[int, int], what: str) -> tuple[int, int]:
    if isinstance(value, (int, np.integer)):
        return int(value), int(value)
    a, b = value
    return int(a), int(b)


def generate_city(seed: int, blocks: tuple[int, int] = (5, 5), block_size: int | tuple[int, int] = 25,
                  traffic_width: int = 11, walking_width: int = 5,
                  building_mix: Mapping[str, float] | None = None, name: str | None = None,
                  lot_size: int = 10) -> CityMap:
    """A valid city of ``blocks = (rows, cols)`` blocks of ``block_size`` cells, reproducible from ``seed``.

    Raises ``ValueError`` for impossible parameters. The result passes :func:`core.map.validate.validate_city`
    (checked before returning) and records its parameters in ``CityMap.generator``.
    """
    n_rows, n_cols = _pair(blocks, "blocks")
    bh, bw = _pair(block_size, "block_size")
    tw, ww = int(traffic_width), int(walking_width)
    if n_rows < 1 or n_cols < 1:
        raise ValueError(f"blocks must be at least (1, 1), got {blocks}")
    if bh < 2 or bw < 2:
        raise ValueError(f"block_size must be at least 2 cells, got {block_size}")
    if tw < MIN_TRAFFIC_WIDTH or tw % 2 == 0:
        raise ValueError(f"traffic_width must be odd and at least {MIN_TRAFFIC_WIDTH}, got {tw}")
    if ww < 1:
        raise ValueError(f"walking_width must be at least 1, got {ww}")
    if lot_size < 1:
        raise ValueError(f"lot_size must be at least 1, got {lot_size}")
    mix = dict(REFERENCE_MIX if building_mix is None else building_mix)
    unknown = [k for k in mix if k not in BUILDING_CODES]
    if unknown:
        raise ValueError(f"unknown building types in building_mix: {unknown}")
    probs = np.asarray([float(mix.get(k, 0.0)) for k in BUILDING_CODES], dtype=float)
    if (probs < 0).any() or probs.sum() <= 0:
        raise ValueError("building_mix needs non-negative probabilities with a positive sum")
    probs = probs / probs.sum()
    types = list(BUILDING_CODES)
    rng = np.random.default_rng(seed)

    pitch_r, pitch_c = tw + 2 * ww + bh, tw + 2 * ww + bw
    height, width = tw + n_rows * pitch_r, tw + n_cols * pitch_c
    if height > MAX_MAP_SIDE or width > MAX_MAP_SIDE:  # checked before any street or lot is built
        raise ValueError(f"the city would be {height}x{width} cells; at most {MAX_MAP_SIDE} per side")
    if n_rows * n_cols > MAX_BLOCK_ID:
        raise ValueError(f"{n_rows}x{n_cols} blocks is more than the {MAX_BLOCK_ID} block ids a city can hold")
    streets: list[Street] = []
    for k in range(max(n_rows, n_cols) + 1):            # border and inner traffic streets, V then H
        if k <= n_cols:
            streets.append(Street("traffic", "vertical", 0, k * pitch_c, height, tw))
        if k <= n_rows:
            streets.append(Street("traffic", "horizontal", k * pitch_r, 0, width, tw))
    for k in range(max(n_rows, n_cols)):                 # sidewalks on both sides of every block row/column
        if k < n_cols:
            for c in (tw + k * pitch_c, tw + ww + bw + k * pitch_c):
                streets.append(Street("walking", "vertical", tw, c, height - 2 * tw, ww))
        if k < n_rows:
            for r in (tw + k * pitch_r, tw + ww + bh + k * pitch_r):
                streets.append(Street("walking", "horizontal", r, tw, width - 2 * tw, ww))
    lots_r, lots_c = lot_sizes(bh, ww, lot_size), lot_sizes(bw, ww, lot_size)
    off_r = np.concatenate([[0], np.cumsum([s + ww for s in lots_r])])[:-1].astype(int).tolist()
    off_c = np.concatenate([[0], np.cumsum([s + ww for s in lots_c])])[:-1].astype(int).tolist()
    lots: list[tuple[int, int, int, int, int]] = []     # row, col, rows, cols, block id
    for bi in range(n_rows):
        for bj in range(n_cols):
            r0, c0 = tw + ww + bi * pitch_r, tw + ww + bj * pitch_c
            for k in range(1, len(lots_c)):              # walkways between lot columns, then between lot rows
                streets.append(Street("walking", "vertical", r0, c0 + off_c[k] - ww, bh, ww))
            for k in range(1, len(lots_r)):
                streets.append(Street("walking", "horizontal", r0 + off_r[k] - ww, c0, bw, ww))
            block_id = bi * n_cols + bj + 1
            for i, rr in enumerate(lots_r):
                for j, cc in enumerate(lots_c):
                    lots.append((r0 + off_r[i], c0 + off_c[j], rr, cc, block_id))
    kinds = [types[i] for i in rng.choice(len(types), size=len(lots), p=probs)]
    heights = rng.integers(10, 25, size=len(lots)).tolist()
    _ensure_destinations(kinds, types, probs, rng)
    buildings = [Building(kinds[i], r, c, rr, cc, b, int(heights[i])) for i, (r, c, rr, cc, b) in enumerate(lots)]
    params = {"seed": int(seed), "blocks": [n_rows, n_cols], "block_size": [bh, bw], "traffic_width": tw,
              "walking_width": ww, "lot_size": int(lot_size), "building_mix": {k: float(v) for k, v in mix.items()}}
    city = derive_layers(name or f"generated-{n_rows}x{n_cols}-s{seed}", height, width, streets, buildings,
                         generator=params)
    validate_city(city)
    return city


def _ensure_destinations(kinds: list[str], types: list[str], probs: np.ndarray, rng: np.random.Generator) -> None:
    """Make sure pedestrians and cars both have a destination type somewhere, when the mix allows it.

    Without a House/Office no pedestrian can be placed; without a Gas Station/Garage/Store no car can. If the
    random draw produced none of a group, one building (drawn uniformly among those that are not the only
    destination of the other group) gets a type drawn from the mix restricted to that group.
    """
    for group, other in ((_PED_TYPES, _CAR_TYPES), (_CAR_TYPES, _PED_TYPES)):
        weights = np.asarray([probs[types.index(t)] for t in group])
        if weights.sum() <= 0 or any(k in group for k in kinds):
            continue
        n_other = sum(k in other for k in kinds)
        free = [i for i, k in enumerate(kinds) if not (k in other and n_other == 1)]
        if not free:
            return
        i = free[int(rng.integers(len(free)))]
        kinds[i] = group[int(rng.choice(len(group), p=weights / weights.sum()))]
