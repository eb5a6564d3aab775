"""Hand-made render inputs: a small city with every kind of street and building, and agent snapshots."""
from __future__ import annotations

import numpy as np

from core.base.codes import GARAGE, HOUSE, STORE, Kind
from core.base.world import AgentTable, WorldSnapshot
from core.map.model import CityMap
from core.map.spec import Building, Street


def small_city() -> CityMap:
    """40×48 cells: a horizontal road (rows 10..20, midline 15), a vertical walking street (cols 4..8) crossing
    it, a vertical road (cols 30..40) and three buildings (one long)."""
    h, w = 40, 48
    street = np.zeros((h, w), np.float32)
    street[10:21, :] = 2.0
    street[:, 30:41] = 2.0
    walk = np.zeros((h, w), bool)
    walk[:, 4:9] = True
    street[walk & (street == 2.0)] = -1.0
    street[walk & (street == 0)] = 1.0
    mid = np.zeros((h, w), bool)
    mid[15, :30] = True
    mid[:10, 35] = True
    street[mid] = 2.5
    building = np.zeros((h, w), np.int8)
    block = np.zeros((h, w), np.int16)
    buildings = (Building("House", 24, 12, 10, 10, 1), Building("Store", 24, 9, 10, 3, 1),
                 Building("Garage", 0, 12, 8, 16, 2))
    for b, code in zip(buildings, (HOUSE, STORE, GARAGE)):
        building[b.footprint()] = code
        block[b.footprint()] = b.block
    streets = (Street("traffic", "horizontal", 10, 0, w, 11), Street("traffic", "vertical", 0, 30, h, 11),
               Street("walking", "vertical", 0, 4, h, 5))
    return CityMap("small", h, w, streets, buildings, street, building, block, mid,
                   np.zeros((3, h, w), np.int16))


def snapshot(specs, step: int = 1) -> WorldSnapshot:
    """specs: list of (kind, concepts, (row, col), heading)."""
    table = AgentTable.build([f"A_{i}" for i in range(len(specs))], [k for k, *_ in specs],
                             [0 if k == Kind.PEDESTRIAN else i + 1 for i, (k, *_) in enumerate(specs)],
                             [c for _, c, *_ in specs])
    pos = np.array([p for *_, p, _ in specs], np.int32).reshape(len(specs), 2)
    hd = np.array([h for *_, h in specs], np.int8)
    return WorldSnapshot(step, table, pos, hd)
