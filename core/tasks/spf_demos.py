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

from ..codes import ACTION_NAMES
from ..errors import EpisodeFileError
from .archive import read_archive, write_archive

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


def save_demonstrations(path: str | Path, trajectories: list[Trajectory], meta: dict) -> Path:
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
    return write_archive(path, arrays, m, FORMAT, VERSION)


def load_demonstrations(path: str | Path) -> tuple[list[Trajectory], dict]:
    arrays, meta = read_archive(path, FORMAT, VERSION)
    n = int(meta.get("total_episodes", 0))
    eps_meta = meta.get("episodes", [{}] * n)
    out = []
    for i in range(n):
        g = f"episode_{i}"
        try:
            obs, act = arrays[f"{g}/observations"], arrays[f"{g}/actions"]
            rew, term, trunc = arrays[f"{g}/rewards"], arrays[f"{g}/terminations"], arrays[f"{g}/truncations"]
            infos = {k: arrays[f"{g}/infos/{k}"] for k in INFO_KEYS if f"{g}/infos/{k}" in arrays}
        except KeyError as exc:
            raise EpisodeFileError(f"demonstration file lacks {exc.args[0]}", path) from None
        t = len(act)
        if len(obs) != t + 1 or len(rew) != t or len(term) != t or len(trunc) != t or \
                any(len(v) != t + 1 for v in infos.values()):
            raise EpisodeFileError(f"{g}: array lengths do not match ({t} actions)", path)
        out.append(Trajectory(obs, act, rew, term, trunc, infos, dict(eps_meta[i]) if i < len(eps_meta) else {}))
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


def collect_oracle(mode: str, n: int, split: str = "train", seed: int = 0,
                   progress: Callable[[Trajectory], None] | None = None) -> tuple[list[Trajectory], dict]:
    """``n`` oracle trajectories: ``reset(seed=seed)`` once, then plain resets (the background world keeps
    running between episodes, as in the reference's training), the oracle acting until done."""
    from .spf import SPFEnv

    env = SPFEnv(mode, split)
    trajs = []
    for i in range(n):
        obs, info = env.reset(seed=seed if i == 0 else None)
        rec = TrajectoryRecorder(obs, info, {"index": i, "concept": info["concept"], "priority": info["priority"],
                                             "path_length": info["path_length"]})
        done = False
        while not done:
            a = int(env.oracle_action())
            obs, r, term, trunc, info = env.step(a)
            rec.add(a, obs, r, term, trunc, info)
            done = term or trunc
        tr = rec.finish()
        trajs.append(tr)
        if progress:
            progress(tr)
    return trajs, dataset_meta(env, "oracle", seed=int(seed), collection="reset(seed) once, then reset()")
