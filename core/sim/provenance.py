"""Provenance of a recording: content hashes of the city and the agent set that produced it.

Why: in the studio a user edits the city and the agents, then *applies* the edits to re-simulate; a recorded
episode must say which city and agents it was made with, so that a recording can be told apart from the edits
shown next to it ("recorded with other agents: Apply to re-simulate") and a saved episode can be traced to its
inputs. Hashes of *content*, not of file names: the same agents typed into another file hash the same, and any
edit that changes what the simulator does changes the hash.

* city: the cell layers the simulator reads (street codes, buildings, mid lanes, intersections) and the lane
  directions (lane start/end cells); the map's name and file do not count.
* agents: each agent's type, id, priority, concepts, size and chosen first start/goal, in agent order (order
  decides ties and the SPF ego).

Both are SHA-256 hex digests; :func:`short` gives the 12-character form the studio shows. The simulator stores
:func:`provenance` in every episode's meta (``meta["provenance"]``).
"""
from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

__all__ = ["city_hash", "agents_hash", "table_agents_hash", "provenance", "short"]


def city_hash(city: Any) -> str:
    """SHA-256 of what the simulator reads from ``city`` (see the module docstring)."""
    h = hashlib.sha256(b"logicity-city-v1")
    h.update(np.asarray(city.shape, np.int64).tobytes())
    for layer in (city.street, city.building, city.midline, city.intersections):
        arr = np.ascontiguousarray(layer)
        h.update(arr.dtype.str.encode())
        h.update(np.asarray(arr.shape, np.int64).tobytes())
        h.update(arr.tobytes())
    lanes = city.lane_graph
    for arr in (lanes.start_nodes, lanes.end_nodes):
        h.update(np.ascontiguousarray(arr, np.int64).tobytes())
    return h.hexdigest()


def agents_hash(agents: Any) -> str:
    """SHA-256 of an agent set's content, in agent order (see the module docstring)."""
    h = hashlib.sha256(b"logicity-agents-v1")
    for a in agents:
        start = "-" if a.start is None else f"{int(a.start[0])},{int(a.start[1])}"
        goal = "-" if a.goal is None else f"{int(a.goal[0])},{int(a.goal[1])}"
        h.update(f"{a.kind.label}|{int(a.id)}|{int(a.priority)}|{','.join(a.concepts)}|{int(a.size)}|{start}|"
                 f"{goal}\n".encode())
    return h.hexdigest()


def table_agents_hash(config_agents: Any, table: Any) -> str:
    """The agents hash of what a simulation really runs: the config's set (with its chosen starts and goals) when
    ``table`` (its :class:`~core.base.world.AgentTable`) holds exactly those agents, types, priorities and concepts, else
    the table's own content (an SPF reset that changed the ego's concepts, an env's replacement table)."""
    specs = list(config_agents)
    same = len(specs) == len(table) and all(
        a.name == table.names[i] and int(a.kind) == int(table.kinds[i]) and a.priority == int(table.priorities[i])
        and sorted(a.concepts) == sorted(table.concept_names(i)) for i, a in enumerate(specs))
    if same:
        return agents_hash(config_agents)
    h = hashlib.sha256(b"logicity-agents-v1")
    for i, name in enumerate(table.names):
        kind, _, tail = name.rpartition("_")
        h.update(f"{kind}|{tail}|{int(table.priorities[i])}|{','.join(table.concept_names(i))}|1|-|-\n".encode())
    return h.hexdigest()


def provenance(config: Any) -> dict[str, str]:
    """``{"city": …, "agents": …}`` for a :class:`~core.sim.config.SimConfig` (what an episode's meta stores)."""
    return {"city": city_hash(config.city), "agents": agents_hash(config.agents)}


def short(digest: str | None) -> str:
    """The 12-character form shown in the studio ("—" when unknown, e.g. an episode from an older version)."""
    return digest[:12] if digest else "—"
