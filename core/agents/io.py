"""Agent sets in LogiCity Studio's YAML format (docs/formats.md, "Agent sets").

An agent set is an ordered list of agents (order = the reference's layer order: it decides ties and which car
is the SPF ego, the first one). One agent per line in saved files, so error lines point at one agent.

Rules checked (each a :class:`core.base.errors.ConfigError` at the offending line):

* ``type`` is ``Pedestrian`` or ``Car``; ``id`` a non-negative integer, unique per type (names ``Car_1`` …);
* ``priority``: pedestrians always 0 (may be omitted; the reference and every rule set assume pedestrians
  have the highest priority), cars an integer ≥ 1 (default 1; smaller = higher priority);
* ``concepts``: a list of known concept names (``core.base.world.KNOWN_CONCEPTS``) of the agent's kind, no repeats;
* ``size``: an integer ≥ 1 (default 1; carried for the reference format, every agent occupies one cell);
* ``start``, ``goal`` (optional): ``[row, col]`` cells of the first trip, chosen in the agent editor (left out:
  drawn by the simulator). Whether a cell suits the agent (inside the map, on its network, reachable) depends on
  the city, so it is checked when the simulation starts and listed under Problems in the studio, not here.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind
from core.base.errors import ConfigError
from core.base.world import KNOWN_CONCEPTS
from core.io.fileio import atomic_write_bytes
from core.io.yamlio import (
    LocatedList,
    check_format_header,
    expect,
    is_mapping,
    load_yaml,
    loads_yaml,
    reject_unknown_keys,
    yaml_type_name,
)

__all__ = ["FORMAT_VERSION", "load_agent_set", "loads_agent_set", "save_agent_set", "dumps_agent_set",
           "agent_set_from_data", "check_agent"]

FORMAT_VERSION = 1
_TOP_KEYS = ("version", "agents")
#: Largest priority (only the order matters; priorities are stored as 32-bit integers).
MAX_PRIORITY = 1_000_000
_AGENT_KEYS = ("type", "id", "priority", "concepts", "size", "start", "goal")
_TYPES = {"Pedestrian": Kind.PEDESTRIAN, "Car": Kind.CAR}


def check_agent(kind: Kind, agent_id: int, priority: int, concepts: tuple[str, ...],
                size: int) -> tuple[str, str] | None:
    """``(field, problem)`` for an invalid agent, else ``None`` (shared by our loader and the reference importer).

    ``field`` is one of ``id``, ``priority``, ``concepts``, ``size``.
    """
    if agent_id < 0:
        return "id", f"id must not be negative, got {agent_id}"
    if priority < 0:
        return "priority", f"priority must not be negative, got {priority}"
    if priority > MAX_PRIORITY:
        return "priority", f"priority must be at most {MAX_PRIORITY}, got {priority}"
    if kind is Kind.PEDESTRIAN and priority != 0:
        return "priority", f"pedestrians always have priority 0 (the highest), got {priority}"
    if kind is Kind.CAR and priority < 1:
        return "priority", f"car priority must be at least 1 (0 is reserved for pedestrians), got {priority}"
    if size < 1:
        return "size", f"size must be at least 1, got {size}"
    seen: set[str] = set()
    for c in concepts:
        if c not in KNOWN_CONCEPTS:
            return "concepts", f"unknown concept {c!r} (known: {', '.join(KNOWN_CONCEPTS)})"
        if KNOWN_CONCEPTS[c] is not kind:
            return "concepts", (f"concept {c!r} applies to {KNOWN_CONCEPTS[c].label.lower()}s, "
                                f"not {kind.label.lower()}s")
        if c in seen:
            return "concepts", f"concept {c!r} is listed twice"
        seen.add(c)
    return None


def agent_set_from_data(data: Any, file: str | None = None) -> AgentSet:
    """Build a validated :class:`AgentSet` from parsed YAML data in our format."""
    if not is_mapping(data):
        raise ConfigError("an agent-set file must be a mapping with an 'agents' list", file, 1)
    check_format_header(data, _TOP_KEYS, "the agent set", "agent-set", FORMAT_VERSION)
    items: LocatedList = expect(data, "agents", list, what="the agent set")
    agents: list[AgentSpec] = []
    names: dict[str, int] = {}
    for i, item in enumerate(items):
        if not is_mapping(item):
            raise items.error(f"agent #{i + 1} must be a mapping, got {yaml_type_name(item)}", i)
        what = f"agent #{i + 1}"
        reject_unknown_keys(item, _AGENT_KEYS, what)
        tname = expect(item, "type", str, what=what)
        if tname not in _TYPES:
            raise item.error(f"agent type must be 'Pedestrian' or 'Car', got {tname!r}", "type")
        kind = _TYPES[tname]
        agent_id = expect(item, "id", int, what=what)
        priority = expect(item, "priority", int, required=False, default=0 if kind is Kind.PEDESTRIAN else 1)
        concepts_raw = expect(item, "concepts", list, required=False, default=[])
        for c in concepts_raw:
            if not isinstance(c, str):
                raise item.error(f"concepts must be names (strings), got {c!r}", "concepts")
        concepts = tuple(concepts_raw)
        size = expect(item, "size", int, required=False, default=1)
        problem = check_agent(kind, agent_id, priority, concepts, size)
        if problem:
            key, message = problem
            raise item.error(f"{what}: {message}", key if key in item else None)
        start, goal = (_cell(item, key, what) for key in ("start", "goal"))
        spec = AgentSpec(kind, agent_id, priority, concepts, size, start, goal)
        if spec.name in names:
            raise item.error(f"{what}: duplicate agent {spec.name} (first defined as agent #{names[spec.name] + 1}"
                             f", line {items.item_line(names[spec.name])}); ids must be unique per type", "id")
        names[spec.name] = i
        agents.append(spec)
    return AgentSet(tuple(agents), source=file)


def _cell(item: Any, key: str, what: str) -> tuple[int, int] | None:
    """An optional ``[row, col]`` pair of non-negative integers."""
    value = item.get(key)
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)):
        raise item.error(f"{what}: {key} must be a [row, col] pair of non-negative integers, got {value!r}", key)
    return int(value[0]), int(value[1])


def loads_agent_set(text: str, file: str | Path | None = None) -> AgentSet:
    fname = str(file) if file is not None else None
    return agent_set_from_data(loads_yaml(text, fname), fname)


def load_agent_set(path: str | Path) -> AgentSet:
    """Read an agent-set file in our format."""
    p = Path(path)
    return agent_set_from_data(load_yaml(p), str(p))


def dumps_agent_set(agents: AgentSet, header: str | None = None) -> str:
    """Our YAML text for an agent set (one agent per line; defaults omitted)."""
    lines = [f"# {line}" if line else "#" for line in (header or "LogiCity Studio agent set "
             "(format: docs/formats.md, section \"Agent sets\")").splitlines()]
    lines.append(f"version: {FORMAT_VERSION}")
    if not len(agents):
        lines.append("agents: []")
    else:
        lines.append("agents:")
    for a in agents:
        item: dict[str, Any] = {"type": a.kind.label, "id": a.id}
        if a.kind is Kind.CAR:
            item["priority"] = a.priority
        if a.concepts:
            item["concepts"] = list(a.concepts)
        if a.size != 1:
            item["size"] = a.size
        for key in ("start", "goal"):
            cell = getattr(a, key)
            if cell is not None:
                item[key] = [int(cell[0]), int(cell[1])]
        lines.append("- " + yaml.safe_dump(item, default_flow_style=True, sort_keys=False, width=10_000).strip())
    return "\n".join(lines) + "\n"


def save_agent_set(agents: AgentSet, path: str | Path, header: str | None = None) -> None:
    """Write an agent set to ``path`` in our format (atomically: a crash leaves the old file or the new one)."""
    atomic_write_bytes(Path(path), dumps_agent_set(agents, header).encode("utf-8"))
