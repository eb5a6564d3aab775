"""Training configs (``core.tasks.spf.learning.config``, ``config_yaml``): what a config holds is what its run's
``config.yaml``
records and reads back as an equal config; run folders written before the settings had keys of their own
(tests/data/spf_runs, written by the starting commit's trainer) read as the config that trained them, and still
load and evaluate as they did; bad values are refused when a config is made, and in a ``config.yaml`` at their line.
"""
from __future__ import annotations

import dataclasses
import shutil
import zlib

import numpy as np
import pytest

from core.base.errors import PolicyError
from core.io.yamlio import dump_yaml, loads_yaml
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.learning.config import BCConfig, RLConfig, SettingError, make_config
from core.tasks.spf.learning.config_yaml import read_training_config, run_config, training_config
from core.tasks.spf.learning.settings import TrainingReward
from tests.support.paths import ROOT

RUNS = ROOT / "tests" / "data" / "spf_runs"


@pytest.fixture(scope="module")
def easy():
    return SPFEnv("easy", "train")


def _round_trip(config, env, records=None):
    text = dump_yaml(run_config(config, env, records or {}))
    return training_config(loads_yaml(text, "config.yaml"), "config.yaml")


@pytest.mark.parametrize("config", [
    BCConfig(algo="mlp-bc", mode="easy"),
    BCConfig(algo="nlm-bc", mode="easy", seed=3, steps=40, demos=("a.npz", "b.npz"), batch=16, lr=3e-3,
             balance="sqrt", lr_schedule="cosine", augment="views", augment_fraction=0.25, nlm_residual=True,
             nlm_hidden=0, val_episodes=2, eval_every=7, test=False, tensorboard=False, threads=2),
    BCConfig(algo="gnn-bc", mode="easy", n_demos=9, demo_seed=4, demo_worlds=3),
    RLConfig(algo="dqn", mode="easy"),
    RLConfig(algo="ppo", mode="easy", steps=512, n_envs=2, reward=TrainingReward(violation=-10.0),
             hyperparameters={"learning_rate": 1e-3}, eval_every=64),
    RLConfig(algo="nlm-dqn", mode="easy", seed=5),
], ids=lambda c: c.algo)
def test_what_is_written_reads_back_as_the_same_config(config, easy):
    records = {"device": "cpu", "best_step": 3, "wall_seconds": 1.0}
    if isinstance(config, BCConfig):
        records["demonstrations"] = {"source": "x.npz", "trajectories": 4}
    else:
        records["reward"] = {"test": "the environment's fixed reward"}
    assert _round_trip(config, easy, records) == config


def test_defaults_are_filled_in_when_a_config_is_made():
    bc = BCConfig(algo="nlm-bc", mode="easy", steps=100)
    assert (bc.lr, bc.eval_every, bc.nlm_hidden, bc.demos) == (2e-3, 20, 32, None)
    assert BCConfig(algo="mlp-bc", mode="easy", demos="d.npz").demos == ("d.npz",)
    rl = RLConfig(algo="nlm-dqn", mode="easy", hyperparameters={"learning_starts": 5})
    assert (rl.steps, rl.n_envs, rl.eval_every) == (200_000, 8, 20_000)
    assert rl.hyperparameters["learning_starts"] == 5 and rl.hyperparameters["batch_size"] == 128
    assert rl.reward == TrainingReward(violation=-1.0, overtime=-3.0)
    assert make_config("a2c", "easy") == RLConfig(algo="a2c", mode="easy")
    with pytest.raises(ValueError, match="unknown algorithm"):
        make_config("sarsa", "easy")


@pytest.mark.parametrize("settings, setting", [
    (dict(algo="dqn"), "algo"), (dict(steps=0), "steps"), (dict(balance="most"), "balance"),
    (dict(augment_fraction=1.5), "augment_fraction"), (dict(lr=-1.0), "lr"), (dict(batch=True), "batch"),
    (dict(demos=()), "demos"), (dict(n_demos=2, demo_worlds=3), "demo_worlds"), (dict(nlm_hidden=4), "nlm_hidden"),
])
def test_bad_settings_are_refused_naming_the_setting(settings, setting):
    with pytest.raises(SettingError) as err:
        BCConfig(**{"algo": "mlp-bc", "mode": "easy", **settings})
    assert err.value.setting == setting and setting.split("_")[0] in str(err.value)


