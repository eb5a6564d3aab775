"""Learning SPF policies: behaviour cloning (MLP, GNN, NLM) and reinforcement learning (stable-baselines3 DQN, PPO,
A2C, NLM-DQN), one run format (``model.safetensors`` + ``config.yaml``, never pickle) and the Table-2 summary.

* :mod:`.settings` — algorithms, default architectures per mode, training-reward settings per method;
* :mod:`.run` — the run folder: save, load, check against a mode, the trained policy as an evaluation policy;
* :mod:`.monitor` — progress / cancel / live metrics shared by the CLI and the studio's job runner;
* :mod:`.bc` and :mod:`.rl` — the learners; :func:`train` dispatches on the algorithm;
* :mod:`.table` — mean ± std over seeds in the paper's Table-2 layout.

torch and stable-baselines3 are imported inside functions (never at studio start-up).
"""
from __future__ import annotations

from core.tasks.spf.learning.settings import ALGOS, BC_ALGOS, RL_ALGOS

__all__ = ["ALGOS", "BC_ALGOS", "RL_ALGOS", "train"]


def train(algo: str, mode: str, out, *, steps: int | None = None, seed: int = 0, monitor=None, **options):
    """Train ``algo`` on ``mode`` and write the run into ``out``; returns the final config dict."""
    if algo in BC_ALGOS:
        from core.tasks.spf.learning.bc import train_bc

        return train_bc(algo, mode, out, steps=steps, seed=seed, monitor=monitor, **options)
    if algo in RL_ALGOS:
        from core.tasks.spf.learning.rl import train_rl

        return train_rl(algo, mode, out, steps=steps, seed=seed, monitor=monitor, **options)
    raise ValueError(f"unknown algorithm {algo!r} (one of {', '.join(ALGOS)})")
