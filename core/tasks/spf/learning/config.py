"""What a training run is given: :class:`BCConfig` (behaviour cloning) and :class:`RLConfig` (stable-baselines3),
frozen, holding exactly the settings a run folder's ``config.yaml`` records, and the one place that writes them
into that YAML (:func:`run_config`) and reads them back (:func:`training_config`, :func:`read_training_config`).

Why one object: the same settings go from the CLI or the studio's dialog to a learner, into the run folder and back
out of it (what trained this run?); checked once when the config is made, written and read by one pair of
functions, they cannot drift apart between those places.

Defaults that depend on the algorithm (steps, learning rate, validation interval, vectorised envs, training reward,
hyper-parameters, NLM-BC's hidden width) are filled in when a config is made, so it holds the values the run uses
and reading back what was written gives an equal config. Where the settings are in ``config.yaml``:

* ``algo`` at the top (``mode`` there is the mode's name, ``training.mode`` the mode as given: a name or a file);
* ``training``: ``steps, seed, val_episodes, eval_every, test, tensorboard, threads``; BC: ``batch, lr,
  lr_schedule, balance``, ``demonstrations.{files, n_demos, seed, worlds}``, ``augment.{kind, fraction}``; RL:
  ``n_envs``, ``reward.training.{violation, overtime}``, ``hyperparameters``;
* ``architecture``: built from the algorithm and the mode (:meth:`TrainConfig.architecture`); NLM-BC's
  ``nlm.residual`` and ``nlm.hidden_dims`` are :attr:`BCConfig.nlm_residual` and :attr:`BCConfig.nlm_hidden`.

Next to the settings a learner records what happened (device, demonstration counts, timings, the best step, ...):
reading skips those records (:data:`BC_RECORDS`, :data:`RL_RECORDS`) and refuses any other key, naming the file and
line. A setting the file lacks is taken from the records where they tell it (``demonstrations.source`` and
``trajectories``: the files, the number of demonstrations and their seed; ``metrics.history``: the validation
interval), else from its default.
"""
from __future__ import annotations

import math
import os
import platform
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from core.base.errors import PolicyError
from core.io.yamlio import LocatedDict
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.learning.run import CONFIG_FILE, FORMAT, VERSION, env_layout, read_config_document
from core.tasks.spf.learning.settings import (AUGMENT, BALANCES, BC_ALGOS, BC_LR, DEFAULT_STEPS, HYPERPARAMETERS,
                                              LR_SCHEDULES, N_ENVS, NLM_BC_HIDDEN, RL_ALGOS, TRAINING_REWARDS,
                                              TrainingReward, default_architecture)

__all__ = ["SettingError", "TrainConfig", "BCConfig", "RLConfig", "make_config", "run_config", "training_config",
           "read_training_config", "BC_RECORDS", "RL_RECORDS"]

#: what a behaviour-cloning run records next to its settings (``training`` keys, and keys of its sub-blocks)
BC_RECORDS = {"training": {"unit", "optimiser", "loss", "device", "collect_seconds", "machine", "best_step",
                           "train_seconds", "wall_seconds", "cancelled"},
              "demonstrations": {"source", "trajectories", "samples", "unique_rows", "action_counts"},
              "augment": {"labels"}}
#: what a reinforcement-learning run records next to its settings
RL_RECORDS = {"training": {"unit", "library", "vec_env", "device", "machine", "best_step", "train_seconds",
                           "env_steps_per_second", "wall_seconds", "cancelled"},
              "reward": {"test"}}


