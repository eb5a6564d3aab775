"""Icon semantics: the names every icon source (default art, icon library, generator, prompt bank) agrees on.

Why a separate module: the renderer, the library on disk, the prompt bank and the CLI all key icons by the
same short slug (``gas_station``, ``ambulance``); keeping the list and the agent → icon rule here means a new
semantic is added in one place.
"""
from __future__ import annotations

from typing import Iterable

from core.base.codes import GARAGE, GAS_STATION, HOUSE, OFFICE, STORE, Kind

#: Street tiles (tiled over the street cells), then the 5 building types: the paper's 8 static semantics
#: (docs/reference.md#street-and-building-codes).
TILE_SEMANTICS: tuple[str, ...] = ("walking_street", "traffic_street", "crossing")
BUILDING_SEMANTICS: tuple[str, ...] = ("house", "gas_station", "office", "garage", "store")
STATIC_SEMANTICS: tuple[str, ...] = TILE_SEMANTICS + BUILDING_SEMANTICS

PEDESTRIAN_SEMANTICS: tuple[str, ...] = ("pedestrian", "old", "young")
CAR_SEMANTICS: tuple[str, ...] = ("car", "ambulance", "bus", "police", "tiro", "reckless")
AGENT_SEMANTICS: tuple[str, ...] = PEDESTRIAN_SEMANTICS + CAR_SEMANTICS

#: Every semantic that has icons, in display order.
SEMANTICS: tuple[str, ...] = STATIC_SEMANTICS + AGENT_SEMANTICS

LABELS: dict[str, str] = {
    "walking_street": "Walking Street", "traffic_street": "Traffic Street", "crossing": "Crossing",
    "house": "House", "gas_station": "Gas Station", "office": "Office", "garage": "Garage", "store": "Store",
    "pedestrian": "Pedestrian", "old": "Old pedestrian", "young": "Young pedestrian", "car": "Car",
    "ambulance": "Ambulance", "bus": "Bus", "police": "Police car", "tiro": "Tiro (learner) car",
    "reckless": "Reckless car",
}

#: Building layer code → semantic.
BUILDING_SEMANTIC_BY_CODE: dict[int, str] = {
    HOUSE: "house", GAS_STATION: "gas_station", OFFICE: "office", GARAGE: "garage", STORE: "store",
}

#: Which concept decides an agent's icon when it has several (the reference's order,
#: docs/reference.md#agent-rendering).
CONCEPT_ICON_PRIORITY: tuple[str, ...] = ("ambulance", "bus", "tiro", "old", "young", "police", "reckless")


def agent_semantic(kind: int, concepts: Iterable[str]) -> str:
    """The icon semantic of an agent: its highest-priority concept that fits its kind, else car/pedestrian."""
    cs = set(concepts)
    allowed = CAR_SEMANTICS if int(kind) == Kind.CAR else PEDESTRIAN_SEMANTICS
    for c in CONCEPT_ICON_PRIORITY:
        if c in cs and c in allowed:
            return c
    return "car" if int(kind) == Kind.CAR else "pedestrian"


def is_car_semantic(semantic: str) -> bool:
    return semantic in CAR_SEMANTICS


def parse_semantic(text: str) -> str:
    """Accept a slug or a label in any case ("Gas Station", "gas-station") and return the slug.

    Raises ``ValueError`` naming the valid choices.
    """
    key = text.strip().lower().replace("-", "_").replace(" ", "_")
    if key in SEMANTICS:
        return key
    for slug, label in LABELS.items():
        if label.lower().replace(" ", "_") == key:
            return slug
    aliases = {"overlap": "crossing", "zebra": "crossing", "sidewalk": "walking_street", "road": "traffic_street",
               "walking": "walking_street", "traffic": "traffic_street", "normal_car": "car",
               "normal_pedestrian": "pedestrian"}
    if key in aliases:
        return aliases[key]
    raise ValueError(f"unknown semantic {text!r}; choose one of: {', '.join(SEMANTICS)}")
