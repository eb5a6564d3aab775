"""Reading and writing city maps in LogiCity Studio's own YAML format (docs/formats.md, "City map").

Why our own format: the reference's map file needs an unsafe YAML loader, ignores its ``grid_size`` and carries
fields with no effect. Ours is read with the safe located loader, states its size, writes one street/building
per line (so an error message's line number points at exactly one item), and may record how a generated city
was made. Loading validates everything (:mod:`core.map.validate`) and derives the layers.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from core.base.codes import BUILDING_CODES
from core.base.errors import ConfigError
from core.io.fileio import atomic_write_text
from core.io.yamlio import (
    LocatedDict,
    LocatedList,
    check_format_header,
    expect,
    is_mapping,
    load_yaml,
    loads_yaml,
    reject_unknown_keys,
    yaml_type_name,
)
from core.map.layers import derive_layers
from core.map.model import CityMap
from core.map.spec import Building, Street
from core.map.validate import Locator, check_city, check_spec

__all__ = ["FORMAT_VERSION", "load_map", "loads_map", "save_map", "dumps_map", "map_from_data"]

FORMAT_VERSION = 1
_TOP_KEYS = ("version", "name", "size", "generator", "streets", "buildings")
_STREET_KEYS = ("kind", "orientation", "at", "length", "width", "directions")
_BUILDING_KEYS = ("type", "block", "at", "size", "height")


def int_pair(d: LocatedDict, key: str, what: str, *, minimum: int | None = None) -> tuple[int, int]:
    """``d[key]`` as a list of two integers, with a located error otherwise."""
    value = expect(d, key, list, what=what)
    if len(value) != 2 or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise d.error(f"{key!r} must be a list of two integers [row, col], got {value!r}", key)
    if minimum is not None and min(value) < minimum:
        raise d.error(f"{key!r} values must be at least {minimum}, got {value!r}", key)
    return int(value[0]), int(value[1])


def _mapping_item(items: LocatedList, i: int, what: str) -> LocatedDict:
    item = items[i]
    if not is_mapping(item):
        raise items.error(f"{what} #{i + 1} must be a mapping, got {yaml_type_name(item)}", i)
    return item


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


def map_from_data(data: Any, file: str | None = None, *, default_name: str = "city") -> CityMap:
    """Build and validate a city from parsed YAML data in our format."""
    if not is_mapping(data):
        raise ConfigError("a city map file must be a mapping with 'size' and 'streets'", file, 1)
    check_format_header(data, _TOP_KEYS, "the city map", "map", FORMAT_VERSION)
    name = expect(data, "name", str, required=False, default=default_name)
    height, width = int_pair(data, "size", "the city map", minimum=1)
    generator = expect(data, "generator", dict, required=False)
    streets_data = expect(data, "streets", list, what="the city map")
    buildings_data = expect(data, "buildings", list, required=False, default=LocatedList())
    streets: list[Street] = []
    for i in range(len(streets_data)):
        item = _mapping_item(streets_data, i, "street")
        reject_unknown_keys(item, _STREET_KEYS, f"street #{i + 1}")
        kind = expect(item, "kind", str, what=f"street #{i + 1}")
        if kind not in ("traffic", "walking"):
            raise item.error(f"street kind must be 'traffic' or 'walking', got {kind!r}", "kind")
        orientation = expect(item, "orientation", str, what=f"street #{i + 1}")
        if orientation not in ("horizontal", "vertical"):
            raise item.error(f"orientation must be 'horizontal' or 'vertical', got {orientation!r}", "orientation")
        row, col = int_pair(item, "at", f"street #{i + 1}")
        length = expect(item, "length", int, what=f"street #{i + 1}")
        swidth = expect(item, "width", int, what=f"street #{i + 1}")
        directions = expect(item, "directions", int, required=False, default=2)
        if directions not in (1, 2):
            raise item.error(f"directions must be 1 or 2, got {directions}", "directions")
        streets.append(Street(kind, orientation, row, col, length, swidth, directions))
    buildings: list[Building] = []
    for i in range(len(buildings_data)):
        item = _mapping_item(buildings_data, i, "building")
        reject_unknown_keys(item, _BUILDING_KEYS, f"building #{i + 1}")
        btype = expect(item, "type", str, what=f"building #{i + 1}")
        block = expect(item, "block", int, what=f"building #{i + 1}")
        row, col = int_pair(item, "at", f"building #{i + 1}")
        rows, cols = int_pair(item, "size", f"building #{i + 1}")
        height_ = expect(item, "height", (int, type(None)), required=False)
        if height_ is not None and height_ < 0:
            raise item.error(f"height must not be negative, got {height_}", "height")
        buildings.append(Building(btype, row, col, rows, cols, block, height_))
    loc = Locator(file=file, root_line=getattr(data, "line", None), streets_line=data.line_of("streets"),
                  street_lines=[streets_data.item_line(i) for i in range(len(streets_data))],
                  building_lines=[buildings_data.item_line(i) for i in range(len(buildings_data))])
    for i, b in enumerate(buildings):  # type errors first, with the exact key line
        if b.kind not in BUILDING_CODES:
            raise buildings_data[i].error(f"unknown building type {b.kind!r} (expected one of "
                                          f"{', '.join(BUILDING_CODES)})", "type")
    check_spec(height, width, streets, buildings, loc)
    city = derive_layers(name, height, width, streets, buildings, source=file,
                         generator=_plain(generator) if generator else None)
    check_city(city, loc)
    return city


def loads_map(text: str, file: str | Path | None = None) -> CityMap:
    """Parse, validate and derive a city from YAML text (``file`` is used in error messages)."""
    fname = str(file) if file is not None else None
    stem = Path(fname).stem if fname else "city"
    return map_from_data(loads_yaml(text, fname), fname, default_name=stem)


def load_map(path: str | Path) -> CityMap:
    """Read a city map file in our format."""
    p = Path(path)
    return map_from_data(load_yaml(p), str(p), default_name=p.stem)


def _flow(item: dict) -> str:
    return yaml.safe_dump(item, default_flow_style=True, sort_keys=False, width=10_000).strip()


def dumps_map(city: CityMap, header: str | None = None) -> str:
    """Our YAML text for ``city`` (one street / building per line)."""
    lines = [f"# {line}" if line else "#" for line in (header or "LogiCity Studio city map "
             "(format: docs/formats.md, section \"City map\")").splitlines()]
    lines.append(f"version: {FORMAT_VERSION}")
    lines.append(yaml.safe_dump({"name": city.name}, sort_keys=False).strip())
    lines.append(f"size: [{city.height}, {city.width}]")
    if city.generator:
        lines.append(yaml.safe_dump({"generator": _plain(city.generator)}, sort_keys=False,
                                    default_flow_style=None, width=10_000).rstrip())
    lines.append("streets:")
    for s in city.streets:
        item: dict[str, Any] = {"kind": s.kind, "orientation": s.orientation, "at": [s.row, s.col],
                                "length": s.length, "width": s.width}
        if s.directions != 2:
            item["directions"] = s.directions
        lines.append(f"- {_flow(item)}")
    if city.buildings:
        lines.append("buildings:")
        for b in city.buildings:
            item = {"type": b.kind, "block": b.block, "at": [b.row, b.col], "size": [b.rows, b.cols]}
            if b.height is not None:
                item["height"] = b.height
            lines.append(f"- {_flow(item)}")
    else:
        lines.append("buildings: []")
    return "\n".join(lines) + "\n"


def save_map(city: CityMap, path: str | Path, header: str | None = None) -> None:
    """Write ``city`` to ``path`` in our format (atomically: an interrupted save leaves the old file whole)."""
    atomic_write_text(path, dumps_map(city, header))