class SettingError(ValueError):
    """A setting with a bad value; ``setting`` names it (reading a ``config.yaml`` reports it at its key)."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting


def _whole(name: str, value: Any, low: int, none: bool = False) -> None:
    if value is None and none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise SettingError(name, f"{name} must be a whole number >= {low}, got {value!r}")


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise SettingError(name, f"{name} must be one of {', '.join(choices)}, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """The settings every learner takes. ``steps`` (None: the algorithm's budget) counts gradient steps (BC) or
    environment steps (RL); ``eval_every`` (None: a fifth of the budget for BC, a tenth for RL) is the number of
    steps between validations on the first ``val_episodes`` validation episodes; ``test``: evaluate the kept
    checkpoint on the test split at the end; ``threads``: torch's CPU threads (None: ``LOGICITY_TORCH_THREADS`` or
    1)."""

    algo: str
    mode: str
    seed: int = 0
    steps: int | None = None
    val_episodes: int = 20
    eval_every: int | None = None
    test: bool = True
    tensorboard: bool = True
    threads: int | None = None

    def _fill(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    def _check_common(self, algos: tuple[str, ...]) -> None:
        if self.algo not in algos:
            raise SettingError("algo", f"unknown algorithm {self.algo!r} (one of {', '.join(algos)})")
        if not isinstance(self.mode, str) or not self.mode:
            raise SettingError("mode", f"mode must be a mode name or an SPF mode file, got {self.mode!r}")
        _whole("seed", self.seed, 0)
        if self.steps is None:
            self._fill("steps", DEFAULT_STEPS[self.algo])
        _whole("steps", self.steps, 1)
        _whole("val_episodes", self.val_episodes, 0)
        _whole("eval_every", self.eval_every, 1, none=True)
        _whole("threads", self.threads, 1, none=True)
        for name, flag in (("test", self.test), ("tensorboard", self.tensorboard)):
            if not isinstance(flag, bool):
                raise SettingError(name, f"{name} must be true or false, got {flag!r}")

    def architecture(self, env: SPFEnv) -> dict:
        """The run's ``architecture`` block for the mode of ``env`` (what rebuilds its network)."""
        base = env.unwrapped
        return default_architecture(self.algo, base.spf.name, base.layout.size, env_layout(base), base.fov)

    def _settings(self) -> dict:
        return {"mode": self.mode, "steps": self.steps, "seed": self.seed, "val_episodes": self.val_episodes,
                "eval_every": self.eval_every, "test": self.test, "tensorboard": self.tensorboard,
                "threads": self.threads}


