"""Shared, cached test inputs for the map/agent tests (the reference city is imported once per session)."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from tests.support.paths import ROOT

REFERENCE = ROOT / "tests" / "data" / "reference" / "logicity-configs"
REFERENCE_MAP = REFERENCE / "master" / "config" / "maps" / "square_5x5.yaml"
ROAD_GRAPH = REFERENCE / "master" / "logicity" / "core" / "road_graph.txt"
DEFAULT_MAP = ROOT / "configs" / "maps" / "default.yaml"


@lru_cache(maxsize=None)
def reference_city():
    from core.map.reference import import_reference_map

    return import_reference_map(REFERENCE_MAP)


@lru_cache(maxsize=None)
def default_city():
    from core.map.io import load_map

    return load_map(DEFAULT_MAP)


@lru_cache(maxsize=None)
def generated(seed: int, blocks=(5, 5), block_size=25, traffic_width=11, walking_width=5):
    from core.map.generate import generate_city

    return generate_city(seed, blocks, block_size, traffic_width, walking_width)


def turning_points(cells: np.ndarray) -> list[tuple[int, int]]:
    """First cell, every cell where the direction changes, last cell."""
    pts = [tuple(int(v) for v in cells[0])]
    for i in range(1, len(cells) - 1):
        if ((cells[i] - cells[i - 1]) != (cells[i + 1] - cells[i])).any():
            pts.append(tuple(int(v) for v in cells[i]))
    pts.append(tuple(int(v) for v in cells[-1]))
    return pts


def histogram(arr: np.ndarray) -> dict:
    values, counts = np.unique(arr, return_counts=True)
    return {float(v) if arr.dtype.kind == "f" else int(v): int(n) for v, n in zip(values, counts)}