def test_a_bad_value_in_config_yaml_is_reported_at_its_line(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUNS / "ppo", run)
    text = (run / "config.yaml").read_text()
    lines = text.splitlines()
    for old, new, message in (("n_envs: 2", "n_envs: -2", "n_envs must be a whole number >= 1"),
                              ("n_envs: 2", "n_envs: two", "training.n_envs must be a whole number or none"),
                              ("  vec_env: DummyVecEnv", "  vec_envs: DummyVecEnv", "unknown key 'vec_envs'")):
        (run / "config.yaml").write_text(text.replace(old, new))
        with pytest.raises(PolicyError) as err:
            read_training_config(run)
        line = next(i for i, t in enumerate(lines, 1) if t.startswith("  " + old.strip().split(":")[0] + ":"))
        assert (err.value.file, err.value.line) == (str(run / "config.yaml"), line), err.value
        assert message in err.value.message


# ---- run folders of the starting commit ------------------------------------------------------------------------

def test_every_key_of_an_earlier_run_is_understood():
    nlm = read_training_config(RUNS / "nlm-bc")
    assert nlm == BCConfig(algo="nlm-bc", mode="easy", seed=1, steps=30, val_episodes=1, eval_every=30,
                           demos=("/tmp/oldruns/easy6.npz",), batch=64, lr=3e-3, lr_schedule="cosine",
                           augment="views", augment_fraction=0.25, nlm_residual=True, nlm_hidden=0)
    collected = read_training_config(RUNS / "mlp-bc-collected")
    assert collected == BCConfig(algo="mlp-bc", mode="easy", steps=10, val_episodes=1, n_demos=2, demo_seed=5,
                                 demo_worlds=2)
    ppo = read_training_config(RUNS / "ppo")
    assert ppo == RLConfig(algo="ppo", mode="easy", seed=3, steps=256, n_envs=2, val_episodes=1,
                           hyperparameters={"learning_rate": 1e-3})
    assert read_training_config(RUNS / "nlm-dqn") == RLConfig(algo="nlm-dqn", mode="easy", steps=16,
                                                               eval_every=16, val_episodes=1)


@pytest.mark.parametrize("run, episodes, figures, actions", [
    ("nlm-bc", [0, 2], (0.0, 0.0, -6.921597633136094), [(186, 248133536), (12, 2462373639)]),
    ("nlm-dqn", [0, 1, 2, 3], (0.0, 0.0, -10.0), [(41, 1502260193), (30, 2214730159), (12, 2462373639),
                                                  (54, 2446817324)]),
])
def test_an_earlier_run_loads_and_evaluates_as_it_did(run, episodes, figures, actions):
    """The figures and every action (CRC of the action sequence) as the starting commit's ``evaluate`` gave them."""
    pytest.importorskip("torch")
    from core.tasks.spf.evaluate import evaluate
    from core.tasks.spf.learning.run import load_run

    rep = evaluate("easy", load_run(RUNS / run, SPFEnv("easy", "val")), "val", episodes=episodes)
    assert (rep.tsr, rep.dsr, rep.score) == figures
    assert [(e.steps, zlib.crc32(np.array(e.actions, np.int8).tobytes())) for e in rep.episodes] == actions


def test_a_config_read_from_a_run_trains_it_again_exactly(tmp_path, monkeypatch):
    """The collected-demonstrations run, trained again from the config its folder gives: the same validation
    history (same demonstrations, same batches, same weights at every check)."""
    pytest.importorskip("torch")
    from core.tasks.spf.learning import train_config
    from core.tasks.spf.learning.run import read_config

    monkeypatch.chdir(tmp_path)   # the demonstrations are collected and cached in ./demos
    config = dataclasses.replace(read_training_config(RUNS / "mlp-bc-collected"), test=False, tensorboard=False)
    doc = train_config(config, tmp_path / "again")
    old = read_config(RUNS / "mlp-bc-collected")
    key = ("step", "val_TSR", "val_DSR", "val_Score", "loss", "train_accuracy")
    assert [[h[k] for k in key] for h in doc["metrics"]["history"]] == \
        [[h[k] for k in key] for h in old["metrics"]["history"]]
    assert read_training_config(tmp_path / "again") == config
