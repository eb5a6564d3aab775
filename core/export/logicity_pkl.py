"""Opening existing LogiCity runs: the reference simulator's ``.pkl`` episode caches → our episode format.

A cache (docs/reference.md "Episode caches") is ``{"Time_Obs": {k: {"World": [3+N, H, W] float tensor (state
before step k), "Agent_actions": ...}}, "Static Info": {"Agents": {...}, "Logic": {"Predicates", "Rules",
"Groundings"}}}`` with ``k`` from 1. It is read with the restricted unpickler of :mod:`core.export.safe_pickle`
(nothing in the file is executed) and converted as follows:

* the city: the static layers (block, building, street) must equal one of the bundled maps (``configs/maps``);
  the reference's 5×5 city is ``default.yaml``. Other cities are refused with that explanation;
* agents: ``Static Info/Agents`` in layer order, named ``{Type}_{layer}`` as the reference names them, with
  their priority and concept flags;
* ontology and rules: the bundled ontology whose predicates are the cache's ``Predicates``, the cache's rule data
  converted by the reference rule importer (core/logic/lang/reference.py);
* per state: each agent's position (the cell holding its type code exactly), goal (code + 0.3; under the agent
  when not visible), heading (its last move); per step: the chosen action (master: the one-hot over 13 car / 5
  pedestrian moves; vis: the label 0..3) as ``decided`` and ``holds``, ``realised`` from the cells moved, goal
  reached. What the cache does not record is marked: ``fired`` = -1 and no witnesses (no clause is known to have
  fired), each agent's plan is its walked trajectory. ``meta["start"] = "scene"``: an imported run is replayed,
  not re-simulated from a seed.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from core.agents.io import loads_agent_set
from core.base.errors import EpisodeFileError, LogiCityError
from core.base.paths import ROOT
from core.export.safe_pickle import load_restricted
from core.io.datadir import cache_dir
from core.io.yamlio import dump_yaml, loads_yaml
from core.logic.lang.ontology import load_ontology
from core.logic.lang.program import parse_rules
from core.logic.lang.reference import reference_rules_from_data
from core.map.io import load_map
from core.sim.episode import write_episode_file
from core.sim.simulation import clause_table

__all__ = ["read_cache", "cache_to_episode", "convert_cache", "imported_episode_path"]

TYPE_CODES = {"Pedestrian": 8.0, "Car": 9.0}
GOAL_PLUS = 0.3


def _err(path: Path, message: str) -> EpisodeFileError:
    return EpisodeFileError(f"LogiCity cache: {message}", path)


def read_cache(path: str | Path) -> dict[str, Any]:
    """The cache as plain data (tensors as numpy arrays), its structure checked."""
    path = Path(path)
    data = load_restricted(path)
    if not isinstance(data, dict) or "Time_Obs" not in data or "Static Info" not in data:
        raise _err(path, "expected a dict with 'Time_Obs' and 'Static Info' (a reference episode cache)")
    obs, static = data["Time_Obs"], data["Static Info"]
    if not isinstance(obs, dict) or not obs or not all(isinstance(k, int) for k in obs):
        raise _err(path, "'Time_Obs' must map step numbers (1, 2, …) to observations")
    if not isinstance(static, dict) or not isinstance(static.get("Agents"), dict) or not static["Agents"]:
        raise _err(path, "'Static Info/Agents' must map agent names to their descriptions")
    for k in sorted(obs):
        w = obs[k].get("World") if isinstance(obs[k], dict) else None
        if not isinstance(w, np.ndarray) or w.ndim != 3 or w.shape[0] != 3 + len(static["Agents"]):
            raise _err(path, f"Time_Obs[{k}]['World'] must be a [3 + {len(static['Agents'])}, H, W] tensor, got "
                             f"{getattr(w, 'shape', type(w).__name__)}")
    return data


def _agents(static: dict, path: Path):
    rows = []
    for name, info in static["Agents"].items():
        if not isinstance(info, dict) or not isinstance(info.get("layer_id"), int):
            raise _err(path, f"Static Info/Agents/{name} lacks an integer 'layer_id'")
        given = info.get("concepts")
        concepts = given if isinstance(given, dict) else {}
        kind = str(concepts.get("type") or info.get("type") or str(name).split("_")[0])
        if kind not in TYPE_CODES:
            raise _err(path, f"Static Info/Agents/{name}: unknown type {kind!r} (Pedestrian or Car)")
        flags = sorted(k for k in concepts if k not in ("type", "priority"))
        rows.append((int(info["layer_id"]), kind, int(concepts.get("priority", 0 if kind == "Pedestrian" else 1)),
                     flags, int(info.get("size", 1) or 1)))
    rows.sort()
    lines = ["version: 1", "agents:"]
    for layer, kind, prio, flags, size in rows:
        prio = 0 if kind == "Pedestrian" else max(1, prio)
        lines.append(f"- {{type: {kind}, id: {layer}, priority: {prio}, concepts: [{', '.join(flags)}], "
                     f"size: {max(1, size)}}}")
    text = "\n".join(lines) + "\n"
    try:
        return loads_agent_set(text, f"{path}#agents"), text, rows
    except LogiCityError as exc:
        raise _err(path, f"agents cannot be converted: {exc}") from None


def _match_map(world: np.ndarray, path: Path):
    found = []
    for f in sorted((ROOT / "configs" / "maps").glob("*.yaml")):
        city = load_map(f)
        if city.shape == world.shape[1:] and np.array_equal(world[2], city.street) and \
                np.array_equal(world[1], city.building) and np.array_equal(world[0], city.block):
            return city, f
        found.append(f.name)
    raise _err(path, f"its city ({world.shape[1]}x{world.shape[2]} cells) matches none of the bundled maps "
                     f"({', '.join(found)}); only runs on a bundled city can be imported")


def _match_ontology(logic: dict, path: Path):
    names = logic.get("Predicates") if isinstance(logic, dict) else None
    if not isinstance(names, list) or not names:
        raise _err(path, "'Static Info/Logic/Predicates' must list the predicate names")
    want = [str(n) for n in names]
    best = None
    for f in sorted((ROOT / "configs" / "ontologies").glob("*.yaml")):
        onto = load_ontology(f)
        have = [p.name for p in onto.predicates]
        if have == want:
            return onto, f
        if best is None and set(have) == set(want):
            best = (onto, f)
    if best is not None:
        return best
    raise _err(path, f"its predicates ({', '.join(want[:6])}…) match none of the bundled ontologies")


def _rules_text(logic: dict, ontology, path: Path) -> str:
    data = logic.get("Rules")
    if data is None:
        raise _err(path, "'Static Info/Logic/Rules' is missing")
    if not (isinstance(data, dict) and "Rules" in data):
        data = {"Rules": data}
    try:
        located = loads_yaml(dump_yaml(data), f"{path}#rules")
        return reference_rules_from_data(located, ontology, f"{path}#rules").to_text()
    except LogiCityError as exc:
        raise _err(path, f"its rules cannot be converted: {exc}") from None


def _decided(actions: Any, names: list[str], kinds: list[str], path: Path, k: int) -> np.ndarray:
    """Per agent the chosen action (0 Slow, 1 Normal, 2 Fast, 3 Stop) of step ``k``."""
    n = len(names)
    out = np.full(n, 1, np.int8)
    if isinstance(actions, dict):   # vis: {"Car_3": label}
        for i, name in enumerate(names):
            v = actions.get(name)
            if v is not None:
                out[i] = int(np.asarray(v).reshape(-1)[0])
        if out.min() < 0 or out.max() > 3:
            raise _err(path, f"Time_Obs[{k}]['Agent_actions'] holds a label outside 0..3")
        return out
    if not isinstance(actions, (list, tuple)) or len(actions) != n:
        raise _err(path, f"Time_Obs[{k}]['Agent_actions'] must hold one action per agent ({n})")
    for i, a in enumerate(actions):
        v = np.asarray(a).reshape(-1)
        j = int(np.argmax(v)) if v.size else -1
        if kinds[i] == "Car" and v.size == 13:
            out[i] = 3 if j == 12 else j // 4      # (speed - 1) * 4 + heading; 12 = Stop
        elif kinds[i] == "Pedestrian" and v.size == 5:
            out[i] = 3 if j == 4 else 1
        else:
            raise _err(path, f"Time_Obs[{k}]['Agent_actions'][{i}] ({names[i]}) has {v.size} entries; expected "
                             f"{13 if kinds[i] == 'Car' else 5}")
    return out


def cache_to_episode(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(arrays, meta) of the episode format (core/sim/episode.py) for the cache at ``path``."""
    path = Path(path)
    data = read_cache(path)
    obs, static = data["Time_Obs"], data["Static Info"]
    steps = sorted(obs)
    agents, agents_text, rows = _agents(static, path)
    table = agents.table()
    names = list(table.names)
    kinds = [r[1] for r in rows]
    worlds = [np.asarray(obs[k]["World"], np.float32) for k in steps]
    city, map_file = _match_map(worlds[0], path)
    onto, onto_file = _match_ontology(static.get("Logic", {}), path)
    rules_text = _rules_text(static.get("Logic", {}), onto, path)

    program = parse_rules(rules_text, onto, f"{path}#rules").program()
    n, t1 = len(names), len(steps)
    pos = np.zeros((t1, n, 2), np.int16)
    goals = np.zeros((t1, n, 2), np.int16)
    for s, w in enumerate(worlds):
        for i in range(n):
            layer, code = w[3 + i], TYPE_CODES[kinds[i]]
            at = np.argwhere(layer == code)
            if len(at) != 1:
                raise _err(path, f"Time_Obs[{steps[s]}]: agent {names[i]} is on {len(at)} cells (one cell must hold "
                                 f"its type code {code:g})")
            pos[s, i] = at[0]
            g = np.argwhere(np.isclose(layer, code + GOAL_PLUS, atol=1e-3))
            goals[s, i] = g[0] if len(g) else at[0]
    t = t1 - 1
    headings = np.full((t1, n), -1, np.int8)
    d = np.diff(pos.astype(np.int32), axis=0)
    for s in range(t):
        h = headings[s].copy()
        for i in range(n):
            dr, dc = d[s, i]
            if dr or dc:
                h[i] = (2 if dr < 0 else 3) if abs(dr) >= abs(dc) else (0 if dc < 0 else 1)
        headings[s + 1] = h
    decided = np.stack([_decided(obs[k].get("Agent_actions"), names, kinds, path, k) for k in steps[:t]]) \
        if t else np.zeros((0, n), np.int8)
    moved = np.abs(d).sum(axis=2) if t else np.zeros((0, n), np.int64)
    is_car = np.array([k == "Car" for k in kinds])
    realised = np.where(moved == 0, 3, np.where(is_car[None, :], np.clip(moved - 1, 0, 2), 1)).astype(np.int8)
    holds = np.zeros((t, n, 4), bool)
    if t:
        holds[np.arange(t)[:, None], np.arange(n)[None, :], decided] = True
    # plans: each agent's walked trajectory (distinct consecutive cells)
    cells, offsets, plan_agent, path_index = [], [0], [], np.zeros((t1, n), np.int32)
    for i in range(n):
        traj = [tuple(pos[0, i])]
        for s in range(1, t1):
            if tuple(pos[s, i]) != traj[-1]:
                traj.append(tuple(pos[s, i]))
            path_index[s, i] = len(traj) - 1
        cells.extend(traj)
        offsets.append(len(cells))
        plan_agent.append(i)
    concepts = list(table.concepts)
    arrays = {
        "positions": pos, "headings": headings, "goals": goals, "path_index": path_index,
        "plan_id": np.tile(np.arange(n, dtype=np.int32), (t1, 1)),
        "priorities": np.tile(table.priorities.astype(np.int32), (t1, 1)),
        "concepts": np.tile(np.stack([table.concepts[c] for c in concepts], axis=1)[None], (t1, 1, 1)).astype(bool),
        "holds": holds, "decided": decided.astype(np.int8), "realised": realised,
        "fired": np.full((t, n), -1, np.int32), "witness": np.full((t, n, 1), -1, np.int32),
        "reached": np.all(pos[:t] == goals[:t], axis=2),
        "plan_cells": np.asarray(cells, np.int16).reshape(-1, 2), "plan_offsets": np.asarray(offsets, np.int64),
        "plan_agent": np.asarray(plan_agent, np.int32), "plan_step": np.zeros(n, np.int32),
    }
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    meta = {
        "mode": f"LogiCity run {path.stem}", "seed": 0, "engine": "compiled", "agent_region": None,
        "sampling": "master", "rule_section": None, "start": "scene", "num_steps": t,
        "created": "imported", "concepts": concepts,
        "agents": [{"name": nm, "kind": int(k)} for nm, k in zip(names, table.kinds)],
        "base_priorities": [int(p) for p in table.priorities],
        "base_concepts": [table.concept_names(i) for i in range(n)],
        "clauses": clause_table(program),
        "config_texts": {"map": map_file.read_text(encoding="utf-8"), "agents": agents_text,
                         "ontology": onto_file.read_text(encoding="utf-8"), "rules": rules_text},
        "imported_from": {"file": path.name, "sha256": digest, "format": "LogiCity .pkl cache",
                          "first_step_key": steps[0], "map": map_file.name, "ontology": onto_file.name,
                          "not_recorded": "fired clauses and witnesses (fired = -1), planned paths (the walked "
                                          "trajectory is each agent's plan); holds = the chosen action"},
    }
    return arrays, meta


def convert_cache(path: str | Path, out: str | Path) -> Path:
    """Write the cache at ``path`` as an episode file ``out`` (atomic, reproducible bytes)."""
    arrays, meta = cache_to_episode(path)
    return write_episode_file(out, arrays, meta, reproducible=True)


def imported_episode_path(path: str | Path) -> Path:
    """The converted episode of a cache, made once and kept in the user cache folder (keyed by the file's
    SHA-256, so an edited cache converts again)."""
    path = Path(path)
    if not path.is_file():
        raise EpisodeFileError("file not found", path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    out = cache_dir() / "imported-runs" / f"{path.stem}-{digest}.npz"
    if not out.is_file():
        convert_cache(path, out)
    return out
