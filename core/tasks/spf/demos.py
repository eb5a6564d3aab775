"""SPF demonstrations in a Minari-style layout (oracle collection and human play share it).

File: a stored ZIP of ``.npy`` arrays + ``meta.json`` (format tag ``logicity-spf-demos``; ``numpy.load`` reads
the arrays). Like a Minari dataset, every episode ``i`` is a group of arrays (T = its steps):

=================================  ===========  ==================================================================
member                             shape        meaning
=================================  ===========  ==================================================================
``episode_{i}/observations``       [T+1, D] f4  observations, the reset one first (D = 85 / 140 / 205)
``episode_{i}/actions``            [T] i8       actions taken (0 Slow, 1 Normal, 2 Fast, 3 Stop)
``episode_{i}/rewards``            [T] f8       rewards
``episode_{i}/terminations``       [T] bool     Gymnasium ``terminated``
``episode_{i}/truncations``        [T] bool     Gymnasium ``truncated``
``episode_{i}/infos/<key>``        [T+1]        per-step info values, the reset info first (as Minari stores
                                                infos): oracle_action, is_success, fail, action_cost, rule,
                                                overtime, realised_action, step
=================================  ===========  ==================================================================

``meta.json`` holds the Minari-like dataset attributes (``dataset_id``, ``env_id``, ``total_episodes``,
``total_steps``, spaces, ``action_names``, ``observation_layout``) plus ``episodes``: per episode its seed,
start concept, success/fail and (for episode-set runs) the episode index.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core.base.codes import ACTION_NAMES
from core.base.errors import EpisodeFileError
from core.io.archive import read_archive, write_archive
from core.tasks.spf.env import SPFEnv

__all__ = ["Trajectory", "TrajectoryRecorder", "save_demonstrations", "load_demonstrations", "collect_oracle",
           "FORMAT", "VERSION", "INFO_KEYS"]

FORMAT = "logicity-spf-demos"
VERSION = 1
INFO_KEYS = ("oracle_action", "is_success", "fail", "action_cost", "rule", "overtime", "realised_action", "step")
_INFO_DTYPES = {"oracle_action": np.int8, "is_success": bool, "fail": bool, "action_cost": np.float64,
                "rule": np.float64, "overtime": np.float64, "realised_action": np.int8, "step": np.int32}


@dataclass
class Trajectory:
    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    terminations: np.ndarray
    truncations: np.ndarray
    infos: dict[str, np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.actions)


def _info_row(info: dict, reset: bool) -> dict[str, Any]:
    comp = info.get("reward_components", {})
    return {"oracle_action": info.get("oracle_action", -1), "is_success": bool(info.get("is_success", False)),
            "fail": bool(info.get("fail", False)), "action_cost": 0.0 if reset else comp.get("action_cost", 0.0),
            "rule": 0.0 if reset else comp.get("rule", 0.0), "overtime": 0.0 if reset else comp.get("overtime", 0.0),
            "realised_action": info.get("realised_action", -1), "step": info.get("step", 0)}


class TrajectoryRecorder:
    """Accumulates one episode from ``reset`` / ``step`` results (used by collection and by human play)."""

    def __init__(self, obs: np.ndarray, info: dict, meta: dict | None = None) -> None:
        self.obs = [np.asarray(obs, np.float32)]
        self.actions: list[int] = []
        self.rewards: list[float] = []
        self.term: list[bool] = []
        self.trunc: list[bool] = []
        self.infos = [_info_row(info, True)]
        self.meta = dict(meta or {})

    def add(self, action: int, obs: np.ndarray, reward: float, terminated: bool, truncated: bool,
            info: dict) -> None:
        self.actions.append(int(action))
        self.obs.append(np.asarray(obs, np.float32))
        self.rewards.append(float(reward))
        self.term.append(bool(terminated))
        self.trunc.append(bool(truncated))
        self.infos.append(_info_row(info, False))

    def truncate(self, steps: int) -> None:
        """Keep only the first ``steps`` steps (human play scrubbed back and continued)."""
        del self.actions[steps:], self.rewards[steps:], self.term[steps:], self.trunc[steps:]
        del self.obs[steps + 1:], self.infos[steps + 1:]

    def __len__(self) -> int:
        return len(self.actions)

    def finish(self) -> Trajectory:
        infos = {k: np.array([row[k] for row in self.infos], dtype=_INFO_DTYPES[k]) for k in INFO_KEYS}
        meta = dict(self.meta)
        meta.update(steps=len(self.actions), success=bool(self.infos[-1]["is_success"]),
                    fail=bool(self.infos[-1]["fail"]), total_reward=float(sum(self.rewards)))
        return Trajectory(np.stack(self.obs).astype(np.float32), np.array(self.actions, np.int64),
                          np.array(self.rewards, np.float64), np.array(self.term, bool), np.array(self.trunc, bool),
                          infos, meta)


def save_demonstrations(path: str | Path, trajectories: list[Trajectory], meta: dict,
                        reproducible: bool = False) -> Path:
    arrays: dict[str, np.ndarray] = {}
    for i, tr in enumerate(trajectories):
        g = f"episode_{i}"
        arrays[f"{g}/observations"] = tr.observations
        arrays[f"{g}/actions"] = tr.actions
        arrays[f"{g}/rewards"] = tr.rewards
        arrays[f"{g}/terminations"] = tr.terminations
        arrays[f"{g}/truncations"] = tr.truncations
        for k, v in tr.infos.items():
            arrays[f"{g}/infos/{k}"] = v
    m = dict(meta)
    m.update(total_episodes=len(trajectories), total_steps=int(sum(len(t) for t in trajectories)),
             action_names=list(ACTION_NAMES), episodes=[t.meta for t in trajectories])
    return write_archive(path, arrays, m, FORMAT, VERSION, reproducible)


def _meta_int(meta: dict, key: str, path, default: int | None = None) -> int:
    v = meta.get(key, default)
    if v is None:
        raise EpisodeFileError(f"meta.json lacks the field {key!r}", path)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise EpisodeFileError(f"meta.json field {key!r} must be a whole number >= 0, got {v!r}", path)
    return v


def _check_trajectory(g: str, obs, act, rew, term, trunc, infos, obs_size: int | None, path) -> None:
    """Shapes, dtypes and values of one episode's arrays (docs: the table in the module docstring)."""
    if act.ndim != 1:
        raise EpisodeFileError(f"array {g}/actions has shape {act.shape}, expected [T]", path)
    t = len(act)
    if obs.ndim != 2 or obs.shape[0] != t + 1 or obs.dtype.kind not in "fiub":
        raise EpisodeFileError(f"array {g}/observations has shape {obs.shape} ({obs.dtype}), expected "
                               f"[{t + 1}, D] numbers ({t} actions + the reset observation)", path)
    if obs_size is not None and obs.shape[1] != obs_size:
        raise EpisodeFileError(f"array {g}/observations has {obs.shape[1]} values per observation, meta.json's "
                               f"observation_space says {obs_size}", path)
    if act.dtype.kind not in "iu":
        raise EpisodeFileError(f"array {g}/actions must hold integers, not {act.dtype}", path)
    if t and (int(act.min()) < 0 or int(act.max()) > 3):
        j = int(np.argmax((act < 0) | (act > 3)))
        raise EpisodeFileError(f"array {g}/actions, step {j}: action {int(act[j])} is outside 0..3 (Slow, Normal, "
                               f"Fast, Stop)", path)
    if rew.shape != (t,) or rew.dtype.kind not in "fiu":
        raise EpisodeFileError(f"array {g}/rewards has shape {rew.shape} ({rew.dtype}), expected [{t}] numbers",
                               path)
    if not np.all(np.isfinite(rew)):
        raise EpisodeFileError(f"array {g}/rewards holds NaN or infinite values", path)
    for name, arr in (("terminations", term), ("truncations", trunc)):
        if arr.shape != (t,) or arr.dtype != np.bool_:
            raise EpisodeFileError(f"array {g}/{name} has shape {arr.shape} ({arr.dtype}), expected [{t}] booleans",
                                   path)
    for k, v in infos.items():
        if v.shape != (t + 1,):
            raise EpisodeFileError(f"array {g}/infos/{k} has shape {v.shape}, expected [{t + 1}] (one per "
                                   f"observation)", path)
        want = np.dtype(_INFO_DTYPES[k])
        if (want == np.bool_) != (v.dtype == np.bool_) or v.dtype.kind not in "fiub":
            raise EpisodeFileError(f"array {g}/infos/{k} has dtype {v.dtype}, expected {want}", path)
        if k in ("oracle_action", "realised_action") and (int(v.min()) < -1 or int(v.max()) > 3):
            raise EpisodeFileError(f"array {g}/infos/{k} holds {int(v[(v < -1) | (v > 3)][0])}, outside -1..3", path)


