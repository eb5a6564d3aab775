"""A trained policy driving one SPF episode, recorded step by step for the studio's Models panel (plain data, no
Qt): what the model saw (the view's entities and the facts true in its observation), its scores and action, the
oracle's action on the same observation, rewards and violations. The episode is scored by the same function as
``spf eval`` (:func:`~core.tasks.spf.evaluate.episode_result`), so the panel's TSR/DSR are the evaluation's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from core.base.codes import ACTION_NAMES
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.evaluate import EpisodeResult, episode_result
from core.tasks.spf.learning.run import env_layout
from core.tasks.spf.policy import Policy, call_policy

__all__ = ["ModelStep", "ModelEpisode", "run_model_episode", "observation_facts"]


@dataclass(frozen=True)
class ModelStep:
    step: int                      # 1-based, as in spf eval's messages
    model_action: int
    oracle_action: int
    scores: tuple[float, ...]
    probabilities: tuple[float, ...] | None
    entities: tuple[str, ...]      # the observation's entities (ego first, PH = placeholder)
    facts: tuple[str, ...]         # predicates true in the observation, with entity names
    reward: float
    violations: tuple[str, ...]    # violated task rules (name: clause text)
    position: tuple[int, int] | None = None

    @property
    def disagrees(self) -> bool:
        return self.model_action != self.oracle_action


@dataclass
class ModelEpisode:
    mode: str
    split: str
    episode: int
    policy: str
    steps: list[ModelStep] = field(default_factory=list)
    success: bool = False
    fail: bool = False
    result: EpisodeResult | None = None   # TSR / DSR inputs, score

    def disagreement_steps(self) -> list[int]:
        return [s.step for s in self.steps if s.disagrees]

    def violation_steps(self) -> list[int]:
        return [s.step for s in self.steps if s.violations]

    def summary(self) -> str:
        r = self.result
        assert r is not None, "summary() of an episode that was not run to its end"
        status = "reached the goal" if self.success else ("violated a rule" if self.fail else "out of steps")
        return (f"{self.policy} on {self.mode}/{self.split} episode {self.episode}: {status} after {len(self.steps)} "
                f"steps, score {r.score:.2f}, {len(self.disagreement_steps())} disagreements with the oracle")


def observation_facts(obs: np.ndarray, layout: list, names: list[str], n: int) -> tuple[str, ...]:
    """The predicates true in an observation vector as text (``IsCar(Car_1)``, ``HigherPri(Car_3, Car_1)``)."""
    out = []
    for pred, off, ar in layout:
        if ar == 1:
            out += [f"{pred}({names[i]})" for i in range(n) if obs[off + i] > 0.5]
        elif ar == 2:
            out += [f"{pred}({names[i]}, {names[j]})" for i in range(n) for j in range(n)
                    if obs[off + i * n + j] > 0.5]
    return tuple(out)


def run_model_episode(policy: Policy, mode: str, split: str, k: int,
                      cancelled: Callable[[], bool] | None = None) -> ModelEpisode:
    """Let ``policy`` (usually a trained run, :class:`~core.tasks.spf.learning.run.TrainedPolicy`) drive episode
    ``k`` of the mode's ``split`` set under the evaluation rules (2 × oracle steps, evaluation horizon), recording
    every step."""
    env = SPFEnv(mode, split)
    if env.split_settings.eval_horizon is not None:
        env.max_horizon = env.split_settings.eval_horizon
    layout = env_layout(env)
    obs, info = env.reset(options={"episode": k})
    max_steps = 2 * int(env.episodes.state(k).label["oracle_step"])
    ep = ModelEpisode(env.spf.name, split, k, policy.name)
    actions, oracle, rewards = [], [], []
    done = False
    t = 0
    while not done and t < max_steps:
        if cancelled and cancelled():
            break
        t += 1
        o_star = int(env.oracle_action())
        names = env.view_entities
        a = call_policy(policy, obs, env, f"at step {t} of {env.spf.name}/{split} episode {k}")
        scores = policy.scores(obs)
        probs = policy.probabilities(obs)
        facts = observation_facts(obs, layout, names, env.fov)
        row, col = env.sim.positions[env.ego]
        pos = (int(row), int(col))
        obs, r, term, trunc, info = env.step(a)
        viol = tuple(f"{v.get('rule', '?')}: {v.get('text') or v.get('clause', '')}" for v in info["violations"])
        ep.steps.append(ModelStep(t, a, o_star, () if scores is None else tuple(float(x) for x in scores),
                                  None if probs is None else tuple(float(p) for p in probs),
                                  tuple(names), facts, float(r), viol, pos))
        actions.append(a)
        oracle.append(o_star)
        rewards.append(r)
        ep.success, ep.fail = bool(info["is_success"]), bool(info["fail"])
        done = term or trunc or ep.fail
    ep.result = episode_result(k, actions, oracle, rewards, ep.success, ep.fail, max_steps,
                               env.settings.eval_actions)
    return ep


ACTIONS = tuple(ACTION_NAMES[a] for a in range(4))
