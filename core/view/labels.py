"""Agent labels on the map, decluttered (no Qt): which agents get a label, and what it says, at a given zoom.

Why: with 200 agents a label per agent is an unreadable heap at the fitted zoom. Labels appear only once a cell
is at least :data:`LABEL_MIN_PPC` screen pixels wide, say a short id (``C3``) until cells reach
:data:`FULL_NAME_PPC` pixels and the full name (``Car_3``) after that, and a label that would overlap one already
placed is skipped. Placing goes by priority: the selected agent, then the agents marked for it (the witness of its
explanation), then agent order, so the labels that matter are never the ones dropped.
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

import numpy as np

#: Below this many screen pixels per cell no labels are drawn (the whole default city in a window is ~3 px/cell).
LABEL_MIN_PPC = 2.5
#: From this many pixels per cell labels give the full agent name instead of the short id.
FULL_NAME_PPC = 7.0


def short_name(name: str) -> str:
    """``Car_3`` -> ``C3``, ``Pedestrian_12`` -> ``P12``; a name without a trailing number keeps 6 characters."""
    m = re.fullmatch(r"([A-Za-z])[A-Za-z]*[_ -]?(\d+)", name)
    return f"{m.group(1).upper()}{m.group(2)}" if m else name[:6]


def label_text(name: str, ppc: float) -> str:
    return name if ppc >= FULL_NAME_PPC else short_name(name)


def priority_order(n: int, first: Iterable[int | None] = ()) -> list[int]:
    """Agent indices 0..n-1 with the agents of ``first`` (None skipped, repeats dropped) in front."""
    head: list[int] = []
    for a in first:
        if a is not None and 0 <= a < n and a not in head:
            head.append(int(a))
    seen = set(head)
    return head + [i for i in range(n) if i not in seen]


def declutter(boxes: np.ndarray, order: Sequence[int]) -> list[int]:
    """Greedy placement: go through ``order`` and keep a box (x0, y0, x1, y1 in pixels, one row per agent) unless
    it overlaps a box already kept. Returns the kept indices in placing order. A grid of buckets the size of the
    largest box keeps it near-linear (a few hundred labels per frame)."""
    arr = np.asarray(boxes, float).reshape(-1, 4)
    if not len(order):
        return []
    cell = max(float(np.max(arr[:, 2] - arr[:, 0])), float(np.max(arr[:, 3] - arr[:, 1])), 1.0)
    rows = arr.tolist()                  # plain floats: numpy scalar access is slow in this loop
    grid: dict[tuple[int, int], list[int]] = {}
    kept: list[int] = []
    for i in order:
        x0, y0, x1, y1 = rows[i]
        cells = [(gx, gy) for gx in range(int(x0 // cell), int(x1 // cell) + 1)
                 for gy in range(int(y0 // cell), int(y1 // cell) + 1)]
        if any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1
               for c in cells for b in (rows[j] for j in grid.get(c, ()))):
            continue
        kept.append(int(i))
        for c in cells:
            grid.setdefault(c, []).append(int(i))
    return kept