def load_demonstrations(path: str | Path) -> tuple[list[Trajectory], dict]:
    """Read a demonstration file; its meta.json fields and every array's shape, dtype and values are checked
    (:class:`EpisodeFileError` naming the file, the field or array and the episode)."""
    arrays, meta = read_archive(path, FORMAT, VERSION)
    groups = {k.split("/", 1)[0] for k in arrays}
    n = _meta_int(meta, "total_episodes", path, len([g for g in groups if g.startswith("episode_")]))
    eps_meta = meta.get("episodes", [{}] * n)
    if not isinstance(eps_meta, list) or not all(isinstance(m, dict) for m in eps_meta):
        raise EpisodeFileError(f"meta.json field 'episodes' must be a list of per-episode objects, got "
                               f"{type(eps_meta).__name__}", path)
    if len(eps_meta) not in (0, n):
        raise EpisodeFileError(f"meta.json lists {len(eps_meta)} episodes, total_episodes says {n}", path)
    obs_size = None
    space = meta.get("observation_space")
    if space is not None:
        shape = space.get("shape") if isinstance(space, dict) else None
        if not (isinstance(shape, list) and len(shape) == 1 and isinstance(shape[0], int) and shape[0] > 0):
            raise EpisodeFileError(f"meta.json field 'observation_space' must give a shape [D], got {space!r}", path)
        obs_size = shape[0]
    extra = sorted(g for g in groups if g.startswith("episode_") and g[8:].isdigit() and int(g[8:]) >= n)
    if extra:
        raise EpisodeFileError(f"the file holds {extra[0]} but meta.json says total_episodes = {n}", path)
    out = []
    total = 0
    for i in range(n):
        g = f"episode_{i}"
        try:
            obs, act = arrays[f"{g}/observations"], arrays[f"{g}/actions"]
            rew, term, trunc = arrays[f"{g}/rewards"], arrays[f"{g}/terminations"], arrays[f"{g}/truncations"]
            infos = {k: arrays[f"{g}/infos/{k}"] for k in INFO_KEYS if f"{g}/infos/{k}" in arrays}
        except KeyError as exc:
            raise EpisodeFileError(f"demonstration file lacks {exc.args[0]}", path) from None
        _check_trajectory(g, obs, act, rew, term, trunc, infos, obs_size, path)
        total += len(act)
        out.append(Trajectory(obs, act, rew, term, trunc, infos, dict(eps_meta[i]) if i < len(eps_meta) else {}))
    if "total_steps" in meta and _meta_int(meta, "total_steps", path) != total:
        raise EpisodeFileError(f"meta.json field 'total_steps' is {meta['total_steps']}, the episodes hold {total} "
                               f"steps", path)
    return out, meta


