"""RL training settings as a user sets them: ``--n-envs`` is checked, and a run records the per-algorithm default
vectorisation and hyper-parameters (NLM-DQN: 8 envs, a gradient step of batch 128 per 8 env steps)."""
from __future__ import annotations

import pytest

from tests.support.cli import run_main

pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")


def test_n_envs_below_one_is_refused(tmp_path):
    r = run_main("spf", "train", "--algo", "nlm-dqn", "--mode", "easy", "--n-envs", "0", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "--n-envs must be >= 1, got 0" in r.stderr
    assert not (tmp_path / "o").exists()


def test_nlm_dqn_run_records_its_default_settings(tmp_path):
    from core.tasks.spf.learning import train
    from core.tasks.spf.learning.run import read_config

    # 16 steps: before learning_starts, so no gradient step; the settings, not the learning, are under test
    train("nlm-dqn", "easy", tmp_path / "r", steps=16, seed=0, eval_every=16, val_episodes=1, test=False,
          tensorboard=False)
    tr = read_config(tmp_path / "r")["training"]
    assert tr["n_envs"] == 8
    hp = tr["hyperparameters"]
    assert (hp["batch_size"], hp["train_freq"], hp["gradient_steps"], hp["learning_rate"]) == (128, 1, 1, 5e-3)
