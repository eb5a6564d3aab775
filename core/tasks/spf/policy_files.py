"""SPF policies from files (``spf eval --policy PATH``), each checked against the mode's observation size and the
4 actions when loaded, every problem a :class:`~core.base.errors.PolicyError` naming the file:

* ``.npz`` or ``.safetensors`` — recommended: an MLP as plain weight arrays ``W0, b0, W1, b1, ...`` (``Wk``
  [in, out], ``bk`` [out]; W0 takes the observation, the last layer gives 4 scores), ReLU between layers, argmax
  of the last; every layer needs both arrays (save zeros for no biases). Only numbers are read (never pickled
  objects), so such a file is safe to load from anywhere.
* ``.pt`` — a TorchScript module (``torch.jit.save``) mapping a [1, D] float tensor to [1, 4] scores, loaded with
  ``torch.jit.load`` only (a pickled ``torch.save`` checkpoint is refused, never unpickled).
* ``.py`` — defines ``policy(obs)``/``policy(obs, env)``, or ``make_policy(env)`` returning one (or a
  :class:`~core.tasks.spf.policy.Policy`). **The file's code runs with your permissions** (like ``python FILE``):
  only load files you trust (the CLI prints :data:`PY_POLICY_NOTICE`).

:func:`make_policy` resolves what ``--policy`` names: ``oracle``, ``random`` or such a file.
"""
from __future__ import annotations

import importlib.util
import inspect
import re
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core.base.errors import PolicyError
from core.tasks.spf.policy import (
    NUM_ACTIONS,
    FunctionPolicy,
    OraclePolicy,
    Policy,
    RandomPolicy,
    checked_scores,
    user_code_error,
)

__all__ = ["load_policy", "make_policy", "MLPPolicy", "TorchScriptPolicy", "PyFilePolicy", "PY_POLICY_NOTICE",
           "WEIGHT_SUFFIXES", "TORCHSCRIPT_SUFFIXES"]

#: a one-line notice shown (CLI: stderr) whenever a .py policy is loaded
PY_POLICY_NOTICE = "note: {path} is Python code and runs with your permissions — only load policy files you trust"
#: policy file suffixes: weights only (safe to load from anywhere), TorchScript, Python code
WEIGHT_SUFFIXES = (".npz", ".safetensors")
TORCHSCRIPT_SUFFIXES = (".pt", ".pth", ".ts")


def _first_sentence(exc: BaseException) -> str:
    """The first line / sentence of an exception's message (library messages can run to a paragraph)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.split(". ")[0].rstrip(".")


def _obs_size(env: Any | None) -> int | None:
    """The observation size of an SPF environment (or a wrapper of one); None without one."""
    return None if env is None else int(env.unwrapped.observation_space.shape[0])


def _mlp_from_arrays(arrays: dict[str, np.ndarray], path: Path, obs_size: int | None,
                     kind: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Check MLP arrays ``W0, b0, W1, b1, ...`` (shapes chain from the observation size to 4 actions) and return
    the float32 layers; every problem is a :class:`PolicyError` naming the file and the array."""
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


def _read_npz(path: Path) -> dict[str, np.ndarray]:
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


class MLPPolicy(Policy):
    """An MLP from plain weight arrays (``.npz`` or ``.safetensors``): ReLU between layers, argmax of the last.
    Only numbers are read — no code, no pickled objects."""

    def __init__(self, path: Path, obs_size: int | None = None) -> None:
        self.source = self.name = str(path)
        suffix = path.suffix.lower()
        arrays = _read_safetensors(path) if suffix == ".safetensors" else _read_npz(path)
        self.layers = _mlp_from_arrays(arrays, path, obs_size, suffix)

    def __call__(self, obs: np.ndarray, env: Any | None) -> int:
        x = np.asarray(obs, np.float32)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, as non-finite scores
            for i, (w, b) in enumerate(self.layers):
                x = x @ w + b
                if i + 1 < len(self.layers):
                    x = np.maximum(x, 0.0)
        return int(np.argmax(checked_scores(x)))


