"""SPF evaluation episode sets: start states shipped as data, and the deterministic procedure that makes them.

File (``configs/spf_episodes/<mode>/<split>.npz``; a stored ZIP of ``.npy`` arrays + ``meta.json``, format tag
``logicity-spf-episodes``, see docs/spf.md). E episodes, N agents, C = len(meta["concepts"]):

===============  ================  ==============================================================================
array            shape / dtype     meaning
===============  ================  ==============================================================================
positions        [E, N, 2] int16   every agent's cell at the start of the episode
headings         [E, N] int8       last move heading (-1 none)
goals            [E, N, 2] int16   current goal
path_index       [E, N] int32      index of the position in the agent's planned path
reach_goal       [E, N] bool       goal-waiting flag (§2.5)
wait             [E, N] int32      goal-waiting counter
priorities       [E, N] int32      priority (the ego's was drawn at reset)
concepts         [E, N, C] bool    concept flags, columns in meta["concepts"] order
plan_cells       [M, 2] int16      all planned paths concatenated
plan_offsets     [E*N+1] int64     path of agent i in episode e = plan_cells[off[e*N+i]:off[e*N+i+1]]
seed             [E] int64         the environment's generator is re-seeded with this after restoring
oracle_step      [E] int32         steps the oracle needed (evaluation allows 2x)
concept          [E] int16         the ego's concept label, index into meta["concept_labels"]
===============  ================  ==============================================================================

Creation (§7.6, adapted; ``python main.py spf make-episodes``): try k = 0, 1, 2, ... with seed
``base_seed * 1_000_000 + k``: build a fresh world from that seed and reset the ego (start, goal, priority,
concept drawn as in training resets for this split), capture the start state, then replay it exactly as an
evaluation would (restore + re-seed) while the oracle drives. Keep the episode when the oracle reaches the goal
within the split's ``max_horizon``, chose the target action (Stop) at least once, and the quota of the ego's
concept is not full yet. Quotas split the episode count evenly over the concepts of the split's ``reset_dist``
(remainder to the first ones). Because acceptance ran the very replay that evaluation runs, the oracle scores
TSR = 1.00 on every shipped set.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..codes import ACTION_NAMES, Action
from ..errors import EpisodeFileError
from ..world import KNOWN_CONCEPTS
from .archive import read_archive, write_archive
from .spf_settings import ROOT, SPFMode, load_spf_mode
from .spf_state import StartState

__all__ = ["EpisodeSet", "default_episode_path", "load_episode_set", "save_episode_set", "make_episode_set",
           "quotas_for", "FORMAT", "VERSION"]

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
    arrays = {
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


def read_episode_set(path: str | Path) -> EpisodeSet:
    a, meta = read_archive(path, FORMAT, VERSION)
    need = ("positions", "headings", "goals", "path_index", "reach_goal", "wait", "priorities", "concepts",
            "plan_cells", "plan_offsets", "seed", "oracle_step", "concept")
    missing = [k for k in need if k not in a]
    if missing:
        raise EpisodeFileError(f"episode set lacks arrays: {', '.join(missing)}", path)
    e, n = a["positions"].shape[:2]
    for k in ("headings", "path_index", "reach_goal", "wait", "priorities"):
        if a[k].shape != (e, n):
            raise EpisodeFileError(f"array {k} has shape {a[k].shape}, expected {(e, n)}", path)
    concepts = list(meta.get("concepts", []))
    labels = list(meta.get("concept_labels", []))
    off = a["plan_offsets"]
    if a["concepts"].shape != (e, n, len(concepts)) or len(off) != e * n + 1 or int(off[-1]) != len(a["plan_cells"]) \
            or np.any(np.diff(off) < 1) or len(a["seed"]) != e:
        raise EpisodeFileError("episode set arrays are inconsistent", path)
    if len(a["concept"]) and (int(a["concept"].max()) >= len(labels) or int(a["concept"].min()) < 0):
        raise EpisodeFileError("concept label index out of range", path)
    cells = a["plan_cells"].astype(np.int32)
    states = []
    for k in range(e):
        paths = tuple(cells[off[k * n + i]: off[k * n + i + 1]] for i in range(n))
        for i, p in enumerate(paths):
            if int(a["path_index"][k, i]) >= len(p) or not np.array_equal(p[int(a["path_index"][k, i])],
                                                                          a["positions"][k, i]):
                raise EpisodeFileError(f"episode {k}: agent {i}'s position is not on its path", path)
        states.append(StartState(
            a["positions"][k].astype(np.int32), a["headings"][k].astype(np.int8), a["goals"][k].astype(np.int32),
            a["path_index"][k].astype(np.int32), a["reach_goal"][k].astype(bool), a["wait"][k].astype(np.int32),
            paths, a["priorities"][k].astype(np.int32),
            {c: a["concepts"][k, :, j].astype(bool) for j, c in enumerate(concepts)},
            int(a["seed"][k]),
            {"concept": labels[int(a["concept"][k])], "oracle_step": int(a["oracle_step"][k]), "index": k}))
    return EpisodeSet(states, meta, str(path))


def load_episode_set(mode: SPFMode, path: str | Path | None = None) -> EpisodeSet:
    """The episode set of ``mode`` (its split's shipped file unless ``path``), checked against the agents."""
    p = Path(path) if path is not None else default_episode_path(mode)
    if not p.exists():
        raise EpisodeFileError(f"no episode set for SPF {mode.name}/{mode.split} (create it with "
                               f"'python main.py spf make-episodes --mode {mode.name} --split {mode.split}')", p)
    es = read_episode_set(p)
    names = mode.config.agents.table().names
    if list(es.meta.get("agents", [])) != list(names):
        raise EpisodeFileError(f"episode set was made for agents {es.meta.get('agents')}, the {mode.split} agent "
                               f"file of {mode.name} has {list(names)}", p)
    return es


# ---- creation ----------------------------------------------------------------------------------------------------

def make_episode_set(mode: str, split: str, count: int | None = None, base_seed: int = 0,
                     target_action: int = int(Action.STOP), max_tries: int = 20000,
                     progress: Callable[[int, int, int], None] | None = None) -> EpisodeSet:
    """Run the creation procedure (module docstring). ``progress(accepted, total, tries)`` is called per try."""
    from .spf import SPFEnv

    spf = load_spf_mode(mode, split)
    total = DEFAULT_COUNTS.get(split, 100) if count is None else int(count)
    env = SPFEnv(mode, split)
    quotas = quotas_for(spf.split_settings.concepts, total)
    have = {c: 0 for c in quotas}
    states: list[StartState] = []
    tries = 0
    while len(states) < total:
        if tries >= max_tries:
            raise RuntimeError(f"only {len(states)} of {total} episodes after {max_tries} tries "
                               f"(quotas {have} of {quotas})")
        seed = base_seed * SEED_STRIDE + tries
        tries += 1
        env.reset(seed=seed)
        concept = env.ego_concept
        if have.get(concept, 0) >= quotas.get(concept, 0):
            if progress:
                progress(len(states), total, tries)
            continue
        state = StartState.capture(env.sim, seed, {"concept": concept})
        steps, ok, used = _oracle_rollout(env, state, target_action)
        if ok and used:
            have[concept] += 1
            states.append(StartState(state.positions, state.headings, state.goals, state.path_index,
                                     state.reach_goal, state.wait, state.paths, state.priorities, state.concepts,
                                     seed, {"concept": concept, "oracle_step": steps, "index": len(states)}))
        if progress:
            progress(len(states), total, tries)
    meta = {
        "mode": spf.name, "split": split, "agents": list(spf.config.agents.table().names),
        "ego": spf.settings.ego, "base_seed": int(base_seed), "seed_stride": SEED_STRIDE, "tries": tries,
        "quotas": quotas, "target_action": ACTION_NAMES[target_action],
        "max_horizon": env.max_horizon,
        "command": f"python main.py spf make-episodes --mode {spf.name} --split {split} --n {total} "
                   f"--seed {base_seed}",
        "agent_file": Path(spf.config.files["agents"]).name,
    }
    return EpisodeSet(states, meta)


def _oracle_rollout(env, state: StartState, target_action: int) -> tuple[int, bool, bool]:
    """Replay ``state`` as an evaluation does, the oracle driving: (steps, success, target action used)."""
    env.reset(options={"start_state": state})
    used = False
    steps = 0
    while True:
        a = int(env.oracle_action())
        used = used or a == target_action
        _, _, term, trunc, info = env.step(a)
        steps += 1
        if term or trunc:
            return steps, bool(info["is_success"]) and not info["fail"], used
