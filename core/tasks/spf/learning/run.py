"""A trained SPF run on disk: ``DIR/model.safetensors`` (the :class:`~core.tasks.spf.networks.PolicyNet` weights)
and ``DIR/config.yaml`` (what rebuilds and judges it). No pickle anywhere: the structure is data, the weights are
numbers.

``config.yaml``::

    format: logicity-spf-policy        # version 1
    algo: nlm-bc                       # mlp-bc gnn-bc nlm-bc dqn ppo a2c nlm-dqn
    mode: easy
    observation: {size: 85, entities: 5, layout: [[IsPedestrian, 0, 1], ...]}   # predicate, offset, arity
    architecture: {extractor: nlm, hidden: [], scores: logits, ...}
    training: {steps, seed, ... (the settings: core/tasks/spf/learning/config.py), wall_seconds, best_step, ...}
    metrics: {val: {TSR, DSR, Score, ...}, test: {...}, history: [[step, val TSR, val Score, mean reward], ...]}

:func:`load_run` refuses a run whose mode or observation layout differs from the environment it should drive,
saying what differs.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from core.base.errors import PolicyError
from core.io.fileio import atomic_write_bytes, atomic_write_text
from core.io.yamlio import LocatedDict, dump_yaml, is_mapping, load_yaml
from core.tasks.spf.policy import ModelPolicy, checked_scores

__all__ = ["FORMAT", "VERSION", "MODEL_FILE", "CONFIG_FILE", "save_run", "read_config", "read_config_document",
           "load_run", "check_compatible", "TrainedPolicy", "env_layout", "is_run_dir", "write_config"]

FORMAT = "logicity-spf-policy"
VERSION = 1
MODEL_FILE = "model.safetensors"
CONFIG_FILE = "config.yaml"


def env_layout(env: Any) -> list[list]:
    """The observation layout of an SPF env (or a wrapper of one) as ``[[predicate, offset, arity], ...]``."""
    base = env.unwrapped
    return [[name, int(off), int(ar)] for name, (off, ar) in base.layout.blocks.items()]


def is_run_dir(path: str | Path) -> bool:
    p = Path(path)
    return p.is_dir() and (p / CONFIG_FILE).is_file()


def write_config(out: str | Path, config: dict) -> Path:
    """Write ``config`` as the folder ``out``'s ``config.yaml`` (atomically)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return atomic_write_text(out / CONFIG_FILE, dump_yaml(config))


def save_run(out: str | Path, net, config: dict) -> Path:
    """Write the network's weights (atomically) and the config into the folder ``out``."""
    from safetensors.torch import save

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}
    atomic_write_bytes(out / MODEL_FILE, save(state, metadata={"format": FORMAT, "algo": str(config.get("algo"))}))
    write_config(out, config)
    return out


def read_config(path: str | Path) -> dict:
    """The run's config as plain data, checked for the fields a load needs (errors name the file)."""
    return _plain(read_config_document(path))


