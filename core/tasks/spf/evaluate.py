"""SPF policies and evaluation: TSR, DSR and Score on an episode set (docs/reference.md#spf-metrics).

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

Policies are callables ``policy(obs, env) -> action``. Built in: ``oracle`` (the expert rules) and
``random`` (uniform, its own generator seeded per episode so runs are reproducible and the environment's
generator is untouched). A policy file (``--policy PATH``), checked against the mode's observation size and the
4 actions when loaded:

* ``.npz`` or ``.safetensors`` — recommended: an MLP as plain weight arrays ``W0, b0, W1, b1, ...`` (``Wk``
  [in, out], ``bk`` [out]; W0 takes the observation, the last layer gives 4 scores), ReLU between layers, argmax
  of the last; every layer needs both arrays (save zeros for no biases). Only numbers are read (never pickled
  objects), so such a file is safe to load from anywhere.
* ``.pt`` — a TorchScript module (``torch.jit.save``) mapping a [1, D] float tensor to [1, 4] scores, loaded with
  ``torch.jit.load`` only (a pickled ``torch.save`` checkpoint is refused, never unpickled).
* ``.py`` — defines ``policy(obs)``/``policy(obs, env)``, or ``make_policy(env)`` returning one. **The file's code
  runs with your permissions** (like ``python FILE``): only load files you trust (the CLI prints a notice).

Every action a policy returns is checked (an int 0..3), and a model policy's action scores must be finite (NaN
or infinite scores, e.g. from a TorchScript module or an overflowing MLP, have no meaningful argmax); a wrong
value or an exception in the policy stops the evaluation with a :class:`~core.base.errors.PolicyError` naming the
file, the value, the step and the episode.
"""
from __future__ import annotations

import importlib.util
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core.base.codes import ACTION_NAMES
from core.base.errors import LogiCityError, PolicyError

__all__ = ["Policy", "oracle_policy", "RandomPolicy", "load_policy", "make_policy", "check_action", "call_policy",
           "policy_name", "EpisodeResult", "EvalReport", "evaluate", "run_episode", "episode_score",
           "episode_result", "format_table", "PY_POLICY_NOTICE", "STEP_LIMIT_PENALTY"]

Policy = Callable[[np.ndarray, Any], int]
#: subtracted from the score when an episode uses all of its 2x oracle steps (reference main_gym)
STEP_LIMIT_PENALTY = 3.0


def oracle_policy(obs: np.ndarray, env) -> int:
    """The mode's expert rules on the current observation (docs/reference.md#spf-oracle)."""
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


#: the four actions (Slow, Normal, Fast, Stop) every policy chooses from
NUM_ACTIONS = 4
_ACTIONS_TEXT = "an int 0..3 (0 Slow, 1 Normal, 2 Fast, 3 Stop)"
#: a one-line notice shown (CLI: stderr) whenever a .py policy is loaded
PY_POLICY_NOTICE = "note: {path} is Python code and runs with your permissions — only load policy files you trust"


