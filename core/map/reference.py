"""Import the reference simulator's map file (``config/maps/square_5x5.yaml``;
docs/reference.md#map-files).

The file is read with the safe located loader (the reference uses PyYAML's unsafe loader). Differences from
the reference loader, all documented in docs/formats.md ("Importing reference maps"):

* ``grid_size`` is ignored, as the reference does; the map size is the extent of the streets (the reference
  always uses its constant 241×241, which is that extent for the shipped file).
* A street width of 0 means the reference default (5 walking, 11 traffic).
* A ``height`` given as a 2-D list (a height map, unused by the simulation) is dropped.
* Block ids are kept; the map name is the file's stem.
"""
from __future__ import annotations

from pathlib import Path

from core.base.codes import BUILDING_CODES
from core.base.errors import ConfigError
from core.io.yamlio import LocatedDict, LocatedList, expect, is_mapping, load_yaml, loads_yaml, reject_unknown_keys
from core.map.io import int_pair
from core.map.layers import derive_layers
from core.map.model import CityMap
from core.map.spec import Building, Street, StreetKind
from core.map.validate import Locator, check_city, check_spec

__all__ = ["import_reference_map", "reference_map_from_text"]

_KINDS: dict[str, StreetKind] = {"Traffic Street": "traffic", "Walking Street": "walking"}
_DEFAULT_WIDTH = {"traffic": 11, "walking": 5}


def _items(data: LocatedDict, key: str) -> LocatedList:
    items = expect(data, key, list, what="the reference map")
    for i, item in enumerate(items):
        if not is_mapping(item):
            raise items.error(f"{key} entry #{i + 1} must be a mapping", i)
    return items


def reference_map_from_data(data, file: str | None, name: str) -> CityMap:
    """Convert parsed reference map data to a validated :class:`CityMap`."""
    if not is_mapping(data):
        raise ConfigError("a reference map file must be a mapping with 'streets' and 'buildings'", file, 1)
    reject_unknown_keys(data, ("buildings", "streets", "grid_size"), "the reference map")
    streets_data = _items(data, "streets")
    buildings_data = _items(data, "buildings") if "buildings" in data else LocatedList()
    streets: list[Street] = []
    for i, item in enumerate(streets_data):
        what = f"street #{i + 1}"
        reject_unknown_keys(item, ("type", "orientation", "position", "length", "width", "directions"), what)
        stype = expect(item, "type", str, what=what)
        if stype not in _KINDS:
            raise item.error(f"street type must be 'Traffic Street' or 'Walking Street', got {stype!r}", "type")
        kind = _KINDS[stype]
        orientation = expect(item, "orientation", str, what=what)
        if orientation not in ("horizontal", "vertical"):
            raise item.error(f"orientation must be 'horizontal' or 'vertical', got {orientation!r}", "orientation")
        row, col = int_pair(item, "position", what)
        length = expect(item, "length", int, what=what)
        width = expect(item, "width", int, required=False, default=0) or _DEFAULT_WIDTH[kind]
        directions = expect(item, "directions", int, required=False, default=2)
        streets.append(Street(kind, orientation, row, col, length, width, directions))
    buildings: list[Building] = []
    for i, item in enumerate(buildings_data):
        what = f"building #{i + 1}"
        reject_unknown_keys(item, ("block", "height", "position", "size", "type"), what)
        btype = expect(item, "type", str, what=what)
        if btype not in BUILDING_CODES:
            raise item.error(f"unknown building type {btype!r} (expected one of {', '.join(BUILDING_CODES)})",
                             "type")
        block = expect(item, "block", int, what=what)
        row, col = int_pair(item, "position", what)
        rows, cols = int_pair(item, "size", what)
        height = expect(item, "height", (int, list, type(None)), required=False)
        buildings.append(Building(btype, row, col, rows, cols, block, height if isinstance(height, int) else None))
    if "grid_size" in data:  # ignored like the reference; only its shape is checked
        int_pair(data, "grid_size", "the reference map")
    h = max((max(s.footprint()[0].stop, 0) for s in streets), default=0)
    w = max((max(s.footprint()[1].stop, 0) for s in streets), default=0)
    loc = Locator(file=file, root_line=getattr(data, "line", None), streets_line=data.line_of("streets"),
                  street_lines=[streets_data.item_line(i) for i in range(len(streets_data))],
                  building_lines=[buildings_data.item_line(i) for i in range(len(buildings_data))])
    if h < 1 or w < 1:
        raise loc.root("the reference map has no streets, so its size is unknown", loc.streets_line)
    check_spec(h, w, streets, buildings, loc)
    city = derive_layers(name, h, w, streets, buildings, source=file)
    check_city(city, loc)
    return city


def reference_map_from_text(text: str, file: str | Path | None = None) -> CityMap:
    fname = str(file) if file is not None else None
    return reference_map_from_data(loads_yaml(text, fname), fname, Path(fname).stem if fname else "reference")


def import_reference_map(path: str | Path) -> CityMap:
    """Read a reference map YAML (e.g. ``square_5x5.yaml``) into a validated :class:`CityMap`."""
    p = Path(path)
    return reference_map_from_data(load_yaml(p), str(p), p.stem)