@dataclass(frozen=True, kw_only=True)
class BCConfig(TrainConfig):
    """Behaviour cloning (:func:`core.tasks.spf.learning.bc.train_bc`). Demonstrations come from the files
    ``demos``, else ``n_demos`` oracle trajectories collected in ``demo_worlds`` worlds seeded ``demo_seed``,
    ``demo_seed + 1``, ...; ``lr`` None: the algorithm's rate (:data:`~.settings.BC_LR`); ``nlm_hidden`` (NLM-BC
    only) None: :data:`~.settings.NLM_BC_HIDDEN`, 0: no hidden layer."""

    demos: tuple[str, ...] | None = None
    n_demos: int = 200
    demo_seed: int = 0
    demo_worlds: int = 1
    batch: int = 128
    lr: float | None = None
    balance: str = "full"
    lr_schedule: str = "constant"
    augment: str = "none"
    augment_fraction: float = 0.5
    nlm_residual: bool = False
    nlm_hidden: int | None = None

    def __post_init__(self) -> None:
        self._check_common(BC_ALGOS)
        if self.eval_every is None:
            self._fill("eval_every", max(1, self.steps // 5))
        if self.demos is not None:
            files = (self.demos,) if isinstance(self.demos, (str, Path)) else tuple(self.demos)
            if not files:
                raise SettingError("demos", "demos must name at least one demonstrations file")
            self._fill("demos", tuple(str(f) for f in files))
        _whole("n_demos", self.n_demos, 1)
        _whole("demo_seed", self.demo_seed, 0)
        _whole("demo_worlds", self.demo_worlds, 1)
        if self.demos is None and self.demo_worlds > self.n_demos:
            raise SettingError("demo_worlds", f"demo worlds must be in 1..n_demos ({self.n_demos}), got "
                                              f"{self.demo_worlds}")
        _whole("batch", self.batch, 1)
        if self.lr is None:
            self._fill("lr", BC_LR[self.algo])
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)) or not (math.isfinite(self.lr)
                                                                                     and self.lr > 0):
            raise SettingError("lr", f"lr must be a positive number, got {self.lr!r}")
        self._fill("lr", float(self.lr))
        _choice("balance", self.balance, BALANCES)
        _choice("lr_schedule", self.lr_schedule, LR_SCHEDULES)
        _choice("augment", self.augment, AUGMENT)
        if isinstance(self.augment_fraction, bool) or not isinstance(self.augment_fraction, (int, float)) or \
                not 0.0 <= self.augment_fraction <= 1.0:
            raise SettingError("augment_fraction", f"augmentation fraction must be in 0..1, got "
                                                   f"{self.augment_fraction!r}")
        self._fill("augment_fraction", float(self.augment_fraction))
        if not isinstance(self.nlm_residual, bool):
            raise SettingError("nlm_residual", f"nlm_residual must be true or false, got {self.nlm_residual!r}")
        if self.algo != "nlm-bc":
            if self.nlm_residual or self.nlm_hidden is not None:
                raise SettingError("nlm_hidden" if self.nlm_hidden is not None else "nlm_residual",
                                   f"nlm_residual and nlm_hidden need an NLM learner, not {self.algo}")
            return
        if self.nlm_hidden is None:
            self._fill("nlm_hidden", NLM_BC_HIDDEN)
        if isinstance(self.nlm_hidden, bool) or not isinstance(self.nlm_hidden, int) or self.nlm_hidden < 0:
            raise SettingError("nlm_hidden", f"nlm_hidden must be >= 0, got {self.nlm_hidden!r}")

    def architecture(self, env: SPFEnv) -> dict:
        arch = super().architecture(env)
        if self.algo == "nlm-bc":
            nlm = {**arch["nlm"], "residual": True} if self.nlm_residual else dict(arch["nlm"])
            nlm["hidden_dims"] = [self.nlm_hidden] if self.nlm_hidden else []
            arch["nlm"] = nlm
        return arch

    def settings(self) -> dict:
        """The ``training`` block's settings (:func:`run_config` adds the run's records)."""
        return {**self._settings(), "batch": self.batch, "lr": self.lr, "lr_schedule": self.lr_schedule,
                "balance": self.balance,
                "demonstrations": {"files": None if self.demos is None else list(self.demos),
                                   "n_demos": self.n_demos, "seed": self.demo_seed, "worlds": self.demo_worlds},
                "augment": {"kind": self.augment, "fraction": self.augment_fraction}}


