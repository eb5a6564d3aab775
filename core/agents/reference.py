"""Import the reference simulator's agent files (``config/agents/**.yaml``;
docs/reference.md#agent-files).

Mapping (documented in docs/formats.md, "Importing reference agent files"):

* ``class: Pedestrian`` → Pedestrian; ``Private_car`` → Car; ``Bus`` → Car with the ``bus`` concept (the
  reference cannot construct its Bus class; bus behaviour always comes from the concept). A Bus's ``no.``
  (route id) is ignored: fixed bus routes are not supported.
* ``concepts.type`` must agree with the class; ``concepts.priority`` becomes the priority; every other key of
  ``concepts`` is a concept flag. The reference's grounding tests only the key's presence, so a present flag
  is set whatever its value (a value must still be a number).
* ``gplanner`` must be the class's planner (``A*`` for pedestrians, ``A*vg`` for cars); ``size`` is kept.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.agents.io import check_agent
from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind
from core.base.errors import ConfigError
from core.io.yamlio import LocatedList, expect, is_mapping, load_yaml, loads_yaml, reject_unknown_keys, yaml_type_name

__all__ = ["import_reference_agents", "reference_agents_from_text"]

_CLASSES = {"Pedestrian": Kind.PEDESTRIAN, "Private_car": Kind.CAR, "Bus": Kind.CAR}
_PLANNERS = {Kind.PEDESTRIAN: "A*", Kind.CAR: "A*vg"}
_AGENT_KEYS = ("class", "id", "size", "gplanner", "concepts")


def reference_agents_from_data(data: Any, file: str | None = None) -> AgentSet:
    """Convert parsed reference agent data to a validated :class:`AgentSet`."""
    if not is_mapping(data):
        raise ConfigError("a reference agent file must be a mapping with an 'agents' list", file, 1)
    for key in data:
        if key != "agents":
            raise data.error(f"unknown key {key!r} in the reference agent file (expected only 'agents')", key)
    items: LocatedList = expect(data, "agents", list, what="the reference agent file")
    agents: list[AgentSpec] = []
    names: dict[str, int] = {}
    for i, item in enumerate(items):
        what = f"agent #{i + 1}"
        if not is_mapping(item):
            raise items.error(f"{what} must be a mapping, got {yaml_type_name(item)}", i)
        reject_unknown_keys(item, _AGENT_KEYS, what)
        cls = expect(item, "class", str, what=what)
        if cls not in _CLASSES:
            raise item.error(f"{what}: unknown class {cls!r} (expected Pedestrian, Private_car or Bus)", "class")
        kind = _CLASSES[cls]
        agent_id = expect(item, "id", int, what=what)
        size = expect(item, "size", int, required=False, default=1)
        planner = expect(item, "gplanner", str, required=False, default=_PLANNERS[kind])
        if planner != _PLANNERS[kind]:
            raise item.error(f"{what}: gplanner {planner!r} is not supported for {cls} (expected "
                             f"{_PLANNERS[kind]!r})", "gplanner")
        concepts_map = expect(item, "concepts", dict, what=what)
        ctype = expect(concepts_map, "type", str, what=f"the concepts of {what}")
        if ctype != kind.label:
            raise concepts_map.error(f"{what}: concepts.type {ctype!r} does not match class {cls!r} (expected "
                                     f"{kind.label!r})", "type")
        priority = expect(concepts_map, "priority", int, what=f"the concepts of {what}")
        concepts: list[str] = []
        for key, value in concepts_map.items():
            if key in ("type", "priority"):
                continue
            if key == "no." and cls == "Bus":
                continue  # bus route id: fixed routes are not supported (see module docstring)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise concepts_map.error(f"{what}: concept flag {key!r} must be a number like 1.0, got {value!r}",
                                         key)
            concepts.append(str(key))
        if cls == "Bus" and "bus" not in concepts:
            concepts.append("bus")
        problem = check_agent(kind, agent_id, priority, tuple(concepts), size)
        if problem:
            field, message = problem
            if field == "concepts":
                bad = next((k for k in concepts_map if f"'{k}'" in message), None)
                raise concepts_map.error(f"{what}: {message}", bad)
            container, key = (concepts_map, "priority") if field == "priority" else (item, field)
            raise container.error(f"{what}: {message}", key)
        spec = AgentSpec(kind, agent_id, priority, tuple(concepts), size)
        if spec.name in names:
            raise item.error(f"{what}: duplicate agent {spec.name} (first defined as agent #{names[spec.name] + 1}"
                             f", line {items.item_line(names[spec.name])}); ids must be unique per class", "id")
        names[spec.name] = i
        agents.append(spec)
    return AgentSet(tuple(agents), source=file)


def reference_agents_from_text(text: str, file: str | Path | None = None) -> AgentSet:
    fname = str(file) if file is not None else None
    return reference_agents_from_data(loads_yaml(text, fname), fname)


def import_reference_agents(path: str | Path) -> AgentSet:
    """Read a reference agent YAML (e.g. ``config/agents/easy/train.yaml``) into a validated AgentSet."""
    p = Path(path)
    return reference_agents_from_data(load_yaml(p), str(p))
