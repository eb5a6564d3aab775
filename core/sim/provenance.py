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

__all__ = ["city_hash", "agents_hash", "provenance", "short"]


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


def provenance(config: Any) -> dict[str, str]:
    """``{"city": …, "agents": …}`` for a :class:`~core.sim.config.SimConfig` (what an episode's meta stores)."""
    return {"city": city_hash(config.city), "agents": agents_hash(config.agents)}


def short(digest: str | None) -> str:
    """The 12-character form shown in the studio ("—" when unknown, e.g. an episode from an older version)."""
    return digest[:12] if digest else "—"
