"""Colours of a city draft's cells while a stroke is drawn (the city editor's instant feedback, no Qt).

Why: during a stroke the derived layers (mid lanes, junctions) are settled only when the stroke ends, but the
painted cells must show at once; they are coloured from the draft's packed cells (core/map/edit.py) with the map's
own palette, so the preview and the settled map look the same except for the mid-lane markings.
"""
from __future__ import annotations

import numpy as np

from core.base.codes import BUILDING_NAMES
from core.map.cells import BLD_SHIFT, TH, TV, WALK
from core.view.colouring import SEMANTIC_COLOURS

__all__ = ["draft_rgb", "PAINT_RGB"]

_NAMES = tuple(SEMANTIC_COLOURS)
_LUT = np.array([SEMANTIC_COLOURS[n] for n in _NAMES], np.uint8)

#: the colour a paint kind puts on a cell (tool buttons and the cursor preview use it)
PAINT_RGB: dict[str, tuple[int, int, int]] = {
    "walking": SEMANTIC_COLOURS["Walking Street"], "traffic": SEMANTIC_COLOURS["Traffic Street"],
    "traffic_h": SEMANTIC_COLOURS["Traffic Street"], "traffic_v": SEMANTIC_COLOURS["Traffic Street"],
    "crossing": SEMANTIC_COLOURS["Crossing"], "empty": SEMANTIC_COLOURS["Ground"],
    **{name: SEMANTIC_COLOURS[name] for name in BUILDING_NAMES.values()},
}


def draft_rgb(cells: np.ndarray) -> np.ndarray:
    """uint8 RGB ``[h, w, 3]`` of packed draft cells (no mid lanes: those follow when the stroke is done)."""
    idx = np.zeros(cells.shape, np.uint8)
    walk = (cells & WALK) != 0
    traffic = (cells & (TH | TV)) != 0
    idx[walk] = _NAMES.index("Walking Street")
    idx[traffic] = _NAMES.index("Traffic Street")
    idx[walk & traffic] = _NAMES.index("Crossing")
    bld = (cells >> BLD_SHIFT) & 7
    for code, name in BUILDING_NAMES.items():
        idx[bld == code] = _NAMES.index(name)
    return _LUT[idx]
