"""Scene files: a :class:`~core.sim.scene.Scene` as YAML (docs/scene-api.md, "Scene files").

Why a file: a researcher sends a situation as one small text file, the rule analysis reports a witness or a
deadlock as a scene the studio can load, and a captured state can be kept next to the episode it came from. One
agent per line, so an error names the line of the agent it is about — also for problems found only when the
scene is installed on a city (:func:`core.sim.scene.apply_scene` locates them through ``Scene.origin``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from core.base.codes import HEADING_NAMES, Kind
from core.base.errors import ConfigError
from core.io.fileio import atomic_write_text
from core.io.yamlio import (
    LocatedDict,
    LocatedList,
    check_format_header,
    expect,
    load_yaml,
    loads_yaml,
    reject_unknown_keys,
    yaml_type_name,
)
from core.sim.scene import Scene, SceneAgent, SceneOrigin
from core.sim.scene_check import parse_kind

__all__ = ["FORMAT_VERSION", "scene_to_data", "scene_from_data", "dumps_scene", "loads_scene", "save_scene",
           "load_scene"]

FORMAT_VERSION = 1
_TOP_KEYS = ("version", "agents", "coins", "rng_state")
_AGENT_KEYS = ("type", "id", "concepts", "priority", "position", "goal", "path", "path_index", "heading", "waiting",
               "wait", "goals_reached")
_COIN_KEYS = ("predicate", "a", "b", "outcome")
_TYPES = {"Pedestrian": Kind.PEDESTRIAN, "Car": Kind.CAR}


def scene_to_data(scene: Scene) -> dict[str, Any]:
    """Plain data (JSON/YAML-ready) of a scene; fields at their defaults are left out."""
    agents = []
    for a in scene.agents:
        kind = parse_kind(a.kind)
        item: dict[str, Any] = {"type": kind.label}
        if a.id is not None:
            item["id"] = int(a.id)
        if a.priority is not None:
            item["priority"] = int(a.priority)
        if a.concepts is not None:
            item["concepts"] = list(a.concepts)
        for name in ("position", "goal"):
            if getattr(a, name) is not None:
                item[name] = [int(v) for v in getattr(a, name)]
        if a.heading not in (-1, "none"):
            item["heading"] = HEADING_NAMES.get(a.heading, a.heading) if isinstance(a.heading, int) else a.heading
        for name, default in (("waiting", False), ("wait", 0), ("goals_reached", 0)):
            if getattr(a, name) != default:
                item[name] = getattr(a, name)
        if a.path_index is not None:
            item["path_index"] = int(a.path_index)
        if a.path is not None:
            item["path"] = [[int(r), int(c)] for r, c in a.path]
        agents.append(item)
    data: dict[str, Any] = {"version": FORMAT_VERSION, "agents": agents}
    if scene.coins:
        coins = []
        for key, outcome in scene.coins.items():
            entry: dict[str, Any] = {"predicate": key[0]} if len(key) == 3 else {}
            entry.update({"a": key[-2], "b": key[-1], "outcome": bool(outcome)})
            coins.append(entry)
        data["coins"] = coins
    if scene.rng_state is not None:
        data["rng_state"] = _plain(scene.rng_state)
    return data


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if hasattr(x, "item") and callable(x.item):  # numpy scalar
        return x.item()
    return x


def dumps_scene(scene: Scene) -> str:
    """The scene as YAML text: one agent per line, then the forced coins and the random state."""
    data = scene_to_data(scene)
    lines = ["# LogiCity Studio scene (format: docs/scene-api.md, section \"Scene files\")",
             f"version: {FORMAT_VERSION}", "agents:" if data["agents"] else "agents: []"]
    for item in data["agents"]:
        lines.append("- " + yaml.safe_dump(item, default_flow_style=True, sort_keys=False, width=10**9).strip())
    if "coins" in data:
        lines.append("coins:")
        for entry in data["coins"]:
            lines.append("- " + yaml.safe_dump(entry, default_flow_style=True, sort_keys=False).strip())
    if "rng_state" in data:
        lines.append("rng_state: " + yaml.safe_dump(data["rng_state"], default_flow_style=True,
                                                    sort_keys=False, width=10**9).strip())
    return "\n".join(lines) + "\n"


def save_scene(scene: Scene, path: str | Path) -> Path:
    """Write a scene file atomically (a temporary file renamed over the target)."""
    return atomic_write_text(path, dumps_scene(scene))


def _cell(item: LocatedDict, key: str) -> tuple[int, int] | None:
    value = item.get(key)
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                 for v in value)):
        raise item.error(f"{key} must be [row, col] (two integers), got {value!r}", key)
    return int(value[0]), int(value[1])


def _path(item: LocatedDict) -> tuple[tuple[int, int], ...] | None:
    value = item.get("path")
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise item.error(f"path must be a non-empty list of [row, col] cells, got {yaml_type_name(value)}", "path")
    cells = []
    for j, cell in enumerate(value):
        if not (isinstance(cell, list) and len(cell) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                  for v in cell)):
            raise item.error(f"path cell {j} must be [row, col] (two integers), got {cell!r}", "path")
        cells.append((int(cell[0]), int(cell[1])))
    return tuple(cells)


def _agent(item: Any, items: LocatedList, i: int) -> SceneAgent:
    what = f"agent #{i + 1}"
    if not isinstance(item, LocatedDict):  # scene data is Located throughout (loads_yaml, _locate_plain)
        raise items.error(f"{what} must be a mapping, got {yaml_type_name(item)}", i)
    reject_unknown_keys(item, _AGENT_KEYS, what)
    tname = expect(item, "type", str, what=what)
    if tname not in _TYPES:
        raise item.error(f"{what}: type must be 'Pedestrian' or 'Car', got {tname!r}", "type")
    concepts = expect(item, "concepts", list, required=False)
    if concepts is not None and not all(isinstance(c, str) for c in concepts):
        raise item.error(f"{what}: concepts must be names", "concepts")
    heading = item.get("heading", -1)
    if isinstance(heading, bool) or not isinstance(heading, (int, str)):
        raise item.error(f"{what}: heading must be none, Left, Right, Up, Down or -1..3, got {heading!r}", "heading")
    return SceneAgent(
        kind=_TYPES[tname], id=expect(item, "id", int, required=False),
        priority=expect(item, "priority", int, required=False),
        concepts=tuple(concepts) if concepts is not None else None,
        position=_cell(item, "position"), goal=_cell(item, "goal"), path=_path(item),
        path_index=expect(item, "path_index", int, required=False), heading=heading,
        waiting=expect(item, "waiting", bool, required=False, default=False),
        wait=expect(item, "wait", int, required=False, default=0),
        goals_reached=expect(item, "goals_reached", int, required=False, default=0))


def scene_from_data(data: Any, file: str | None = None) -> Scene:
    """A :class:`Scene` from parsed YAML/JSON data; structural problems are located :class:`ConfigError`s, and
    the scene remembers its lines (``origin``) so problems found when it is installed are located too."""
    if not isinstance(data, dict):
        raise ConfigError("a scene file must be a mapping with an 'agents' list", file, 1)
    if isinstance(data, LocatedDict):
        check_format_header(data, _TOP_KEYS, "the scene", "scene", FORMAT_VERSION)
        items = expect(data, "agents", list, what="the scene")
    else:  # plain data (JSON from a tool): same checks through located wrappers without lines
        return scene_from_data(_locate_plain(data, file), file)
    agents = tuple(_agent(item, items, i) for i, item in enumerate(items))
    coins: dict[tuple, bool] = {}
    coin_items = expect(data, "coins", list, required=False, default=[])
    for j, entry in enumerate(coin_items):
        what = f"coin #{j + 1}"
        if not isinstance(entry, LocatedDict):
            raise coin_items.error(f"{what} must be a mapping with a, b and outcome", j)
        reject_unknown_keys(entry, _COIN_KEYS, what)
        ab = []
        for key in ("a", "b"):
            value = expect(entry, key, (int, str), what=what)
            ab.append(value)
        outcome = expect(entry, "outcome", bool, what=what)
        pred = expect(entry, "predicate", str, required=False)
        coins[(pred, *ab) if pred is not None else tuple(ab)] = outcome
    rng_state = expect(data, "rng_state", dict, required=False)
    lines = tuple(items.item_line(i) for i in range(len(items)))
    coins_line = data.line_of("coins") if "coins" in data else None
    return Scene(agents, coins, rng_state, origin=SceneOrigin(file, lines, coins_line))


def _locate_plain(data: Any, file: str | None) -> Any:
    """Plain dicts/lists as Located containers (no line numbers), so one parser serves YAML and JSON data."""
    if isinstance(data, dict):
        out = LocatedDict({k: _locate_plain(v, file) for k, v in data.items()})
        out.file = file
        return out
    if isinstance(data, list):
        out_l = LocatedList([_locate_plain(v, file) for v in data])
        out_l.file = file
        return out_l
    return data


def loads_scene(text: str, file: str | Path | None = None) -> Scene:
    fname = str(file) if file is not None else None
    return scene_from_data(loads_yaml(text, fname), fname)


def load_scene(path: str | Path) -> Scene:
    """Read a scene file (the scene is checked against a city when it is installed)."""
    p = Path(path)
    return scene_from_data(load_yaml(p), str(p))
