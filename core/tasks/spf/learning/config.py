"""What a training run is given: :class:`BCConfig` (behaviour cloning) and :class:`RLConfig` (stable-baselines3),
frozen, holding exactly the settings a run folder's ``config.yaml`` records (:mod:`.config_yaml` writes them there
and reads them back).

Why one object: the same settings go from the CLI or the studio's dialog to a learner, into the run folder and back
out of it (what trained this run?); checked once when the config is made, they cannot drift apart between those
places. Defaults that depend on the algorithm (steps, learning rate, validation interval, vectorised envs, training
reward, hyper-parameters, NLM-BC's hidden width) are filled in when a config is made, so a config holds the values
the run uses, and a bad value is a :class:`SettingError` naming the setting.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, TypeVar

from core.tasks.spf.env import SPFEnv
from core.tasks.spf.learning.run import env_layout
from core.tasks.spf.learning.settings import (
    AUGMENT,
    BALANCES,
    BC_ALGOS,
    BC_LR,
    DEFAULT_STEPS,
    HYPERPARAMETERS,
    LR_SCHEDULES,
    N_ENVS,
    NLM_BC_HIDDEN,
    RL_ALGOS,
    TRAINING_REWARDS,
    TrainingReward,
    default_architecture,
)

__all__ = ["SettingError", "TrainConfig", "BCConfig", "RLConfig", "make_config"]


class SettingError(ValueError):
    """A setting with a bad value; ``setting`` names it (reading a ``config.yaml`` reports it at its key)."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting


T = TypeVar("T")


def filled(value: T | None) -> T:
    """A setting of a made config whose None (its default) ``__post_init__`` replaced: typed without the None."""
    if value is None:
        raise ValueError("a default setting was read before the config filled it in")
    return value


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
    """The settings every learner takes (a None that stands for a default is replaced by it when the config is
    made). ``mode``: a mode name or an SPF mode file; ``steps`` (None: the algorithm's budget) counts gradient
    steps (BC) or environment steps (RL); ``eval_every`` (None: a fifth of the budget for BC, a tenth for RL) is
    the number of steps between validations on the first ``val_episodes`` validation episodes (0: all of them);
    ``test``: evaluate the kept checkpoint on the test split at the end; ``threads``: torch's CPU threads (None:
    ``LOGICITY_TORCH_THREADS`` or 1)."""

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
        if isinstance(self.mode, Path):
            self._fill("mode", str(self.mode))
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
            self._fill("eval_every", max(1, filled(self.steps) // 5))
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
            self._fill("eval_every", max(filled(self.n_envs), filled(self.steps) // 10))
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


def make_config(algo: str, mode: str, **settings: Any) -> BCConfig | RLConfig:
    """The config of ``algo`` on ``mode`` with ``settings`` (field names of :class:`BCConfig` / :class:`RLConfig`)
    and every other setting at its default."""
    if algo in BC_ALGOS:
        return BCConfig(algo=algo, mode=mode, **settings)
    if algo in RL_ALGOS:
        return RLConfig(algo=algo, mode=mode, **settings)
    raise ValueError(f"unknown algorithm {algo!r} (one of {', '.join(BC_ALGOS + RL_ALGOS)})")