@dataclass(frozen=True, kw_only=True)
class RLConfig(TrainConfig):
    """Reinforcement learning (:func:`core.tasks.spf.learning.rl.train_rl`): ``n_envs`` vectorised training envs
    (None: :data:`~.settings.N_ENVS`), the training ``reward`` (None: the method's,
    :data:`~.settings.TRAINING_REWARDS`) and stable-baselines3's ``hyperparameters`` (the given ones over the
    algorithm's :data:`~.settings.HYPERPARAMETERS`)."""

    n_envs: int | None = None
    reward: TrainingReward | None = None
    hyperparameters: Mapping[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        self._check_common(RL_ALGOS)
        if self.n_envs is None:
            self._fill("n_envs", N_ENVS[self.algo])
        _whole("n_envs", self.n_envs, 1)
        if self.eval_every is None:
            self._fill("eval_every", max(self.n_envs, self.steps // 10))
        if self.reward is None:
            self._fill("reward", TRAINING_REWARDS[self.algo])
        if not isinstance(self.reward, TrainingReward):
            raise SettingError("reward", f"reward must be a TrainingReward, got {self.reward!r}")
        for name, v in (("violation", self.reward.violation), ("overtime", self.reward.overtime)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)):
                raise SettingError("reward", f"the training reward's {name} must be a number or none, got {v!r}")
        given = dict(self.hyperparameters or {})
        for k, v in given.items():
            if not isinstance(k, str) or not (v is None or isinstance(v, (bool, int, float, str))):
                raise SettingError("hyperparameters", f"hyper-parameter {k!r} must be a name with a number, text "
                                                      f"or true/false, got {v!r}")
        self._fill("hyperparameters", {**HYPERPARAMETERS[self.algo], **given})

    def settings(self) -> dict:
        """The ``training`` block's settings (:func:`run_config` adds the run's records)."""
        return {**self._settings(), "n_envs": self.n_envs, "reward": {"training": self.reward.to_dict()},
                "hyperparameters": dict(self.hyperparameters)}


def make_config(algo: str, mode: str, **settings: Any) -> BCConfig | RLConfig:
    """The config of ``algo`` on ``mode`` with ``settings`` (field names of :class:`BCConfig` / :class:`RLConfig`)
    and every other setting at its default."""
    if algo in BC_ALGOS:
        return BCConfig(algo=algo, mode=mode, **settings)
    if algo in RL_ALGOS:
        return RLConfig(algo=algo, mode=mode, **settings)
    raise ValueError(f"unknown algorithm {algo!r} (one of {', '.join(BC_ALGOS + RL_ALGOS)})")


def _merge(settings: dict, records: Mapping[str, Any]) -> dict:
    """``settings`` with ``records`` added; a record that is a mapping joins the settings' block of its name."""
    out = dict(settings)
    for k, v in records.items():
        out[k] = {**out[k], **v} if isinstance(v, Mapping) and isinstance(out.get(k), dict) else v
    return out


def run_config(config: BCConfig | RLConfig, env: SPFEnv, records: Mapping[str, Any]) -> dict:
    """The ``config.yaml`` document of a run of ``config`` on ``env``'s mode: the format header, the mode's
    observation, the architecture, the settings with the run's ``records`` and the machine next to them, and the
    metrics (their history empty)."""
    base = env.unwrapped
    training = _merge(config.settings(), records)
    training["machine"] = f"{platform.machine()} {os.cpu_count()} CPUs"
    return {"format": FORMAT, "version": VERSION, "algo": config.algo, "mode": base.spf.name,
            "observation": {"size": int(base.layout.size), "entities": int(base.fov), "layout": env_layout(base)},
            "architecture": config.architecture(env), "training": training, "metrics": {"history": []}}


# ---- reading ------------------------------------------------------------------------------------------------------

_TYPE_WORDS = {bool: "true or false", int: "a whole number", float: "a number", str: "text", list: "a list",
               dict: "a mapping", type(None): "none"}


class _Reader:
    """Takes settings out of a run's ``config.yaml``; every problem is a :class:`PolicyError` at the key's line."""

    def __init__(self, source: Path) -> None:
        self.source = source
        #: setting -> (block, key) it was read from, to report a bad value where it is
        self.at: dict[str, tuple[Mapping, str]] = {}

    def error(self, block: Mapping, key: str | None, message: str) -> PolicyError:
        line = (block.line_of(key) if key is not None else block.line) if isinstance(block, LocatedDict) else None
        return PolicyError(message, self.source, line)

    def block(self, parent: Mapping, key: str, where: str) -> Mapping:
        value = parent.get(key, {})
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.error(parent, key, f"{where}.{key} must be a mapping, got {value!r:.60}")
        return value

    def known(self, block: Mapping, settings: set[str], records: set[str], where: str) -> None:
        for key in block:
            if key not in settings and key not in records:
                raise self.error(block, key, f"unknown key {key!r} in {where} (settings: "
                                             f"{', '.join(sorted(settings))})")

    def value(self, block: Mapping, key: str, types: tuple[type, ...], default: Any, where: str,
              setting: str | None = None) -> Any:
        if setting is not None:
            self.at[setting] = (block, key)
        if key not in block:
            return default
        v = block[key]
        ok = isinstance(v, types) and not (isinstance(v, bool) and bool not in types)
        if isinstance(v, int) and not isinstance(v, bool) and float in types:
            ok, v = True, float(v)
        if not ok:
            want = " or ".join(_TYPE_WORDS.get(t, t.__name__) for t in types)
            raise self.error(block, key, f"{where}.{key} must be {want}, got {v!r:.60}")
        return v


_COMMON = {"mode", "steps", "seed", "val_episodes", "eval_every", "test", "tensorboard", "threads"}
_NONE = type(None)


def _common(r: _Reader, doc: Mapping, training: Mapping) -> dict:
    mode_name = r.value(doc, "mode", (str,), None, "config", "mode")
    return {"algo": doc["algo"], "mode": r.value(training, "mode", (str,), mode_name, "training", "mode"),
            "steps": r.value(training, "steps", (int, _NONE), None, "training", "steps"),
            "seed": r.value(training, "seed", (int,), 0, "training", "seed"),
            "val_episodes": r.value(training, "val_episodes", (int,), 20, "training", "val_episodes"),
            "eval_every": r.value(training, "eval_every", (int, _NONE), None, "training", "eval_every"),
            "test": r.value(training, "test", (bool,), True, "training", "test"),
            "tensorboard": r.value(training, "tensorboard", (bool,), True, "training", "tensorboard"),
            "threads": r.value(training, "threads", (int, _NONE), None, "training", "threads")}


def _bc_settings(r: _Reader, doc: Mapping, training: Mapping) -> dict:
    demos = r.block(training, "demonstrations", "training")
    augment = r.block(training, "augment", "training")
    r.known(training, _COMMON | {"batch", "lr", "lr_schedule", "balance", "demonstrations", "augment"},
            BC_RECORDS["training"], "training")
    r.known(demos, {"files", "n_demos", "seed", "worlds"}, BC_RECORDS["demonstrations"], "training.demonstrations")
    r.known(augment, {"kind", "fraction"}, BC_RECORDS["augment"], "training.augment")
    where = "training.demonstrations"
    source = r.value(demos, "source", (str, _NONE), None, where)
    worlds = r.value(demos, "worlds", (int, _NONE), None, where, "demo_worlds")
    # without ``files`` the records tell: the files were given when no worlds were recorded, else collected
    given = source.split(", ") if source and worlds is None else None
    files = r.value(demos, "files", (list, _NONE), given, where, "demos")
    if files is not None and not all(isinstance(f, str) for f in files):
        raise r.error(demos, "files", f"{where}.files must be a list of file names, got {files!r:.60}")
    collected = files is None
    trajectories = r.value(demos, "trajectories", (int, _NONE), None, where)
    seed_in_name = re.search(r"_seed(\d+)\.npz", source or "") if collected else None
    settings = {
        "demos": files, "demo_worlds": 1 if worlds is None else worlds,
        "n_demos": r.value(demos, "n_demos", (int,), trajectories if collected and trajectories else 200, where,
                           "n_demos"),
        "demo_seed": r.value(demos, "seed", (int,), int(seed_in_name.group(1)) if seed_in_name else 0, where,
                             "demo_seed"),
        "batch": r.value(training, "batch", (int,), 128, "training", "batch"),
        "lr": r.value(training, "lr", (float, _NONE), None, "training", "lr"),
        "lr_schedule": r.value(training, "lr_schedule", (str,), "constant", "training", "lr_schedule"),
        "balance": r.value(training, "balance", (str,), "full", "training", "balance"),
        "augment": r.value(augment, "kind", (str,), "none", "training.augment", "augment"),
        "augment_fraction": r.value(augment, "fraction", (float,), 0.5, "training.augment", "augment_fraction"),
    }
    if doc["algo"] == "nlm-bc":
        arch = r.block(doc, "architecture", "config")
        nlm = r.block(arch, "nlm", "architecture")
        settings["nlm_residual"] = r.value(nlm, "residual", (bool,), False, "architecture.nlm", "nlm_residual")
        hidden = r.value(nlm, "hidden_dims", (list,), [], "architecture.nlm", "nlm_hidden")
        if len(hidden) > 1 or not all(isinstance(h, int) and not isinstance(h, bool) for h in hidden):
            raise r.error(nlm, "hidden_dims", f"architecture.nlm.hidden_dims must list at most one width (NLM-BC's "
                                              f"hidden layer), got {hidden!r:.60}")
        settings["nlm_hidden"] = hidden[0] if hidden else 0
    return settings


def _rl_settings(r: _Reader, training: Mapping) -> dict:
    reward = r.block(training, "reward", "training")
    r.known(training, _COMMON | {"n_envs", "reward", "hyperparameters"}, RL_RECORDS["training"], "training")
    r.known(reward, {"training"}, RL_RECORDS["reward"], "training.reward")
    r.at["reward"] = (training, "reward")
    rewards = r.block(reward, "training", "training.reward")
    r.known(rewards, {"violation", "overtime"}, set(), "training.reward.training")
    trained = None
    if "training" in reward:
        trained = TrainingReward(
            violation=r.value(rewards, "violation", (float, _NONE), None, "training.reward.training"),
            overtime=r.value(rewards, "overtime", (float, _NONE), None, "training.reward.training"))
    hyper = r.value(training, "hyperparameters", (dict, _NONE), None, "training", "hyperparameters")
    return {"n_envs": r.value(training, "n_envs", (int, _NONE), None, "training", "n_envs"), "reward": trained,
            "hyperparameters": None if hyper is None else {str(k): v for k, v in hyper.items()}}


def _recorded_interval(document: Mapping, training: Mapping, algo: str, settings: Mapping) -> int | None:
    """The validation interval a run's history shows (None: the default's, or the history cannot tell)."""
    metrics = document.get("metrics")
    history = metrics.get("history") if isinstance(metrics, Mapping) else None
    if training.get("cancelled") or not history or not isinstance(history[0], Mapping):
        return None
    first = history[0].get("step")
    steps = settings["steps"] if isinstance(settings["steps"], int) else DEFAULT_STEPS[algo]
    if isinstance(first, bool) or not isinstance(first, int) or first < 1 or not isinstance(steps, int):
        return None
    if algo in BC_ALGOS:   # validated at every multiple of the interval and at the last step
        return None if first == min(max(1, steps // 5), steps) else min(first, steps)
    n = settings["n_envs"] if isinstance(settings["n_envs"], int) and settings["n_envs"] > 0 else N_ENVS[algo]
    default = max(n, steps // 10)   # validated at the first multiple of n_envs past each multiple of the interval
    return None if first == -(-default // n) * n else first


def training_config(document: Mapping, source: str | Path) -> BCConfig | RLConfig:
    """The config that trained the run whose ``config.yaml`` holds ``document`` (as :func:`read_config_document`
    reads it: its keys keep their lines); a bad or unknown key is a :class:`PolicyError` naming ``source`` and the
    line."""
    r = _Reader(Path(source))
    algo = r.value(document, "algo", (str,), None, "config")
    if algo not in BC_ALGOS + RL_ALGOS:
        raise r.error(document, "algo", f"unknown algorithm {algo!r} (one of {', '.join(BC_ALGOS + RL_ALGOS)})")
    training = r.block(document, "training", "config")
    settings = _common(r, document, training)
    settings.update(_bc_settings(r, document, training) if algo in BC_ALGOS else _rl_settings(r, training))
    if "eval_every" not in training:
        settings["eval_every"] = _recorded_interval(document, training, algo, settings)
    cls = BCConfig if algo in BC_ALGOS else RLConfig
    try:
        return cls(**settings)
    except SettingError as exc:
        block, key = r.at.get(exc.setting, (training, None))
        raise r.error(block, key, str(exc)) from None


def read_training_config(path: str | Path) -> BCConfig | RLConfig:
    """The config that trained the run in folder ``path`` (:func:`training_config` of its ``config.yaml``)."""
    p = Path(path)
    return training_config(read_config_document(p), p / CONFIG_FILE if p.is_dir() else p)

