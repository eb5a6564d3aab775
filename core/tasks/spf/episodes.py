"""SPF evaluation episode sets: start states shipped as data (file format, reading, checking, writing).

File (``configs/spf_episodes/<mode>/<split>.npz``; a stored ZIP of ``.npy`` arrays + ``meta.json``, format tag
``logicity-spf-episodes``, see docs/spf.md). E episodes, N agents, C = len(meta["concepts"]):

===============  ================  ==============================================================================
array            shape / dtype     meaning
===============  ================  ==============================================================================
positions        [E, N, 2] int16   every agent's cell at the start of the episode
headings         [E, N] int8       last move heading (-1 none)
goals            [E, N, 2] int16   current goal
path_index       [E, N] int32      index of the position in the agent's planned path
reach_goal       [E, N] bool       goal-waiting flag
wait             [E, N] int32      goal-waiting counter
priorities       [E, N] int32      priority (the ego's was drawn at reset)
concepts         [E, N, C] bool    concept flags, columns in meta["concepts"] order
plan_cells       [M, 2] int16      all planned paths concatenated
plan_offsets     [E*N+1] int64     path of agent i in episode e = plan_cells[off[e*N+i]:off[e*N+i+1]]
seed             [E] int64         the environment's generator is re-seeded with this after restoring
oracle_step      [E] int32         steps the oracle needed (evaluation allows 2x)
concept          [E] int16         the ego's concept label, index into meta["concept_labels"]
===============  ================  ==============================================================================

The procedure that creates the shipped sets is in :mod:`core.tasks.spf.make_episodes` (it runs the
environment, which reads its episodes from here).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from core.base.codes import Kind
from core.base.errors import EpisodeFileError
from core.base.world import KNOWN_CONCEPTS
from core.io.archive import read_archive, write_archive
from core.tasks.spf.settings import ROOT, SPFMode
from core.tasks.spf.state import StartState

__all__ = ["EpisodeSet", "default_episode_path", "load_episode_set", "read_episode_set", "check_episode_set",
           "save_episode_set", "quotas_for", "DEFAULT_COUNTS", "SEED_STRIDE", "FORMAT", "VERSION"]

FORMAT = "logicity-spf-episodes"
VERSION = 1
#: episodes per split, as in the reference (val_40_episodes.pkl, test_100_episodes.pkl)
DEFAULT_COUNTS = {"val": 40, "test": 100}
SEED_STRIDE = 1_000_000


def default_episode_path(mode: SPFMode) -> Path:
    return ROOT / "configs" / "spf_episodes" / mode.name / f"{mode.split}.npz"


@dataclass
class EpisodeSet:
    """Start states of one mode/split plus metadata; ``state(k)`` gives episode k."""

    states: list[StartState]
    meta: dict = field(default_factory=dict)
    path: str | None = None

    def __len__(self) -> int:
        return len(self.states)

    def state(self, k: int) -> StartState:
        if not 0 <= k < len(self.states):
            raise IndexError(f"episode {k} out of range 0..{len(self.states) - 1}")
        return self.states[k]

    def oracle_steps(self) -> np.ndarray:
        return np.array([s.label.get("oracle_step", 0) for s in self.states], np.int32)

    def concepts(self) -> list[str]:
        return [s.label.get("concept", "normal") for s in self.states]


def quotas_for(concepts: Sequence[str], total: int) -> dict[str, int]:
    """Even split of ``total`` over ``concepts`` (the first ones take the remainder)."""
    k = len(concepts)
    if k == 0:
        return {"normal": total}
    base, extra = divmod(total, k)
    return {c: base + (1 if i < extra else 0) for i, c in enumerate(concepts)}


# ---- file I/O ------------------------------------------------------------------------------------------------

def save_episode_set(path: str | Path, es: EpisodeSet) -> Path:
    states = es.states
    if not states:
        raise ValueError("cannot save an empty episode set")
    n = len(states[0].positions)
    concepts = list(KNOWN_CONCEPTS)
    labels = list(dict.fromkeys(es.meta.get("concept_labels", []) + [s.label.get("concept", "normal")
                                                                      for s in states]))
    paths = [p for s in states for p in s.paths]
    offsets = np.zeros(len(paths) + 1, np.int64)
    offsets[1:] = np.cumsum([len(p) for p in paths])
    arrays: dict[str, np.ndarray] = {
        "positions": np.stack([s.positions for s in states]).astype(np.int16),
        "headings": np.stack([s.headings for s in states]).astype(np.int8),
        "goals": np.stack([s.goals for s in states]).astype(np.int16),
        "path_index": np.stack([s.path_index for s in states]).astype(np.int32),
        "reach_goal": np.stack([s.reach_goal for s in states]).astype(bool),
        "wait": np.stack([s.wait for s in states]).astype(np.int32),
        "priorities": np.stack([s.priorities for s in states]).astype(np.int32),
        "concepts": np.stack([np.stack([s.concepts[c] for c in concepts], axis=1) for s in states]).astype(bool),
        "plan_cells": np.concatenate(paths).astype(np.int16),
        "plan_offsets": offsets,
        "seed": np.array([s.seed for s in states], np.int64),
        "oracle_step": np.array([s.label.get("oracle_step", 0) for s in states], np.int32),
        "concept": np.array([labels.index(s.label.get("concept", "normal")) for s in states], np.int16),
    }
    meta = dict(es.meta)
    meta.update(concepts=concepts, concept_labels=labels, num_episodes=len(states), num_agents=n)
    return write_archive(path, arrays, meta, FORMAT, VERSION)


_INT_ARRAYS = ("positions", "headings", "goals", "path_index", "wait", "priorities", "plan_cells", "plan_offsets",
               "seed", "oracle_step", "concept")
_BOOL_ARRAYS = ("reach_goal", "concepts")


def _where(name: str, idx: tuple, per_episode: bool = True) -> str:
    """``array X, episode e, agent i`` for the first bad element ``idx`` of array ``name``."""
    parts = [f"array {name}"]
    if per_episode and idx:
        parts.append(f"episode {int(idx[0])}")
        if len(idx) > 1 and name not in ("seed", "oracle_step", "concept"):
            parts.append(f"agent {int(idx[1])}")
    return ", ".join(parts)


def _check_range(a: dict, name: str, lo: int, hi: int | None, path, what: str) -> None:
    arr = a[name]
    if arr.size == 0:
        return
    bad = (arr < lo) | (arr > hi) if hi is not None else arr < lo
    if bad.any():
        idx = tuple(int(x) for x in np.argwhere(bad)[0])
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise EpisodeFileError(f"{_where(name, idx)}: {what} {int(arr[idx])} is outside {rng}", path)


def _check_meta_list(meta: dict, key: str, path, allowed=None) -> list[str]:
    val = meta.get(key, [])
    if not isinstance(val, list) or not all(isinstance(x, str) for x in val):
        raise EpisodeFileError(f"meta.json field {key!r} must be a list of names, got {type(val).__name__}", path)
    if allowed is not None:
        unknown = [x for x in val if x not in allowed]
        if unknown:
            raise EpisodeFileError(f"meta.json field {key!r} names unknown concept {unknown[0]!r} (known: "
                                   f"{', '.join(allowed)})", path)
    return list(val)


def _check_arrays(a: dict, meta: dict, path) -> tuple[int, int, list[str], list[str]]:
    """Shapes, dtypes and the value ranges that need no map: every problem names the file, the array and (for
    per-episode arrays) the episode and agent. Returns (episodes, agents, concepts, concept labels)."""
    for k in _INT_ARRAYS:
        if a[k].dtype.kind not in "iu":
            raise EpisodeFileError(f"array {k} must hold integers, not {a[k].dtype}", path)
    for k in _BOOL_ARRAYS:
        if a[k].dtype != np.bool_:
            raise EpisodeFileError(f"array {k} must be boolean, not {a[k].dtype}", path)
    pos = a["positions"]
    if pos.ndim != 3 or pos.shape[2] != 2:
        raise EpisodeFileError(f"array positions has shape {pos.shape}, expected [episodes, agents, 2]", path)
    e, n = pos.shape[:2]
    if e == 0 or n == 0:
        raise EpisodeFileError(f"episode set holds {e} episodes of {n} agents; it needs at least one of each", path)
    concepts = _check_meta_list(meta, "concepts", path, list(KNOWN_CONCEPTS))
    labels = _check_meta_list(meta, "concept_labels", path, list(KNOWN_CONCEPTS) + ["normal"])
    if "agents" not in meta:
        raise EpisodeFileError("meta.json field 'agents' (the agent names) is missing", path)
    agents = _check_meta_list(meta, "agents", path)
    if len(agents) != n:
        raise EpisodeFileError(f"meta.json field 'agents' names {len(agents)} agents, the arrays hold {n}", path)
    num = meta.get("num_episodes", e)
    if isinstance(num, bool) or not isinstance(num, int) or num != e:
        raise EpisodeFileError(f"meta.json field 'num_episodes' is {num!r}, the arrays hold {e} episodes", path)
    expected = {"goals": (e, n, 2), "headings": (e, n), "path_index": (e, n), "reach_goal": (e, n), "wait": (e, n),
                "priorities": (e, n), "concepts": (e, n, len(concepts)), "seed": (e,), "oracle_step": (e,),
                "concept": (e,)}
    for k, shape in expected.items():
        if a[k].shape != shape:
            raise EpisodeFileError(f"array {k} has shape {a[k].shape}, expected {shape} ({e} episodes, {n} agents"
                                   + (f", {len(concepts)} concepts in meta.json" if k == "concepts" else "") + ")",
                                   path)
    cells, off = a["plan_cells"], a["plan_offsets"]
    if cells.ndim != 2 or cells.shape[1] != 2:
        raise EpisodeFileError(f"array plan_cells has shape {cells.shape}, expected [cells, 2]", path)
    if off.shape != (e * n + 1,):
        raise EpisodeFileError(f"array plan_offsets has shape {off.shape}, expected ({e * n + 1},) "
                               f"(episodes × agents + 1)", path)
    if int(off[0]) != 0 or int(off[-1]) != len(cells):
        raise EpisodeFileError(f"array plan_offsets must run from 0 to {len(cells)} (the plan_cells rows), got "
                               f"{int(off[0])}..{int(off[-1])}", path)
    short = np.diff(off) < 1
    if short.any():
        j = int(np.argmax(short))
        raise EpisodeFileError(f"array plan_offsets, episode {j // n}, agent {j % n}: empty planned path", path)
    _check_range(a, "headings", -1, 3, path, "heading")
    _check_range(a, "path_index", 0, None, path, "path index")
    _check_range(a, "wait", 0, None, path, "waiting counter")
    _check_range(a, "priorities", 0, None, path, "priority")
    _check_range(a, "seed", 0, 2 ** 63 - 1, path, "seed")
    _check_range(a, "oracle_step", 1, None, path, "oracle step count")
    _check_range(a, "concept", 0, len(labels) - 1, path, "concept label index")
    return e, n, concepts, labels


def _check_cells_on_map(a: dict, names: Sequence[str], shape: tuple[int, int], path) -> None:
    """Every position, goal and planned cell inside a ``shape`` map (one vectorised pass per array)."""
    h, w = shape
    for name in ("positions", "goals"):
        arr = a[name]
        out = (arr[..., 0] < 0) | (arr[..., 0] >= h) | (arr[..., 1] < 0) | (arr[..., 1] >= w)
        if out.any():
            k, i = (int(x) for x in np.argwhere(out)[0])
            raise EpisodeFileError(f"array {name}, episode {k}, agent {i} ({names[i]}): cell "
                                   f"({int(arr[k, i, 0])}, {int(arr[k, i, 1])}) is outside the {h}×{w} map", path)
    cells, off = a["plan_cells"], a["plan_offsets"]
    out = (cells[:, 0] < 0) | (cells[:, 0] >= h) | (cells[:, 1] < 0) | (cells[:, 1] >= w)
    if out.any():
        row = int(np.argmax(out))
        p = int(np.searchsorted(off, row, side="right")) - 1  # the path holding that row
        k, i = divmod(p, len(names))
        raise EpisodeFileError(f"array plan_cells, episode {k}, agent {i} ({names[i]}): path cell {row - int(off[p])} "
                               f"({int(cells[row, 0])}, {int(cells[row, 1])}) is outside the {h}×{w} map", path)


def read_episode_set(path: str | Path, map_shape: tuple[int, int] | None = None) -> EpisodeSet:
    """Read and check an episode-set file (shapes, dtypes, value ranges; :func:`load_episode_set` also checks it
    against a mode's map and agents). Problems raise :class:`EpisodeFileError` naming the file, the array and the
    episode. With ``map_shape`` (rows, cols) every cell is checked to lie on the map before anything that reads
    the cells (so a cell far off the map is reported as such, not as a path mismatch)."""
    a, meta = read_archive(path, FORMAT, VERSION)
    need = ("positions", "headings", "goals", "path_index", "reach_goal", "wait", "priorities", "concepts",
            "plan_cells", "plan_offsets", "seed", "oracle_step", "concept")
    missing = [k for k in need if k not in a]
    if missing:
        raise EpisodeFileError(f"episode set lacks arrays: {', '.join(missing)}", path)
    e, n, concepts, labels = _check_arrays(a, meta, path)
    if map_shape is not None:
        _check_cells_on_map(a, meta["agents"], map_shape, path)
    off = a["plan_offsets"]
    cells = a["plan_cells"].astype(np.int32)
    states = []
    for k in range(e):
        paths = tuple(cells[off[k * n + i]: off[k * n + i + 1]] for i in range(n))
        for i, p in enumerate(paths):
            if int(a["path_index"][k, i]) >= len(p):
                raise EpisodeFileError(f"array path_index, episode {k}, agent {i}: index {int(a['path_index'][k, i])}"
                                       f" is beyond the end of its {len(p)}-cell planned path", path)
            if not np.array_equal(p[int(a["path_index"][k, i])], a["positions"][k, i]):
                raise EpisodeFileError(f"array positions, episode {k}, agent {i}: the position is not on its "
                                       f"planned path", path)
        states.append(StartState(
            a["positions"][k].astype(np.int32), a["headings"][k].astype(np.int8), a["goals"][k].astype(np.int32),
            a["path_index"][k].astype(np.int32), a["reach_goal"][k].astype(bool), a["wait"][k].astype(np.int32),
            paths, a["priorities"][k].astype(np.int32),
            {c: a["concepts"][k, :, j].astype(bool) for j, c in enumerate(concepts)},
            int(a["seed"][k]),
            {"concept": labels[int(a["concept"][k])], "oracle_step": int(a["oracle_step"][k]), "index": k}))
    return EpisodeSet(states, meta, str(path))


def check_episode_set(es: EpisodeSet, mode: SPFMode, path: str | Path | None = None) -> None:
    """Check ``es`` against ``mode``: its agents (names, count, kinds), every cell inside the mode's map,
    priorities and concept flags valid for each agent's kind. Raises :class:`EpisodeFileError`."""
    path = path if path is not None else es.path
    table = mode.config.agents.table()
    names = list(table.names)
    if list(es.meta.get("agents", [])) != names:
        raise EpisodeFileError(f"episode set was made for agents {es.meta.get('agents')}, the {mode.split} agent "
                               f"file of {mode.name} has {names}", path)
    h, w = mode.config.city.shape
    is_car = np.asarray(table.kinds) == Kind.CAR
    for k, st in enumerate(es.states):
        if len(st.positions) != len(names):
            raise EpisodeFileError(f"episode {k} has {len(st.positions)} agents, the {mode.split} agent file of "
                                   f"{mode.name} has {len(names)}", path)
        for name, arr in (("positions", st.positions), ("goals", st.goals)):
            out = (arr[:, 0] < 0) | (arr[:, 0] >= h) | (arr[:, 1] < 0) | (arr[:, 1] >= w)
            if out.any():
                i = int(np.argmax(out))
                raise EpisodeFileError(f"array {name}, episode {k}, agent {i} ({names[i]}): cell "
                                       f"({int(arr[i, 0])}, {int(arr[i, 1])}) is outside the {h}×{w} map", path)
        for i, p in enumerate(st.paths):
            out = (p[:, 0] < 0) | (p[:, 0] >= h) | (p[:, 1] < 0) | (p[:, 1] >= w)
            if out.any():
                j = int(np.argmax(out))
                raise EpisodeFileError(f"array plan_cells, episode {k}, agent {i} ({names[i]}): path cell {j} "
                                       f"({int(p[j, 0])}, {int(p[j, 1])}) is outside the {h}×{w} map", path)
        pri = st.priorities
        bad = (is_car & (pri < 1)) | (~is_car & (pri != 0))
        if bad.any():
            i = int(np.argmax(bad))
            rule = "a car's priority must be at least 1" if is_car[i] else "a pedestrian's priority is always 0"
            raise EpisodeFileError(f"array priorities, episode {k}, agent {i} ({names[i]}): priority {int(pri[i])};"
                                   f" {rule}", path)
        for c, flags in st.concepts.items():
            wrong = flags & (is_car != (KNOWN_CONCEPTS[c] == Kind.CAR))
            if wrong.any():
                i = int(np.argmax(wrong))
                raise EpisodeFileError(f"array concepts, episode {k}, agent {i} ({names[i]}): concept {c!r} does "
                                       f"not apply to a {'car' if is_car[i] else 'pedestrian'}", path)


def load_episode_set(mode: SPFMode, path: str | Path | None = None) -> EpisodeSet:
    """The episode set of ``mode`` (its split's shipped file unless ``path``), checked against the mode's map and
    agents (:func:`check_episode_set`)."""
    p = Path(path) if path is not None else default_episode_path(mode)
    if not p.exists():
        raise EpisodeFileError(f"no episode set for SPF {mode.name}/{mode.split} (create it with "
                               f"'python main.py spf make-episodes --mode {mode.name} --split {mode.split}')", p)
    es = read_episode_set(p, mode.config.city.shape)
    check_episode_set(es, mode, p)
    return es
