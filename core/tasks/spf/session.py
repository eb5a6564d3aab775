"""Human play of an SPF episode (Qt-free; the studio's SPF mode drives it): pick a mode and an episode, act with
Slow/Normal/Fast/Stop, see reward, violations and steps left, scrub back, save the run as a demonstration.

The human is judged exactly like an evaluated policy (docs/reference.md#spf-metrics): episode ``k`` of the split's
set starts from its stored state, the step budget is ``2 × oracle_step``, and score, success and decisions come from
the very functions evaluation uses (:func:`~core.tasks.spf.evaluate.episode_result`,
:func:`~core.tasks.spf.evaluate.episode_score`: the −3 applies whenever the run used its whole budget, even when its last
step reached the goal). The simulation records the episode (``record=True``), so any past step can be shown again;
actions are always taken at the newest step. The run is saved in the demonstration format of
``spf collect`` (docs/spf.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.base.codes import ACTION_NAMES, Action
from core.tasks.spf.demos import TrajectoryRecorder, dataset_meta, save_demonstrations
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.evaluate import EpisodeResult, episode_result, episode_score
from core.view.scene import MapScene, build_scene

if TYPE_CHECKING:
    from core.sim.episode import EpisodeBuffer

__all__ = ["KEY_MAP", "PlayRecord", "PlaySession"]

#: keyboard key → action (shown on screen by the studio)
KEY_MAP: dict[str, Action] = {"1": Action.SLOW, "2": Action.NORMAL, "3": Action.FAST, "4": Action.STOP}


@dataclass(frozen=True)
class PlayRecord:
    """What happened in one step of the human run (index ``step`` = the state it led to)."""

    step: int
    action: int
    oracle_action: int            # what the expert rules would have done on the same observation
    reward: float
    components: dict
    violations: tuple[dict, ...]  # rule, clause label, text (the clause with its witness)
    success: bool
    fail: bool
    out_of_steps: bool
    steps_left: int
    realised_action: int


@dataclass
class PlaySession:
    mode: str = "easy"
    split: str = "test"
    env: SPFEnv = None  # type: ignore[assignment]  # None: __post_init__ makes the env of mode and split
    episode: int | None = None
    records: list[PlayRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.env is None:
            self.env = SPFEnv(self.mode, self.split, record=True)
        self._recorder: TrajectoryRecorder | None = None
        self._oracle_at: list[int] = []
        self.max_steps = 0

    # ---- episode ---------------------------------------------------------------------------------------------
    @property
    def num_episodes(self) -> int:
        return len(self.env.episodes)

    def start(self, episode: int) -> None:
        env = self.env
        obs, info = env.reset(options={"episode": int(episode)})
        if env.split_settings.eval_horizon is not None:
            env.max_horizon = env.split_settings.eval_horizon
        self.episode = int(episode)
        self.max_steps = 2 * int(env.episodes.state(self.episode).label["oracle_step"])
        self.records = []
        self._oracle_at = [int(info["oracle_action"])]
        self._recorder = TrajectoryRecorder(obs, info, {"index": self.episode, "episode": self.episode,
                                                        "concept": info["concept"], "priority": info["priority"],
                                                        "path_length": info["path_length"], "policy": "human"})

    @property
    def started(self) -> bool:
        return self._recorder is not None

    @property
    def num_steps(self) -> int:
        return len(self.records)

    @property
    def done(self) -> bool:
        if not self.records:
            return False
        r = self.records[-1]
        return r.success or r.fail or r.out_of_steps

    @property
    def outcome(self) -> str:
        if not self.started:
            return "not started"
        if not self.records or not self.done:
            return "running"
        r = self.records[-1]
        return "success" if r.success else "violation" if r.fail else "out of steps"

    @property
    def total_reward(self) -> float:
        """The evaluation score of the run so far (sum of rewards, −3 once all ``max_steps`` steps are used:
        the same :func:`~core.tasks.spf.evaluate.episode_score` as ``spf eval``)."""
        return episode_score([r.reward for r in self.records], len(self.records), self.max_steps)

    def result(self) -> EpisodeResult:
        """The run scored exactly as :func:`~core.tasks.spf.evaluate.run_episode` scores a policy (TSR, score, DSR
        decisions for the mode's ``eval_actions``)."""
        if not self.started:
            raise RuntimeError("start an episode first")
        assert self.episode is not None   # start() set it with the recorder
        last = self.records[-1] if self.records else None
        return episode_result(self.episode, [r.action for r in self.records],
                              [r.oracle_action for r in self.records], [r.reward for r in self.records],
                              bool(last and last.success), bool(last and last.fail), self.max_steps,
                              self.env.settings.eval_actions)

    @property
    def steps_left(self) -> int:
        return self.max_steps - self.num_steps

    def oracle_hint(self) -> Action:
        return Action(self._oracle_at[-1])

    # ---- acting ------------------------------------------------------------------------------------------------
    def act(self, action: int | Action) -> PlayRecord:
        recorder = self._recorder
        if recorder is None:   # not started
            raise RuntimeError("start an episode first")
        if self.done:
            raise RuntimeError(f"the episode is over ({self.outcome})")
        a = int(action)
        oracle = self._oracle_at[-1]
        obs, r, term, trunc, info = self.env.step(a)
        recorder.add(a, obs, r, term, trunc, info)
        self._oracle_at.append(int(info["oracle_action"]))
        t = len(self.records) + 1
        out = not (info["is_success"] or info["fail"]) and (t >= self.max_steps or trunc)
        rec = PlayRecord(t, a, oracle, float(r), dict(info["reward_components"]), tuple(info["violations"]),
                         bool(info["is_success"]), bool(info["fail"]), bool(out), self.max_steps - t,
                         int(info["realised_action"]))
        self.records.append(rec)
        return rec

    def key(self, text: str) -> PlayRecord | None:
        """Act on a key press ("1".."4"); other keys are ignored."""
        a = KEY_MAP.get(text)
        return None if a is None else self.act(a)

    # ---- review ---------------------------------------------------------------------------------------------------
    def record(self, k: int) -> PlayRecord | None:
        """The step that led to state ``k`` (None for the start state)."""
        return self.records[k - 1] if 1 <= k <= len(self.records) else None

    def scene(self, k: int, **kwargs) -> MapScene:
        """The map scene of state ``k`` (0..num_steps) with the ego selected."""
        buf = self._buffer()
        k = max(0, min(int(k), buf.num_steps))
        kwargs.setdefault("paths", "selected")
        return build_scene(buf, k, selected=self.env.ego, grounder=self.env.sim.grounder, **kwargs)

    def ego_position(self, k: int) -> np.ndarray:
        return np.asarray(self._buffer().snapshot(k).positions[self.env.ego])

    def _buffer(self) -> EpisodeBuffer:
        buf = self.env.sim.buffer
        assert buf is not None, "the session's env must record (SPFEnv(..., record=True))"
        return buf

    def save(self, path: str | Path) -> Path:
        """Save the run (so far) as a one-episode demonstration file (same format as ``spf collect``)."""
        recorder = self._recorder
        if recorder is None:   # not started
            raise RuntimeError("nothing to save: no episode was started")
        tr = recorder.finish()
        tr.meta.update(outcome=self.outcome, score=self.total_reward)
        meta = dataset_meta(self.env, "human", episode_set=self.split, episode=self.episode)
        return save_demonstrations(path, [tr], meta)

    @staticmethod
    def describe_action(a: int) -> str:
        key = next(k for k, v in KEY_MAP.items() if int(v) == int(a))
        return f"{ACTION_NAMES[int(a)]} [{key}]"