class TorchScriptPolicy(Policy):
    """A TorchScript module (``torch.jit.save``): [1, D] float tensor → [1, 4] scores. Loaded with
    ``torch.jit.load`` only; a pickled checkpoint (``torch.save`` of a model or state dict) is refused."""

    def __init__(self, path: Path, obs_size: int | None = None) -> None:
        try:
            import torch
        except ImportError:
            raise PolicyError("a .pt policy needs PyTorch; or export the MLP weights as .npz", path) from None
        self.torch = torch
        self.source = self.name = str(path)
        try:
            self.module = torch.jit.load(str(path), map_location="cpu")
        except Exception as exc:  # noqa: BLE001 - torch raises RuntimeError/ValueError/... for bad archives
            raise PolicyError(f"not a TorchScript module ({_first_sentence(exc)}); save one with "
                              f"torch.jit.save(torch.jit.script(model), path) — pickled torch.save checkpoints "
                              f"are never loaded", path) from None
        self.module.eval()
        if obs_size is not None:   # one trial call: input size and the 4 action scores
            try:
                out = self._output(np.zeros(obs_size, np.float32))
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

    def _output(self, obs: np.ndarray):
        with self.torch.no_grad():
            out = self.module(self.torch.as_tensor(np.asarray(obs, np.float32))[None])
        if not isinstance(out, self.torch.Tensor):
            raise TypeError(f"the module returned {type(out).__name__}, not a tensor")
        return out

    def __call__(self, obs: np.ndarray, env: Any | None) -> int:
        out = self._output(obs)
        if out.numel() != NUM_ACTIONS:
            raise ValueError(f"the module returned shape {tuple(out.shape)}, expected [1, {NUM_ACTIONS}]")
        scores = checked_scores(out.detach().to(self.torch.float64).reshape(-1).numpy())
        return int(np.argmax(scores))


class PyFilePolicy(Policy):
    """The policy a ``.py`` file defines, named by its file (messages about it give the file and the line of
    the user's code); what the file's policy offers beyond the action (scores, a per-episode start) is passed
    through."""

    def __init__(self, inner: Policy, path: Path) -> None:
        self.inner = inner
        self.source = self.name = str(path)

    def __call__(self, obs: np.ndarray, env: Any | None) -> Any:
        return self.inner(obs, env)

    def begin_episode(self, episode: int) -> None:
        self.inner.begin_episode(episode)

    def scores(self, obs: np.ndarray) -> np.ndarray | None:
        return self.inner.scores(obs)

    def probabilities(self, obs: np.ndarray) -> np.ndarray | None:
        return self.inner.probabilities(obs)


def _two_arguments(fn: Callable) -> Callable[[np.ndarray, Any], Any]:
    """``fn`` as ``f(obs, env)``: a function of the observation alone is given the observation only."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= 2:
        return fn
    return lambda obs, env: fn(obs)


def _load_py(p: Path, env: Any | None) -> PyFilePolicy:
    """Run a ``.py`` policy file (it is code: only files the user trusts; the CLI prints PY_POLICY_NOTICE)."""
    spec = importlib.util.spec_from_file_location(f"spf_policy_{abs(hash(str(p.resolve())))}", p)
    if spec is None or spec.loader is None:
        raise PolicyError("cannot import the policy file", p)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001 - the user's module may raise anything
        msg, line = user_code_error(exc, p)
        raise PolicyError(f"running the policy file failed: {msg}", p, line) from None
    names = vars(mod)
    if "make_policy" in names:
        if not callable(names["make_policy"]):
            raise PolicyError("make_policy in the policy file is not a function", p)
        try:
            fn = names["make_policy"](env)
        except Exception as exc:  # noqa: BLE001
            msg, line = user_code_error(exc, p)
            raise PolicyError(f"make_policy(env) failed: {msg}", p, line) from None
        if not callable(fn):
            raise PolicyError(f"make_policy(env) returned {type(fn).__name__}, not a callable policy(obs[, env])", p)
    elif "policy" in names:
        fn = names["policy"]
        if not callable(fn):
            raise PolicyError(f"policy in the policy file is a {type(fn).__name__}, not a function", p)
    else:
        raise PolicyError("a .py policy must define policy(obs[, env]) or make_policy(env)", p)
    inner = fn if isinstance(fn, Policy) else FunctionPolicy(_two_arguments(fn), str(p), str(p))
    return PyFilePolicy(inner, p)


def load_policy(path: str | Path, env: Any | None = None) -> Policy:
    """A policy from a file (see the module docstring for the formats). With ``env``, the file is checked against
    its observation size and the 4 actions when loaded. Problems raise :class:`PolicyError` naming the file."""
    p = Path(path)
    if not p.exists():
        raise PolicyError(f"policy file not found: {p}", p)
    if not p.is_file():
        raise PolicyError("the policy path is not a file", p)
    suffix = p.suffix.lower()
    if suffix in WEIGHT_SUFFIXES:
        return MLPPolicy(p, _obs_size(env))
    if suffix in TORCHSCRIPT_SUFFIXES:
        return TorchScriptPolicy(p, _obs_size(env))
    if suffix == ".py":
        return _load_py(p, env)
    raise PolicyError(f"unknown policy file type {suffix!r} (.npz or .safetensors MLP weights, TorchScript .pt, "
                      f"or .py code)", p)


def make_policy(spec: str, env: Any | None = None, seed: int = 0) -> Policy:
    """``oracle``, ``random`` (seeded ``seed``) or a policy file path."""
    if spec == "oracle":
        return OraclePolicy()
    if spec == "random":
        return RandomPolicy(seed)
    return load_policy(spec, env)