def read_config_document(path: str | Path) -> LocatedDict:
    """The run's config as read (its keys keep their lines, for errors that point at one), checked for the fields
    a load needs; ``path`` is the run folder or its ``config.yaml``."""
    p = Path(path)
    cfg_path = p / CONFIG_FILE if p.is_dir() else p
    if not cfg_path.is_file():
        raise PolicyError(f"no {CONFIG_FILE} here: a trained run is a folder with {MODEL_FILE} and {CONFIG_FILE} "
                          f"(python main.py spf train ... --out DIR)", p)
    cfg = load_yaml(cfg_path)
    if not is_mapping(cfg) or cfg.get("format") != FORMAT:
        raise PolicyError(f"not a trained SPF run (format must be {FORMAT!r})", cfg_path)
    if int(cfg.get("version", 0)) > VERSION:
        raise PolicyError(f"run format version {cfg.get('version')} is newer than this tool reads ({VERSION})",
                          cfg_path)
    for key in ("algo", "mode", "observation", "architecture"):
        if key not in cfg:
            raise PolicyError(f"config field {key!r} is missing", cfg_path)
    return cfg


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def check_compatible(cfg: dict, env: Any, source: str | Path) -> None:
    """Refuse a run trained for another mode or observation layout than ``env``'s."""
    base = env.unwrapped
    mode = base.spf.name
    if cfg["mode"] != mode:
        raise PolicyError(f"this policy was trained for SPF mode {cfg['mode']!r}, not {mode!r}: its observation "
                          f"means something else there; train one for {mode!r} (spf train --mode {mode})", source)
    want = env_layout(base)
    have = [list(x) for x in cfg["observation"].get("layout", [])]
    if have != want:
        diff = next((f"{h} vs {w}" for h, w in zip(have, want) if h != w),
                    f"{len(have)} predicates vs {len(want)}")
        raise PolicyError(f"this policy was trained on another observation layout than mode {mode!r} has "
                          f"(first difference, trained vs now: {diff}); retrain it for this layout", source)


class TrainedPolicy(ModelPolicy):
    """A run as a policy: the action is the argmax of the scores; ``scores(obs)`` gives the 4 Q-values or logits,
    ``probabilities(obs)`` a softmax of logits (``None`` for Q-values). Scores are memoised per observation (the
    network is deterministic and the same views recur most steps)."""

    MEMO_LIMIT = 100_000

    def __init__(self, net, config: dict, source: str | Path) -> None:
        self.net = net.eval()
        self.config = config
        self.source = str(source)
        self.algo = config["algo"]
        self.mode = config["mode"]
        self.layout = [list(x) for x in config["observation"].get("layout", [])]
        self.name = f"{self.algo} ({Path(self.source).name})"
        self.kind = config["architecture"].get("scores", "logits")
        self._memo: dict[bytes, np.ndarray] = {}

    def scores(self, obs: np.ndarray) -> np.ndarray:
        import torch

        x = np.asarray(obs, np.float32).reshape(-1)
        key = x.tobytes()
        s = self._memo.get(key)
        if s is None:
            with torch.no_grad():
                s = self.net(torch.from_numpy(x)[None]).numpy()[0].astype(np.float64)
            if len(self._memo) >= self.MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = s
        return s

    def probabilities(self, obs: np.ndarray) -> np.ndarray | None:
        if self.kind != "logits":
            return None
        s = self.scores(obs)
        e = np.exp(s - s.max())
        return e / e.sum()

    def __call__(self, obs: np.ndarray, env: Any | None = None) -> int:
        return int(np.argmax(checked_scores(self.scores(obs))))


def load_run(path: str | Path, env=None) -> TrainedPolicy:
    """Rebuild a run's network from its config and weights; with ``env``, refuse a mode or layout mismatch."""
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from core.tasks.spf.networks import build_policy_net

    p = Path(path)
    cfg = read_config(p)
    if env is not None:
        check_compatible(cfg, env, p)
    weights = p / MODEL_FILE
    if not weights.is_file():
        raise PolicyError(f"{MODEL_FILE} is missing (the run has a config but no weights)", p)
    try:
        state = load_file(str(weights))
    except (SafetensorError, OSError, ValueError) as exc:
        raise PolicyError(f"cannot read the weights: {exc}", weights) from None
    try:
        net = build_policy_net(cfg["architecture"])
    except (KeyError, ValueError, TypeError) as exc:
        raise PolicyError(f"config architecture is invalid: {exc}", p / CONFIG_FILE) from None
    try:
        net.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()
        raise PolicyError(f"the weights do not fit the architecture in {CONFIG_FILE}: "
                          f"{' '.join(x.strip() for x in first[:3])[:300]}", weights) from None
    for k, v in net.state_dict().items():
        if not torch.isfinite(v).all():
            raise PolicyError(f"tensor {k} holds NaN or infinite values", weights)
    return TrainedPolicy(net, cfg, p)