def _first_sentence(exc: BaseException) -> str:
    """The first line / sentence of an exception's message (library messages can run to a paragraph)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.split(". ")[0].rstrip(".")


def _obs_size(env) -> int | None:
    if env is None:
        return None
    space = getattr(getattr(env, "unwrapped", env), "observation_space", None)
    shape = getattr(space, "shape", None)
    return int(shape[0]) if shape else None


def _mlp_from_arrays(arrays: dict[str, np.ndarray], path: Path, obs_size: int | None, kind: str) -> list:
    """Check MLP arrays ``W0, b0, W1, b1, ...`` (shapes chain from the observation size to 4 actions) and return
    the float32 layers; every problem is a :class:`PolicyError` naming the file and the array."""
    import re

    names = sorted(arrays)
    # layer numbers have at most 6 digits: a name of thousands of digits is refused here, before int() (which
    # raises ValueError beyond 4300 digits) or range(int(...)) could be reached
    bad = [n for n in names if not re.fullmatch(r"[Wb](0|[1-9][0-9]{0,5})", n)]
    if bad:
        raise PolicyError(f"unexpected array {bad[0]!r:.60} in the {kind} policy (it holds only the MLP arrays W0, "
                          f"b0, W1, b1, ... up to 6-digit layer numbers: weights [in, out], biases [out])", path)
    count = sum(1 for n in names if n.startswith("W"))
    if count == 0:
        raise PolicyError(f"a {kind} policy needs arrays W0, b0, W1, b1, ... (an MLP: weights [in, out], biases "
                          f"[out]); found {', '.join(names) or 'no arrays'}", path)
    have = {int(n[1:]) for n in names if n.startswith("W")}
    for n in names:
        if int(n[1:]) >= count:
            gap = min(set(range(count + 1)) - have)  # some layer below count is missing: one index >= count
            what = f"W{int(n[1:])} without W{gap}" if n.startswith("W") else f"{n} without W{n[1:]}"
            raise PolicyError(f"array {n} does not belong to a layer ({what}; layers must be W0..W{count - 1})",
                              path)
    layers = []
    width = obs_size
    for k in range(count):
        w = arrays[f"W{k}"]
        if w.dtype.kind not in "fiu" or w.ndim != 2:
            raise PolicyError(f"array W{k} must be a 2-D numeric matrix [in, out], got {w.dtype} {w.shape}", path)
        if width is not None and w.shape[0] != width:
            src = "the observation size of this mode" if k == 0 else f"W{k - 1}'s output size"
            raise PolicyError(f"array W{k} has shape {w.shape}: its first dimension must be {width} ({src})", path)
        w32 = np.asarray(w, np.float32)
        if not np.all(np.isfinite(w32)):
            raise PolicyError(f"array W{k} holds NaN or infinite values", path)
        b = arrays.get(f"b{k}")
        if b is None:
            raise PolicyError(f"array b{k} (the biases of layer {k}, shape ({w.shape[1]},)) is missing; every layer "
                              f"needs its weights Wk and biases bk (save zeros for a layer without biases)", path)
        if b.dtype.kind not in "fiu" or b.shape != (w.shape[1],):
            raise PolicyError(f"array b{k} has shape {b.shape} ({b.dtype}), expected ({w.shape[1]},) numbers "
                              f"(W{k} is {w.shape})", path)
        b32 = np.asarray(b, np.float32)
        if not np.all(np.isfinite(b32)):
            raise PolicyError(f"array b{k} holds NaN or infinite values", path)
        layers.append((w32, b32))
        width = w.shape[1]
    if width != NUM_ACTIONS:
        raise PolicyError(f"the last layer W{count - 1} has {width} outputs; a policy scores the {NUM_ACTIONS} "
                          f"actions (Slow, Normal, Fast, Stop)", path)
    return layers


class NonFiniteScores(ValueError):
    """A policy model produced NaN or infinite action scores (its argmax would be meaningless)."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = np.asarray(scores, np.float64).reshape(-1)
        super().__init__(f"non-finite action scores {np.array2string(self.scores, precision=3)}")


def checked_scores(scores: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(scores)):
        raise NonFiniteScores(scores)
    return scores


class _MLPPolicy:
    """An MLP from plain weight arrays (``.npz`` or ``.safetensors``): ReLU between layers, argmax of the last.
    Only numbers are read — no code, no pickled objects."""

    def __init__(self, path: Path, obs_size: int | None = None) -> None:
        self.source = str(path)
        suffix = path.suffix.lower()
        arrays = _read_safetensors(path) if suffix == ".safetensors" else _read_npz(path)
        self.layers = _mlp_from_arrays(arrays, path, obs_size, suffix)

    def __call__(self, obs: np.ndarray, env) -> int:
        x = np.asarray(obs, np.float32)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, as non-finite scores
            for i, (w, b) in enumerate(self.layers):
                x = x @ w + b
                if i + 1 < len(self.layers):
                    x = np.maximum(x, 0.0)
        return int(np.argmax(checked_scores(x)))


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    import zipfile

    if not zipfile.is_zipfile(path):
        raise PolicyError("not an .npz archive (numpy.savez writes one: a ZIP of .npy arrays W0, b0, W1, b1, ...)",
                          path)
    arrays = {}
    try:
        with np.load(path, allow_pickle=False) as z:  # plain arrays only, never pickled objects
            for k in z.files:
                try:
                    arrays[k] = z[k]
                    if not isinstance(arrays[k], np.ndarray):   # numpy returns a member that is no .npy as bytes
                        raise PolicyError(f"member {k!r} of the archive is not a .npy array (numpy.savez writes "
                                          f"W0.npy, b0.npy, ...)", path)
                except ValueError as exc:
                    if "pickle" in str(exc).lower():
                        raise PolicyError(f"array {k!r} holds Python objects (pickled data), which are never "
                                          f"loaded; save plain numeric arrays", path) from None
                    raise PolicyError(f"array {k!r} cannot be read: {exc}", path) from None
    except PolicyError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged archive: zipfile/numpy raise many types
        raise PolicyError(f"cannot read the .npz policy: {type(exc).__name__}: {exc}", path) from None
    return arrays


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise PolicyError("reading .safetensors policies needs the safetensors package (pip install safetensors); "
                          "or save the same arrays with numpy.savez as .npz", path) from None
    try:
        return dict(load_file(str(path)))
    except Exception as exc:  # noqa: BLE001 - the library raises its own error types for damaged files
        raise PolicyError(f"cannot read the .safetensors policy: {type(exc).__name__}: {exc}", path) from None


