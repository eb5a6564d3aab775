"""Learning SPF policies: behaviour cloning (MLP, GNN, NLM) and reinforcement learning (stable-baselines3 DQN, PPO,
A2C, NLM-DQN), one run format (``model.safetensors`` + ``config.yaml``, never pickle) and the Table-2 summary.

* :mod:`.settings` — algorithms, default architectures per mode, training-reward settings and hyper-parameters;
* :mod:`.config` — :class:`BCConfig` and :class:`RLConfig`, what a run is given; :mod:`.config_yaml` writes them
  into a run's ``config.yaml`` and reads them back;
* :mod:`.run` — the run folder: save, load, check against a mode, the trained policy;
* :mod:`.monitor` — progress / cancel / live metrics shared by the CLI and the studio's job runner;
* :mod:`.bc` and :mod:`.rl` — the learners; :func:`train` makes the config and dispatches on the algorithm;
* :mod:`.table` — mean ± std over seeds in the paper's Table-2 layout.

torch and stable-baselines3 are imported inside functions (never at studio start-up).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.tasks.spf.learning.bc import train_bc
from core.tasks.spf.learning.config import BCConfig, RLConfig, make_config
from core.tasks.spf.learning.monitor import Monitor
from core.tasks.spf.learning.rl import train_rl
from core.tasks.spf.learning.settings import ALGOS, BC_ALGOS, RL_ALGOS

__all__ = ["ALGOS", "BC_ALGOS", "RL_ALGOS", "BCConfig", "RLConfig", "make_config", "train", "train_config"]


def train_config(config: BCConfig | RLConfig, out: str | Path, monitor: Monitor | None = None) -> dict:
    """Train ``config`` into the run folder ``out``; returns the run's final ``config.yaml`` document."""
    if isinstance(config, BCConfig):
        return train_bc(config, out, monitor)
    return train_rl(config, out, monitor)


def train(algo: str, mode: str, out: str | Path, *, monitor: Monitor | None = None, **settings: Any) -> dict:
    """Train ``algo`` on ``mode`` into ``out`` with ``settings`` (fields of :class:`BCConfig` / :class:`RLConfig`:
    ``steps``, ``seed``, ...; the rest at their defaults); returns the run's final ``config.yaml`` document."""
    return train_config(make_config(algo, mode, **settings), out, monitor)