def dataset_meta(env, policy: str, **extra) -> dict:
    base = env.unwrapped
    return {"dataset_id": f"logicity/spf-{base.spf.name}/{policy}-v0",
            "env_id": f"LogiCity/SPF-{base.spf.name}-v0", "mode": base.spf.name, "split": base.spf.split,
            "policy": policy, "observation_space": {"type": "Box", "low": 0.0, "high": 1.0,
                                                    "shape": [base.layout.size], "dtype": "float32"},
            "action_space": {"type": "Discrete", "n": 4},
            "observation_layout": [list(x) for x in base.layout.describe()],
            "entities": base.fov, **extra}


def oracle_trajectory(env, seed: int | None, index: int):
    """One episode of ``env`` (reset with ``seed``, None = continue the stream) driven by the oracle until done,
    recorded with ``index`` as its episode number (``spf collect`` and the ``spf`` exporter share it)."""
    obs, info = env.reset(seed=seed)
    rec = TrajectoryRecorder(obs, info, {"index": index, "concept": info["concept"], "priority": info["priority"],
                                         "path_length": info["path_length"]})
    done = False
    while not done:
        a = int(env.oracle_action())
        obs, r, term, trunc, info = env.step(a)
        rec.add(a, obs, r, term, trunc, info)
        done = term or trunc
    return rec.finish()


def collect_oracle(mode: str, n: int, split: str = "train", seed: int = 0,
                   progress: Callable[[Trajectory], None] | None = None) -> tuple[list[Trajectory], dict]:
    """``n`` oracle trajectories: ``reset(seed=seed)`` once, then plain resets (the background world keeps
    running between episodes, as in the reference's training), the oracle acting until done."""
    env = SPFEnv(mode, split)
    trajs = []
    for i in range(n):
        tr = oracle_trajectory(env, seed if i == 0 else None, i)
        trajs.append(tr)
        if progress:
            progress(tr)
    return trajs, dataset_meta(env, "oracle", seed=int(seed), collection="reset(seed) once, then reset()")
