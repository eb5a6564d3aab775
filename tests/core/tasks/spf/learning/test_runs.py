"""SPF run folders: save/load round trip gives the same network, SB3 exports compute exactly SB3's outputs, and a
run for another mode, another layout or with mismatched weights is refused with a clear message."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from core.base.errors import PolicyError  # noqa: E402


def _arch(algo: str, mode: str = "easy"):
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.config import make_config

    env = SPFEnv(mode, "train")
    return env, make_config(algo, mode).architecture(env)


def _config(env, algo, arch):
    from core.tasks.spf.learning.config import make_config
    from core.tasks.spf.learning.config_yaml import run_config

    doc = run_config(make_config(algo, env.spf.name), env, {})
    assert doc["architecture"] == arch
    return doc


def _obs(n: int, size: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).random((n, size)) < 0.2).astype(np.float32)


@pytest.mark.parametrize("algo", ["mlp-bc", "gnn-bc", "nlm-bc", "dqn", "ppo", "nlm-dqn"])
def test_round_trip_is_exact(algo, tmp_path):
    from core.tasks.spf.learning.run import load_run, save_run
    from core.tasks.spf.networks import build_policy_net

    torch.manual_seed(1)
    env, arch = _arch(algo)
    net = build_policy_net(arch)
    save_run(tmp_path / "run", net, _config(env, algo, arch))
    assert not list(tmp_path.glob("run/*.pkl")) and not list(tmp_path.glob("run/*.zip"))
    pol = load_run(tmp_path / "run", env)
    x = _obs(16, env.layout.size)
    with torch.no_grad():  # one observation at a time, as the policy is asked (batched BLAS rounds differently)
        want = np.stack([net(torch.from_numpy(o)[None]).numpy()[0] for o in x])
    got = np.stack([pol.scores(o) for o in x])
    np.testing.assert_array_equal(got.astype(np.float32), want)
    assert all(pol(o) == int(np.argmax(w)) for o, w in zip(x, want))
    for k, v in net.state_dict().items():
        assert torch.equal(v, pol.net.state_dict()[k])


@pytest.mark.parametrize("algo", ["dqn", "nlm-dqn", "ppo", "a2c"])
def test_sb3_export_computes_what_sb3_computes(algo):
    from stable_baselines3 import A2C, DQN, PPO

    from core.tasks.spf.learning.rl import _nlm_extractor_class, export_policy

    env, arch = _arch(algo)
    if algo in ("dqn", "nlm-dqn"):
        kw = {"net_arch": arch["hidden"]}
        if algo == "nlm-dqn":
            kw |= {"features_extractor_class": _nlm_extractor_class(),
                   "features_extractor_kwargs": {"layout": arch["layout"], "n_entities": 5, **arch["nlm"]}}
        model = DQN("MlpPolicy", env, policy_kwargs=kw, seed=0, device="cpu")
    else:
        model = (PPO if algo == "ppo" else A2C)("MlpPolicy", env, seed=0, device="cpu", policy_kwargs={
            "net_arch": {"pi": arch["hidden"], "vf": arch["hidden"]}, "activation_fn": torch.nn.Tanh})
    net = export_policy(model, algo, arch)
    x = torch.from_numpy(_obs(32, env.layout.size, 2))
    with torch.no_grad():
        if algo in ("dqn", "nlm-dqn"):
            want = model.policy.q_net(x)
        else:
            want = model.policy.get_distribution(x).distribution.logits
            want = want + torch.logsumexp(model.policy.action_net(
                model.policy.mlp_extractor.forward_actor(x)), dim=-1, keepdim=True)
        got = net(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def _saved(tmp_path, algo="mlp-bc", mode="easy"):
    from core.tasks.spf.learning.run import save_run
    from core.tasks.spf.networks import build_policy_net

    env, arch = _arch(algo, mode)
    out = tmp_path / f"{algo}-{mode}"
    save_run(out, build_policy_net(arch), _config(env, algo, arch))
    return out


def test_run_for_another_mode_is_refused(tmp_path):
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.run import load_run

    run = _saved(tmp_path)
    with pytest.raises(PolicyError, match="trained for SPF mode 'easy', not 'medium'"):
        load_run(run, SPFEnv("medium", "test"))
    load_run(run, SPFEnv("easy", "test"))  # its own mode loads


def test_run_with_another_layout_is_refused(tmp_path):
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.run import load_run, read_config, write_config

    run = _saved(tmp_path)
    cfg = read_config(run)
    cfg["observation"]["layout"][3][0] = "IsYoung"
    write_config(run, cfg)
    with pytest.raises(PolicyError, match="another observation layout.*IsYoung"):
        load_run(run, SPFEnv("easy", "test"))


def test_weights_that_do_not_fit_the_architecture_are_refused(tmp_path):
    from core.tasks.spf.learning.run import load_run, read_config, write_config

    run = _saved(tmp_path)
    cfg = read_config(run)
    cfg["architecture"]["hidden"] = [32, 64, 64]
    write_config(run, cfg)
    with pytest.raises(PolicyError, match="do not fit the architecture"):
        load_run(run)
    (run / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(PolicyError, match="cannot read the weights"):
        load_run(run)


def test_a_folder_that_is_not_a_run_is_refused(tmp_path):
    from core.tasks.spf.learning.run import load_run

    with pytest.raises(PolicyError, match="no config.yaml"):
        load_run(tmp_path)
    (tmp_path / "config.yaml").write_text("format: something-else\n")
    with pytest.raises(PolicyError, match="not a trained SPF run"):
        load_run(tmp_path)


def test_training_reward_replaces_only_the_penalties():
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.rl import TrainingRewardWrapper
    from core.tasks.spf.learning.settings import TrainingReward

    env = TrainingRewardWrapper(SPFEnv("easy", "train", max_horizon=3), TrainingReward(violation=-1.5, overtime=-7))
    env.reset(seed=0)
    seen_over = seen_fail = False
    for _ in range(200):
        obs, r, term, trunc, info = env.step(3)  # Stop until the horizon
        c = info["reward_components"]
        if info["fail"]:
            assert r == c["action_cost"] - 1.5
            seen_fail = True
        elif trunc:
            assert r == pytest.approx(c["action_cost"] + c["rule"] - 7)
            assert info["test_reward"] == pytest.approx(c["action_cost"] + c["rule"] + c["overtime"])
            seen_over = True
        else:
            assert r == pytest.approx(info["test_reward"])
        if term or trunc:
            env.reset()
        if seen_over:
            break
    assert seen_over
    # a dead violation: Normal where the oracle stops
    env.reset(seed=1)
    for _ in range(400):
        a = 1 if env.unwrapped.oracle_action() == 3 else int(env.unwrapped.oracle_action())
        obs, r, term, trunc, info = env.step(a)
        if info["fail"]:
            assert r == -1.5 and info["test_reward"] == -10.0
            seen_fail = True
            break
        if term or trunc:
            env.reset()
    assert seen_fail


def test_table_stores_the_test_figures_of_a_finished_run(tmp_path, monkeypatch):
    import core.tasks.spf.learning.table as table
    from core.tasks.spf.learning.run import read_config
    from core.tasks.spf.learning.table import collect_results

    run = _saved(tmp_path)
    figures = {"TSR": 0.5, "DSR": 0.25, "Score": -1.0, "episodes": 100}
    monkeypatch.setattr(table, "validate", lambda *a, **k: dict(figures))
    (res,) = collect_results([run])
    assert (res.tsr, res.dsr, res.score) == (0.5, 0.25, -1.0)
    assert read_config(run)["metrics"]["test"] == figures


def test_table_leaves_a_run_that_is_still_training_as_it_is(tmp_path, monkeypatch):
    """`spf table` evaluated a run whose training was still going, then wrote the config it had read before: the
    run's last validation and its wall-clock time, written meanwhile, were lost."""
    import core.tasks.spf.learning.table as table
    from core.tasks.spf.learning.run import read_config, write_config
    from core.tasks.spf.learning.table import collect_results

    run = _saved(tmp_path)

    def training_goes_on(*a, **k):   # the training process finishes while the table evaluates
        cfg = read_config(run)
        cfg["training"]["wall_seconds"] = 377.0
        cfg.setdefault("metrics", {})["history"] = [{"step": 3000, "val_TSR": 1.0}]
        write_config(run, cfg)
        return {"TSR": 0.5, "DSR": 0.25, "Score": -1.0, "episodes": 100}

    monkeypatch.setattr(table, "validate", training_goes_on)
    messages: list[str] = []
    (res,) = collect_results([run], progress=messages.append)
    cfg = read_config(run)
    assert cfg["training"]["wall_seconds"] == 377.0 and cfg["metrics"]["history"][-1]["step"] == 3000
    assert "test" not in cfg["metrics"]
    assert res.tsr == 0.5 and res.wall_seconds == 377.0
    assert any("still training" in m for m in messages)