class _TorchScriptPolicy:
    """A TorchScript module (``torch.jit.save``): [1, D] float tensor → [1, 4] scores. Loaded with
    ``torch.jit.load`` only; a pickled checkpoint (``torch.save`` of a model or state dict) is refused."""

    def __init__(self, path: Path, obs_size: int | None = None) -> None:
        try:
            import torch
        except ImportError:
            raise PolicyError("a .pt policy needs PyTorch; or export the MLP weights as .npz", path) from None
        self.torch = torch
        self.source = str(path)
        try:
            self.module = torch.jit.load(str(path), map_location="cpu")
        except Exception as exc:  # noqa: BLE001 - torch raises RuntimeError/ValueError/... for bad archives
            raise PolicyError(f"not a TorchScript module ({_first_sentence(exc)}); save one with "
                              f"torch.jit.save(torch.jit.script(model), path) — pickled torch.save checkpoints "
                              f"are never loaded", path) from None
        self.module.eval()
        if obs_size is not None:   # one trial call: input size and the 4 action scores
            try:
                out = self._scores(np.zeros(obs_size, np.float32))
            except Exception as exc:  # noqa: BLE001 - any failure of the user's module
                raise PolicyError(f"the TorchScript module fails on a [1, {obs_size}] observation: "
                                  f"{_first_sentence(exc)}",
                                  path) from None
            if out.numel() != NUM_ACTIONS:
                raise PolicyError(f"the TorchScript module returns {tuple(out.shape)} for a [1, {obs_size}] "
                                  f"observation; expected [1, {NUM_ACTIONS}] action scores", path)
            scores = out.detach().to(self.torch.float64).reshape(-1).numpy()
            if not np.all(np.isfinite(scores)):
                raise PolicyError(f"the TorchScript module returns non-finite action scores "
                                  f"{np.array2string(scores, precision=3)} for a [1, {obs_size}] observation of "
                                  f"zeros", path)

    def _scores(self, obs: np.ndarray):
        with self.torch.no_grad():
            out = self.module(self.torch.as_tensor(np.asarray(obs, np.float32))[None])
        if not isinstance(out, self.torch.Tensor):
            raise TypeError(f"the module returned {type(out).__name__}, not a tensor")
        return out

    def __call__(self, obs: np.ndarray, env) -> int:
        out = self._scores(obs)
        if out.numel() != NUM_ACTIONS:
            raise ValueError(f"the module returned shape {tuple(out.shape)}, expected [1, {NUM_ACTIONS}]")
        scores = checked_scores(out.detach().to(self.torch.float64).reshape(-1).numpy())
        return int(np.argmax(scores))


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


def _user_code_error(exc: BaseException, path: Path) -> tuple[str, int | None]:
    """The problem and line (in ``path``) of an exception raised by a policy file's code."""
    import traceback

    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve() == path.resolve():
        return f"syntax error: {exc.msg}", exc.lineno
    line = None
    for fr in traceback.extract_tb(exc.__traceback__):
        if fr.filename and Path(fr.filename).resolve() == path.resolve():
            line = fr.lineno
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}{': ' + text if text else ''}", line


def _load_py(p: Path, env) -> Policy:
    """Run a ``.py`` policy file (it is code: only files the user trusts; the CLI prints PY_POLICY_NOTICE)."""
    spec = importlib.util.spec_from_file_location(f"spf_policy_{abs(hash(str(p.resolve())))}", p)
    if spec is None or spec.loader is None:
        raise PolicyError("cannot import the policy file", p)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001 - the user's module may raise anything
        msg, line = _user_code_error(exc, p)
        raise PolicyError(f"running the policy file failed: {msg}", p, line) from None
    if hasattr(mod, "make_policy"):
        if not callable(mod.make_policy):
            raise PolicyError("make_policy in the policy file is not a function", p)
        try:
            fn = mod.make_policy(env)
        except Exception as exc:  # noqa: BLE001
            msg, line = _user_code_error(exc, p)
            raise PolicyError(f"make_policy(env) failed: {msg}", p, line) from None
        if not callable(fn):
            raise PolicyError(f"make_policy(env) returned {type(fn).__name__}, not a callable policy(obs[, env])", p)
    elif hasattr(mod, "policy"):
        fn = mod.policy
        if not callable(fn):
            raise PolicyError(f"policy in the policy file is a {type(fn).__name__}, not a function", p)
    else:
        raise PolicyError("a .py policy must define policy(obs[, env]) or make_policy(env)", p)
    pol = _adapt(fn)
    try:
        pol.source = str(p)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        pol = _Named(pol, str(p))
    return pol


class _Named:
    def __init__(self, fn: Callable, source: str) -> None:
        self.fn, self.source = fn, source

    def __call__(self, obs, env):
        return self.fn(obs, env)


