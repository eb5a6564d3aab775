"""SPF policies and evaluation: TSR, DSR and Score on an episode set (reference §7.7).

Per episode k of the set: ``reset(options={"episode": k})`` (exact start state, re-seeded generator),
``max_steps = 2 × oracle_step``; while not done and ``step < max_steps``: read the oracle action ``o*`` for the
current observation, ask the policy, record the decision, step. Then

* TSR: 1 if the last step reported ``is_success`` (a step that reaches the goal and violates a rule counts as
  success, as in the reference, §14.5), else 0; mean over episodes.
* Score: sum of rewards; minus 3 more when ``step ≥ max_steps``; mean over episodes.
* DSR, for the mode's ``eval_actions`` (Stop; expert: Stop, Fast, Slow): per episode and action a,
  ``decided[a] = 1`` if ``o* = a`` at some step; ``ok[a] = 1`` if decided and the policy chose a at every such
  step. ``D[a] = Σ decided``, ``S[a] = Σ ok``. We report **DSR = "Mean Decision Succ" = Σ_a S[a] / Σ_a D[a]**
  (pooled over actions) as the table's DSR, and also the "Average" (mean over a of S[a]/D[a]) and the per-action
  ratios (the paper does not say which of the two it prints, §14.6).

Policies are callables ``policy(obs, env) -> action``. Built in: ``oracle`` (the expert rules, §7.5) and
``random`` (uniform, its own generator seeded per episode so runs are reproducible and the environment's
generator is untouched). A policy file (``--policy PATH``): ``.py`` (defines ``policy(obs)``/``policy(obs,
env)``, or ``make_policy(env)`` returning one; runs the file's code like ``python FILE``), ``.npz`` (an MLP:
arrays ``W0, b0, W1, b1, ...``, ReLU between layers, argmax of the last) or ``.pt`` (TorchScript module mapping
a [1, D] float tensor to [1, 4] scores).
"""
from __future__ import annotations

import importlib.util
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..codes import ACTION_NAMES
from ..errors import ConfigError

__all__ = ["Policy", "oracle_policy", "RandomPolicy", "load_policy", "make_policy", "EpisodeResult",
           "EvalReport", "evaluate", "run_episode", "format_table"]

Policy = Callable[[np.ndarray, Any], int]
#: subtracted from the score when an episode uses all of its 2x oracle steps (reference main_gym)
STEP_LIMIT_PENALTY = 3.0


def oracle_policy(obs: np.ndarray, env) -> int:
    """The mode's expert rules on the current observation (§7.5)."""
    return int(env.unwrapped.oracle_action())


class RandomPolicy:
    """Uniform over the four actions, from its own generator (re-seeded per episode by :func:`run_episode`)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)

    def reseed(self, episode: int) -> None:
        self.rng = np.random.default_rng([self.seed, int(episode)])

    def __call__(self, obs: np.ndarray, env) -> int:
        return int(self.rng.integers(4))


class _MLPPolicy:
    def __init__(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as z:  # plain arrays only, never pickled objects
                arrays = {k: z[k] for k in z.files}
        except (ValueError, OSError) as exc:
            raise ConfigError(f"cannot read the .npz policy: {exc}", path) from None
        self.layers = []
        k = 0
        while f"W{k}" in arrays:
            w, b = np.asarray(arrays[f"W{k}"], np.float32), np.asarray(arrays.get(f"b{k}", 0.0), np.float32)
            self.layers.append((w, b))
            k += 1
        if not self.layers:
            raise ConfigError("an .npz policy needs arrays W0, b0, W1, b1, ... (an MLP)", path)

    def __call__(self, obs: np.ndarray, env) -> int:
        x = np.asarray(obs, np.float32)
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i + 1 < len(self.layers):
                x = np.maximum(x, 0.0)
        return int(np.argmax(x))


class _TorchScriptPolicy:
    def __init__(self, path: Path) -> None:
        import torch

        self.torch = torch
        self.module = torch.jit.load(str(path), map_location="cpu")
        self.module.eval()

    def __call__(self, obs: np.ndarray, env) -> int:
        with self.torch.no_grad():
            out = self.module(self.torch.as_tensor(np.asarray(obs, np.float32))[None])
        return int(out.reshape(-1).argmax().item())


def _adapt(fn: Callable) -> Policy:
    """Accept ``f(obs)`` or ``f(obs, env)``."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= 2:
        return fn  # type: ignore[return-value]
    return lambda obs, env: fn(obs)


def load_policy(path: str | Path, env=None) -> Policy:
    """A policy from a file (see the module docstring for the formats)."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"policy file not found: {p}")
    suffix = p.suffix.lower()
    if suffix == ".npz":
        return _MLPPolicy(p)
    if suffix in (".pt", ".pth", ".ts"):
        return _TorchScriptPolicy(p)
    if suffix == ".py":
        spec = importlib.util.spec_from_file_location(f"spf_policy_{abs(hash(str(p.resolve())))}", p)
        if spec is None or spec.loader is None:
            raise ConfigError("cannot import the policy file", p)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if hasattr(mod, "make_policy"):
            return _adapt(mod.make_policy(env))
        if hasattr(mod, "policy"):
            return _adapt(mod.policy)
        raise ConfigError("a .py policy must define policy(obs[, env]) or make_policy(env)", p)
    raise ConfigError(f"unknown policy file type {suffix!r} (.py, .npz or .pt)", p)


def make_policy(spec: str, env=None, seed: int = 0) -> Policy:
    """``oracle``, ``random`` or a policy file path."""
    if spec == "oracle":
        return oracle_policy
    if spec == "random":
        return RandomPolicy(seed)
    return load_policy(spec, env)


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


def run_episode(env, k: int, policy: Policy, eval_actions: tuple[int, ...]) -> EpisodeResult:
    """One evaluation episode (module docstring)."""
    if hasattr(policy, "reseed"):
        policy.reseed(k)  # type: ignore[attr-defined]
    obs, info = env.reset(options={"episode": k})
    base = env.unwrapped
    max_steps = 2 * int(base.episodes.state(k).label["oracle_step"])
    decided = {a: False for a in eval_actions}
    ok = {a: True for a in eval_actions}
    score = 0.0
    step = 0
    success = fail = False
    actions = []
    done = False
    while not done and step < max_steps:
        step += 1
        o_star = int(base.oracle_action())
        a = int(policy(obs, env))
        actions.append(a)
        if o_star in decided:
            decided[o_star] = True
            if a != o_star:
                ok[o_star] = False
        obs, r, term, trunc, info = env.step(a)
        score += r
        success, fail = bool(info["is_success"]), bool(info["fail"])
        done = term or trunc or fail
    if step >= max_steps:
        score -= STEP_LIMIT_PENALTY
    ok = {a: ok[a] and decided[a] for a in eval_actions}
    return EpisodeResult(k, success, fail, step, max_steps, score, decided, ok, actions)


def evaluate(mode: str, policy_spec: str | Policy = "oracle", split: str = "test", *, seed: int = 0,
             episodes: list[int] | None = None, episode_file: str | None = None,
             progress: Callable[[EpisodeResult], None] | None = None) -> EvalReport:
    """Evaluate a policy on the mode's episode set of ``split``."""
    from .spf import SPFEnv

    env = SPFEnv(mode, split, episodes=episode_file)
    ss = env.split_settings
    if ss.eval_horizon is not None:
        env.max_horizon = ss.eval_horizon
    policy = make_policy(policy_spec, env, seed) if isinstance(policy_spec, str) else policy_spec
    name = policy_spec if isinstance(policy_spec, str) else getattr(policy_spec, "__name__", "policy")
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

