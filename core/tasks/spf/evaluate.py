"""SPF evaluation: TSR, DSR and Score of a policy on an episode set (docs/reference.md#spf-metrics).

Per episode k of the set: ``reset(options={"episode": k})`` (exact start state, re-seeded generator),
``max_steps = 2 × oracle_step``; while not done and ``step < max_steps``: read the oracle action ``o*`` for the
current observation, ask the policy, record the decision, step. Then

* TSR: 1 if the last step reported ``is_success`` (a step that reaches the goal and violates a rule counts as
  success, as in the reference), else 0; mean over episodes.
* Score: sum of rewards; minus 3 more when ``step ≥ max_steps``; mean over episodes.
* DSR, for the mode's ``eval_actions`` (Stop; expert: Stop, Fast, Slow): per episode and action a,
  ``decided[a] = 1`` if ``o* = a`` at some step; ``ok[a] = 1`` if decided and the policy chose a at every such
  step. ``D[a] = Σ decided``, ``S[a] = Σ ok``. We report **DSR = "Mean Decision Succ" = Σ_a S[a] / Σ_a D[a]**
  (pooled over actions) as the table's DSR, and also the "Average" (mean over a of S[a]/D[a]) and the per-action
  ratios (the paper does not say which of the two it prints).

The policy is a :class:`~core.tasks.spf.policy.Policy` or what ``--policy`` names (``oracle``, ``random``, a policy
file: :mod:`core.tasks.spf.policy_files`). Every action it returns is checked; a wrong value or an exception in the
policy stops the evaluation with a :class:`~core.base.errors.PolicyError` naming the file, the value, the step and
the episode (:func:`~core.tasks.spf.policy.call_policy`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from core.base.codes import ACTION_NAMES
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.policy import Policy, call_policy, policy_name
from core.tasks.spf.policy_files import make_policy

__all__ = ["EpisodeResult", "EvalReport", "evaluate", "run_episode", "episode_score", "episode_result",
           "format_table", "STEP_LIMIT_PENALTY"]

#: subtracted from the score when an episode uses all of its 2x oracle steps (reference main_gym)
STEP_LIMIT_PENALTY = 3.0


@dataclass
class EpisodeResult:
    episode: int
    success: bool
    fail: bool
    steps: int
    max_steps: int
    score: float
    decided: dict[int, bool]
    ok: dict[int, bool]
    actions: list[int] = field(default_factory=list)


@dataclass
class EvalReport:
    mode: str
    split: str
    policy: str
    episodes: list[EpisodeResult]
    eval_actions: tuple[int, ...]

    @property
    def tsr(self) -> float:
        return float(np.mean([e.success for e in self.episodes])) if self.episodes else 0.0

    @property
    def score(self) -> float:
        return float(np.mean([e.score for e in self.episodes])) if self.episodes else 0.0

    def decision_counts(self) -> dict[int, tuple[int, int]]:
        """action → (S succeeded, D decided) summed over episodes."""
        return {a: (sum(e.ok[a] for e in self.episodes), sum(e.decided[a] for e in self.episodes))
                for a in self.eval_actions}

    @property
    def dsr_mean(self) -> float:
        """"Mean Decision Succ": Σ_a S[a] / max(1, Σ_a D[a]) — the DSR this tool reports."""
        c = self.decision_counts()
        return sum(s for s, _ in c.values()) / max(1, sum(d for _, d in c.values()))

    @property
    def dsr_average(self) -> float:
        """"Average Decision Succ": mean over the evaluated actions of S[a] / max(1, D[a])."""
        c = self.decision_counts()
        return float(np.mean([s / max(1, d) for s, d in c.values()])) if c else 0.0

    @property
    def dsr(self) -> float:
        return self.dsr_mean

    def to_dict(self) -> dict:
        return {"mode": self.mode, "split": self.split, "policy": self.policy, "episodes": len(self.episodes),
                "TSR": self.tsr, "DSR": self.dsr, "DSR_mean": self.dsr_mean, "DSR_average": self.dsr_average,
                "Score": self.score,
                "per_action": {ACTION_NAMES[a]: {"succeeded": s, "decided": d}
                               for a, (s, d) in self.decision_counts().items()}}


def episode_score(rewards: Iterable[float], steps: int, max_steps: int) -> float:
    """The score of one episode (docs/reference.md#spf-metrics): the sum of its step rewards, minus
    :data:`STEP_LIMIT_PENALTY` more when ``steps >= max_steps``. Evaluation (:func:`run_episode`) and human play
    (:mod:`core.tasks.spf.session`) both use it."""
    score = 0.0
    for r in rewards:
        score += float(r)
    return score - STEP_LIMIT_PENALTY if steps >= max_steps else score


def episode_result(k: int, actions: Iterable[int], oracle_actions: Iterable[int], rewards: Iterable[float],
                   success: bool, fail: bool, max_steps: int, eval_actions: tuple[int, ...]) -> EpisodeResult:
    """TSR inputs, score and DSR decisions of one episode from its per-step record (``oracle_actions[t]`` = the
    oracle's action on the observation the policy answered with ``actions[t]``); shared by evaluation and human
    play so both are scored identically."""
    actions = [int(a) for a in actions]
    decided = {a: False for a in eval_actions}
    ok = {a: True for a in eval_actions}
    for a, o_star in zip(actions, oracle_actions):
        o_star = int(o_star)
        if o_star in decided:
            decided[o_star] = True
            if a != o_star:
                ok[o_star] = False
    ok = {a: ok[a] and decided[a] for a in eval_actions}
    steps = len(actions)
    return EpisodeResult(int(k), bool(success), bool(fail), steps, int(max_steps),
                         episode_score(rewards, steps, max_steps), decided, ok, actions)


def run_episode(env: SPFEnv, k: int, policy: Policy, eval_actions: tuple[int, ...]) -> EpisodeResult:
    """One evaluation episode (module docstring). A policy that raises or returns anything but an action 0..3
    stops the evaluation with a :class:`~core.base.errors.PolicyError` naming the policy, the value, the step and
    the episode."""
    policy.begin_episode(k)
    obs, info = env.reset(options={"episode": k})
    base = env.unwrapped
    max_steps = 2 * int(base.episodes.state(k).label["oracle_step"])
    where = f"{base.spf.name}/{base.spf.split} episode {k}"
    rewards, actions, oracle = [], [], []
    step = 0
    success = fail = False
    done = False
    while not done and step < max_steps:
        step += 1
        oracle.append(int(base.oracle_action()))
        a = call_policy(policy, obs, env, f"at step {step} of {where}")
        actions.append(a)
        obs, r, term, trunc, info = env.step(a)
        rewards.append(r)
        success, fail = bool(info["is_success"]), bool(info["fail"])
        done = term or trunc or fail
    return episode_result(k, actions, oracle, rewards, success, fail, max_steps, eval_actions)


def evaluate(mode: str, policy_spec: str | Policy = "oracle", split: str = "test", *, seed: int = 0,
             episodes: Sequence[int] | None = None, episode_file: str | None = None,
             progress: Callable[[EpisodeResult], None] | None = None) -> EvalReport:
    """Evaluate a policy (or what ``--policy`` names, the random policy seeded ``seed``) on the mode's episode set
    of ``split``; the report names it by that text, else by its file or name."""
    env = SPFEnv(mode, split, episodes=episode_file)
    ss = env.split_settings
    if ss.eval_horizon is not None:
        env.max_horizon = ss.eval_horizon
    policy = make_policy(policy_spec, env, seed) if isinstance(policy_spec, str) else policy_spec
    name = policy_spec if isinstance(policy_spec, str) else policy_name(policy_spec)
    eval_actions = env.settings.eval_actions
    ks = list(range(len(env.episodes))) if episodes is None else list(episodes)
    results = []
    for k in ks:
        res = run_episode(env, k, policy, eval_actions)
        results.append(res)
        if progress:
            progress(res)
    return EvalReport(env.spf.name, split, str(name), results, eval_actions)


def format_table(reports: list[EvalReport]) -> str:
    """The paper's Table-2 layout: one row per policy, TSR / DSR / Score per mode, plus the DSR details."""
    modes = list(dict.fromkeys(r.mode for r in reports))
    policies = list(dict.fromkeys(r.policy for r in reports))
    by = {(r.policy, r.mode): r for r in reports}
    head1 = f"{'':<14}" + "".join(f"| {m.capitalize():^22}" for m in modes)
    head2 = f"{'Policy':<14}" + "".join(f"| {'TSR':>6} {'DSR':>6} {'Score':>7} " for _ in modes)
    lines = [head1, head2, "-" * len(head2)]
    for pol in policies:
        row = f"{pol[:14]:<14}"
        for m in modes:
            r = by.get((pol, m))
            row += f"| {r.tsr:6.2f} {r.dsr:6.2f} {r.score:7.2f} " if r else f"| {'-':>6} {'-':>6} {'-':>7} "
        lines.append(row)
    lines.append("")
    lines.append("DSR = Mean Decision Succ (Σ succeeded / Σ decided over the evaluated actions); details:")
    for r in reports:
        per = ", ".join(f"{ACTION_NAMES[a]} {s}/{d}" for a, (s, d) in r.decision_counts().items())
        lines.append(f"  {r.policy} {r.mode}/{r.split} ({len(r.episodes)} episodes): DSR mean {r.dsr_mean:.2f}, "
                     f"average {r.dsr_average:.2f}; {per}")
    return "\n".join(lines)