#: policy file suffixes: weights only (safe to load from anywhere), TorchScript, Python code
WEIGHT_SUFFIXES = (".npz", ".safetensors")
TORCHSCRIPT_SUFFIXES = (".pt", ".pth", ".ts")


def load_policy(path: str | Path, env=None) -> Policy:
    """A policy from a file (see the module docstring for the formats). With ``env``, the file is checked against
    its observation size and the 4 actions when loaded. Problems raise :class:`PolicyError` naming the file."""
    p = Path(path)
    if not p.exists():
        raise PolicyError(f"policy file not found: {p}", p)
    if not p.is_file():
        raise PolicyError("the policy path is not a file", p)
    suffix = p.suffix.lower()
    if suffix in WEIGHT_SUFFIXES:
        return _MLPPolicy(p, _obs_size(env))
    if suffix in TORCHSCRIPT_SUFFIXES:
        return _TorchScriptPolicy(p, _obs_size(env))
    if suffix == ".py":
        return _load_py(p, env)
    raise PolicyError(f"unknown policy file type {suffix!r} (.npz or .safetensors MLP weights, TorchScript .pt, "
                      f"or .py code)", p)


def policy_name(policy: Any) -> str:
    """How messages name a policy: its file, else its name."""
    return str(getattr(policy, "source", None) or getattr(policy, "__name__", None) or type(policy).__name__)


def check_action(value: Any, policy: Any, where: str = "") -> int:
    """``value`` as an action 0..3, else a :class:`PolicyError` saying which policy returned what, and ``where``
    (e.g. "at step 3 of easy/val episode 0"). Accepted: Python and numpy integers, and integer arrays holding one
    value (e.g. a ``model.predict`` output)."""
    a = value
    if isinstance(a, np.ndarray) and a.size == 1 and a.dtype.kind in "iu":
        a = a.reshape(-1)[0]
    if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) and 0 <= int(a) < NUM_ACTIONS:
        return int(a)
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    src = getattr(policy, "source", None)
    who = "the policy" if src else f"policy {policy_name(policy)}"
    raise PolicyError(f"{who} returned {shown} ({type(value).__name__}){' ' + where if where else ''}; an action "
                      f"must be {_ACTIONS_TEXT}", src)


def call_policy(policy: Policy, obs: np.ndarray, env, where: str = "") -> int:
    """Ask ``policy`` for an action and check it (:func:`check_action`); an exception raised by the policy
    becomes a :class:`PolicyError` naming the policy (its file) and ``where``."""
    try:
        raw = policy(obs, env)
    except LogiCityError:
        raise
    except NonFiniteScores as exc:  # any model policy (.npz, .safetensors, TorchScript): no argmax of NaN
        src = getattr(policy, "source", None)
        who = "the policy" if src else f"policy {policy_name(policy)}"
        raise PolicyError(f"{who} computed {exc}{' ' + where if where else ''}; an action needs finite scores",
                          src) from None
    except Exception as exc:  # noqa: BLE001 - user code may raise anything
        src = getattr(policy, "source", None)
        msg, line = _user_code_error(exc, Path(src)) if src else (f"{type(exc).__name__}: {exc}", None)
        who = "the policy" if src else f"policy {policy_name(policy)}"
        raise PolicyError(f"{who} raised {msg}{' ' + where if where else ''}", src,
                          line if src and src.endswith(".py") else None) from None
    return check_action(raw, policy, where)


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


def episode_score(rewards, steps: int, max_steps: int) -> float:
    """The score of one episode (docs/reference.md#spf-metrics): the sum of its step rewards, minus
    :data:`STEP_LIMIT_PENALTY` more when ``steps >= max_steps``. Evaluation (:func:`run_episode`) and human play
    (:mod:`.spf_session`) both use it."""
    score = 0.0
    for r in rewards:
        score += float(r)
    return score - STEP_LIMIT_PENALTY if steps >= max_steps else score


def episode_result(k: int, actions, oracle_actions, rewards, success: bool, fail: bool, max_steps: int,
                   eval_actions: tuple[int, ...]) -> EpisodeResult:
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


def run_episode(env, k: int, policy: Policy, eval_actions: tuple[int, ...]) -> EpisodeResult:
    """One evaluation episode (module docstring). A policy that raises or returns anything but an action 0..3
    stops the evaluation with a :class:`PolicyError` naming the policy, the value, the step and the episode."""
    if hasattr(policy, "reseed"):
        policy.reseed(k)  # type: ignore[attr-defined]
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
             episodes: list[int] | None = None, episode_file: str | None = None,
             progress: Callable[[EpisodeResult], None] | None = None) -> EvalReport:
    """Evaluate a policy on the mode's episode set of ``split``."""
    from core.tasks.spf.env import SPFEnv

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

