"""A training config in a run folder's ``config.yaml``: :func:`run_config` writes a
:class:`~core.tasks.spf.learning.config.BCConfig` or :class:`~core.tasks.spf.learning.config.RLConfig` into the
document, :func:`training_config` and :func:`read_training_config` read it back — the one place that knows where
each setting is in the file, so reading back what was written gives an equal config:

* ``algo`` at the top (``mode`` there is the mode's name, ``training.mode`` the mode as given: a name or a file);
* ``training``: ``steps, seed, val_episodes, eval_every, test, tensorboard, threads``; BC: ``batch, lr,
  lr_schedule, balance``, ``demonstrations.{files, n_demos, seed, worlds}``, ``augment.{kind, fraction}``; RL:
  ``n_envs``, ``reward.training.{violation, overtime}``, ``hyperparameters``;
* ``architecture``: built from the algorithm and the mode (:meth:`~core.tasks.spf.learning.config.TrainConfig.
  architecture`); NLM-BC's ``nlm.residual`` and ``nlm.hidden_dims`` are its ``nlm_residual`` and ``nlm_hidden``.

Next to the settings a learner records what happened (device, demonstration counts, timings, the best step, ...):
reading skips those records (:data:`BC_RECORDS`, :data:`RL_RECORDS`) and refuses any other key; a bad or unknown
key is a :class:`~core.base.errors.PolicyError` naming the file and line. A setting the file lacks is taken from the
records where they tell it (``demonstrations.source`` and ``trajectories``: the files, the number of
demonstrations and their seed; ``metrics.history``: the validation interval), else from its default.
"""
from __future__ import annotations

import os
import platform
import re
from pathlib import Path
from typing import Any, Mapping

from core.base.errors import PolicyError
from core.io.yamlio import LocatedDict
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.learning.config import BCConfig, RLConfig, SettingError, TrainConfig, filled
from core.tasks.spf.learning.run import CONFIG_FILE, FORMAT, VERSION, env_layout, read_config_document
from core.tasks.spf.learning.settings import BC_ALGOS, DEFAULT_STEPS, N_ENVS, RL_ALGOS, TrainingReward

__all__ = ["run_config", "settings_block", "training_config", "read_training_config", "BC_RECORDS",
           "RL_RECORDS"]

#: what a behaviour-cloning run records next to its settings (``training`` keys, and keys of its sub-blocks)
BC_RECORDS = {"training": {"unit", "optimiser", "loss", "device", "collect_seconds", "machine", "best_step",
                           "train_seconds", "wall_seconds", "cancelled"},
              "demonstrations": {"source", "trajectories", "samples", "unique_rows", "action_counts"},
              "augment": {"labels"}}
#: what a reinforcement-learning run records next to its settings
RL_RECORDS = {"training": {"unit", "library", "vec_env", "device", "machine", "best_step", "train_seconds",
                           "env_steps_per_second", "wall_seconds", "cancelled"},
              "reward": {"test"}}


# ---- writing ------------------------------------------------------------------------------------------------------

def _common_settings(c: TrainConfig) -> dict:
    return {"mode": c.mode, "steps": c.steps, "seed": c.seed, "val_episodes": c.val_episodes,
            "eval_every": c.eval_every, "test": c.test, "tensorboard": c.tensorboard, "threads": c.threads}


def settings_block(config: BCConfig | RLConfig) -> dict:
    """The settings of ``config`` as its run's ``training`` block holds them."""
    c = config
    if isinstance(c, BCConfig):
        return {**_common_settings(c), "batch": c.batch, "lr": c.lr, "lr_schedule": c.lr_schedule,
                "balance": c.balance,
                "demonstrations": {"files": None if c.demos is None else list(c.demos), "n_demos": c.n_demos,
                                   "seed": c.demo_seed, "worlds": c.demo_worlds},
                "augment": {"kind": c.augment, "fraction": c.augment_fraction}}
    return {**_common_settings(c), "n_envs": c.n_envs, "reward": {"training": filled(c.reward).to_dict()},
            "hyperparameters": dict(filled(c.hyperparameters))}


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
    training = _merge(settings_block(config), records)
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

