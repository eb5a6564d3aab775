"""Shared numeric codes: semantics of map cells, agent kinds, headings and actions.

Values follow the reference simulator (docs/reference.md#street-and-building-codes and
docs/reference.md#actions-and-speeds) so imported data and exported arrays mean the same thing in both tools.
"""
from __future__ import annotations

from enum import IntEnum

import numpy as np

# ---- street layer codes (float; docs/reference.md#street-and-building-codes) ----------------------------
STREET_NONE = 0.0
STREET_WALKING = 1.0
STREET_TRAFFIC = 2.0
STREET_OVERLAP = -1.0  # walking x traffic = zebra crossing
STREET_MIDLANE = 2.5

# ---- building layer codes (int) ---------------------------------------------------------------------------
BUILDING_NONE = 0
HOUSE = 3
GAS_STATION = 4
OFFICE = 5
GARAGE = 6
STORE = 7

BUILDING_CODES: dict[str, int] = {
    "House": HOUSE, "Gas Station": GAS_STATION, "Office": OFFICE, "Garage": GARAGE, "Store": STORE,
}
BUILDING_NAMES: dict[int, str] = {v: k for k, v in BUILDING_CODES.items()}

#: Agent type codes of the reference's agent layers (docs/reference.md#agent-layers-and-occupancy).
PEDESTRIAN_CODE = 8
CAR_CODE = 9

#: The static semantics shown in legends / rendered as tiles: the paper's 8 = 5 building types + 3 street kinds
#: (docs/reference.md#street-and-building-codes).
STATIC_SEMANTICS: tuple[str, ...] = (
    "Walking Street", "Traffic Street", "Crossing", "House", "Gas Station", "Office", "Garage", "Store",
)


class Kind(IntEnum):
    """Agent kind. Decides planner, action space and the type predicates."""

    PEDESTRIAN = 0
    CAR = 1

    @property
    def label(self) -> str:
        return "Pedestrian" if self is Kind.PEDESTRIAN else "Car"

    @classmethod
    def parse(cls, text: str) -> "Kind":
        t = text.strip().lower()
        if t in ("pedestrian", "ped"):
            return cls.PEDESTRIAN
        if t in ("car", "private_car", "vehicle", "bus"):
            return cls.CAR
        raise ValueError(f"unknown agent type {text!r} (expected Pedestrian or Car)")


class Heading(IntEnum):
    """Last move direction of an agent. ``NONE`` until the first non-Stop move and again at every new trip
    (docs/reference.md#field-of-view)."""

    NONE = -1
    LEFT = 0
    RIGHT = 1
    UP = 2
    DOWN = 3


#: (d_row, d_col) unit vector per heading index 0..3 (LEFT, RIGHT, UP, DOWN).
HEADING_VECTORS = np.array([[0, -1], [0, 1], [-1, 0], [1, 0]], dtype=np.int32)
HEADING_NAMES: dict[int, str] = {-1: "none", 0: "Left", 1: "Right", 2: "Up", 3: "Down"}


class Action(IntEnum):
    """High-level action, in the order of the SPF action space and VAP labels: 0 Slow, 1 Normal, 2 Fast, 3 Stop
    (docs/reference.md#spf-step-and-termination, docs/reference.md#vap-samples)."""

    SLOW = 0
    NORMAL = 1
    FAST = 2
    STOP = 3

    @property
    def label(self) -> str:
        return self.name.capitalize()


ACTION_NAMES: tuple[str, ...] = ("Slow", "Normal", "Fast", "Stop")
ACTION_INDEX: dict[str, int] = {n: i for i, n in enumerate(ACTION_NAMES)}

#: Cells moved per step by cars for SLOW / NORMAL / FAST; pedestrians always move 1
#: (docs/reference.md#actions-and-speeds).
CAR_SPEED = {Action.SLOW: 1, Action.NORMAL: 2, Action.FAST: 3}
