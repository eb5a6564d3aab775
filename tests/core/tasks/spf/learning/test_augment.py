"""Behaviour cloning's view augmentation (entities shuffled and hidden, oracle labels) and the BC / NLM-BC training
settings (easy): the learning rate that made the NLM learn at all, the schedule, hidden layers, residual connections."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def easy():
    from core.tasks.spf.demos import collect_oracle
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.bc import demonstration_rows

    env = SPFEnv("easy", "train")
    trajs, _ = collect_oracle("easy", 6, "train", seed=5)
    obs, act, _ = demonstration_rows(trajs)
    return env.unwrapped, obs, act


def _easy_rules(base, obs: np.ndarray) -> np.ndarray:
    """easy's expert section written out by hand from the layout (an independent check of the labels): Stop when
    the ego is at an intersection and anyone is in one, or the ego is at an intersection and another entity at one
    has priority over it, or the ego is colliding-close to anyone; else Normal."""
    lay = base.layout
    at = obs[:, [lay.index("IsAtInter", i) for i in range(5)]] > 0.5
    inn = obs[:, [lay.index("IsInInter", i) for i in range(5)]] > 0.5
    hp = obs[:, [lay.index("HigherPri", j, 0) for j in range(5)]] > 0.5
    cc = obs[:, [lay.index("CollidingClose", 0, j) for j in range(5)]] > 0.5
    stop = (at[:, 0] & inn.any(1)) | (at[:, 0] & (at & hp).any(1)) | cc.any(1)
    return np.where(stop, 3, 1)


def test_remap_moves_every_predicate_with_its_entities(easy):
    from core.tasks.spf.learning.augment import random_entity_maps, real_entities, remap_views

    base, obs, _ = easy
    blocks = [(o, a) for o, a in base.layout.blocks.values()]
    n_real = real_entities(obs, blocks, 5)
    maps, new_real = random_entity_maps(n_real, 5, np.random.default_rng(0))
    views = remap_views(obs, maps, blocks, 5)
    assert (maps[:, 0] == 0).all()
    assert (real_entities(views, blocks, 5) == new_real).all()
    lay = base.layout
    for b in range(0, len(obs), 7):
        for name, (_, ar) in lay.blocks.items():
            for i in range(5):
                if ar == 1:
                    want = obs[b, lay.index(name, maps[b, i])] if maps[b, i] >= 0 else 0.0
                    assert views[b, lay.index(name, i)] == want
                    continue
                for j in range(5):
                    ok = maps[b, i] >= 0 and maps[b, j] >= 0
                    want = obs[b, lay.index(name, maps[b, i], maps[b, j])] if ok else 0.0
                    assert views[b, lay.index(name, i, j)] == want
    # hidden entities become trailing placeholders: real slots first, then all-zero ones
    assert ((maps >= 0) == (np.arange(5)[None, :] < new_real[:, None])).all()
    # every other real entity is kept at most once
    for row, k in zip(maps, new_real):
        assert len(set(row[:k].tolist())) == k


def test_shuffling_alone_keeps_the_oracle_action(easy):
    from core.tasks.spf.learning.augment import ViewAugmenter, random_entity_maps, real_entities, remap_views

    base, obs, act = easy
    aug = ViewAugmenter(base)
    n_real = real_entities(obs, aug.blocks, 5)
    maps, new_real = random_entity_maps(n_real, 5, np.random.default_rng(1), drop=False)
    assert (new_real == n_real).all()
    views = remap_views(obs, maps, aug.blocks, 5)
    assert (aug.label(views, new_real) == act).all()
    assert (views != obs).any()  # some views really were reordered


def test_augmented_batches_carry_the_oracle_labels(easy):
    from core.tasks.spf.learning.augment import ViewAugmenter

    base, obs, act = easy
    assert (_easy_rules(base, obs) == act).all()
    aug = ViewAugmenter(base, fraction=0.5)
    xb, yb = aug(obs, act, np.random.default_rng(2))
    k = int(round(len(obs) * 0.5))
    assert (xb[k:] == obs[k:]).all() and (yb[k:] == act[k:]).all()
    assert (yb == _easy_rules(base, xb)).all()
    # hiding entities changes some labels (a Stop whose cause went out of view becomes Normal)
    assert (yb[:k] != act[:k]).any()


def test_nlm_bc_default_settings_learn_both_actions(easy, tmp_path):
    """At Adam 1e-3 the NLM's four sigmoid layers stay nearly constant for hundreds of steps and a run keeps a
    policy that stops on every view but the plainest (balanced training accuracy ~0.5-0.85, the same policy for
    every seed). The default learning rate must fit both of easy's actions."""
    from core.tasks.spf.demos import collect_oracle, save_demonstrations
    from core.tasks.spf.learning import train
    from core.tasks.spf.learning.run import load_run

    trajs, meta = collect_oracle("easy", 6, "train", seed=5)
    path = tmp_path / "demos.npz"
    save_demonstrations(path, trajs, meta)
    cfg = train("nlm-bc", "easy", tmp_path / "run", steps=300, seed=0, demos=path, val_episodes=1, test=False,
                tensorboard=False, batch=32, eval_every=300)
    last = cfg["metrics"]["history"][-1]
    assert last["train_balanced_accuracy"] >= 0.9, last
    _, obs, act = easy
    pol = load_run(tmp_path / "run")
    pred = np.array([pol(o) for o in obs])
    assert set(pred.tolist()) == {1, 3}
    assert np.mean([np.mean(pred[act == a] == a) for a in (1, 3)]) >= 0.8


def test_view_augmentation_is_recorded_and_checked(easy, tmp_path):
    from core.tasks.spf.demos import collect_oracle, save_demonstrations
    from core.tasks.spf.learning import train

    trajs, meta = collect_oracle("easy", 3, "train", seed=4)
    path = tmp_path / "demos.npz"
    save_demonstrations(path, trajs, meta)
    cfg = train("mlp-bc", "easy", tmp_path / "run", steps=20, seed=0, demos=path, val_episodes=1, test=False,
                tensorboard=False, batch=32, augment="views")
    assert cfg["training"]["augment"]["kind"] == "views"
    with pytest.raises(ValueError, match="augment"):
        train("mlp-bc", "easy", tmp_path / "bad", steps=5, demos=path, augment="flip")


def test_demonstrations_from_several_worlds(tmp_path, monkeypatch):
    """``n_demos`` split over ``worlds`` worlds seeded demo_seed, demo_seed + 1, …, each share cached in demos/;
    several ``--demos`` files are concatenated."""
    from core.tasks.spf.demos import collect_oracle, save_demonstrations
    from core.tasks.spf.learning.bc import _demos
    from core.tasks.spf.learning.monitor import Monitor

    monkeypatch.chdir(tmp_path)
    trajs, source = _demos("easy", None, 3, 7, Monitor(), worlds=2)
    assert len(trajs) == 3
    assert sorted(p.name for p in (tmp_path / "demos").iterdir()) == ["spf_easy_oracle_1_seed8.npz",
                                                                      "spf_easy_oracle_2_seed7.npz"]
    want, meta = collect_oracle("easy", 1, "train", 8)
    assert np.array_equal(trajs[2].observations, want[0].observations)
    assert np.array_equal(trajs[2].actions, want[0].actions)
    save_demonstrations(tmp_path / "b.npz", want, meta)
    both, source = _demos("easy", [tmp_path / "demos" / "spf_easy_oracle_2_seed7.npz", tmp_path / "b.npz"], 0, 0,
                          Monitor())
    assert len(both) == 3 and "b.npz" in source
    with pytest.raises(ValueError, match="worlds"):
        _demos("easy", None, 2, 0, Monitor(), worlds=3)


def test_cli_refuses_bad_demo_worlds(tmp_path):
    from tests.support.cli import run_main

    r = run_main("spf", "train", "--algo", "mlp-bc", "--mode", "easy", "--out", str(tmp_path / "r"),
                 "--n-demos", "4", "--demo-worlds", "5")
    assert r.returncode == 2
    assert "--demo-worlds must be in 1..--n-demos (4), got 5" in r.stderr
    assert not (tmp_path / "r").exists()
    r = run_main("spf", "train", "--algo", "nlm-bc", "--mode", "easy", "--out", str(tmp_path / "r"),
                 "--nlm-hidden", "-1")
    assert r.returncode == 2 and "--nlm-hidden must be >= 0, got -1" in r.stderr
    assert not (tmp_path / "r").exists()


def test_cosine_learning_rate_factor():
    from core.tasks.spf.learning.bc import lr_factor

    assert [lr_factor("constant", k, 100) for k in (0, 50, 100)] == [1.0, 1.0, 1.0]
    f = [lr_factor("cosine", k, 100) for k in range(101)]
    assert f[0] == 1.0 and f[50] == pytest.approx(0.5) and f[100] == pytest.approx(0.0, abs=1e-12)
    assert all(a > b for a, b in zip(f, f[1:]))
    with pytest.raises(ValueError, match="lr_schedule"):
        lr_factor("step", 1, 10)


def test_learning_rate_schedule_is_applied_and_recorded(tmp_path):
    """Same seed and demonstrations, 20 steps: the cosine run's weights differ from the constant run's (its
    rates shrink), and config.yaml records the schedule."""
    from safetensors.numpy import load_file

    from core.tasks.spf.demos import collect_oracle, save_demonstrations
    from core.tasks.spf.learning import train

    trajs, meta = collect_oracle("easy", 2, "train", seed=4)
    path = tmp_path / "demos.npz"
    save_demonstrations(path, trajs, meta)
    weights = {}
    for schedule in ("constant", "cosine"):
        cfg = train("mlp-bc", "easy", tmp_path / schedule, steps=20, seed=0, demos=path, val_episodes=1,
                    test=False, tensorboard=False, batch=32, eval_every=20, lr_schedule=schedule)
        assert cfg["training"]["lr_schedule"] == schedule
        weights[schedule] = load_file(str(tmp_path / schedule / "model.safetensors"))
    assert weights["constant"].keys() == weights["cosine"].keys()
    assert any(not np.array_equal(weights["constant"][k], weights["cosine"][k]) for k in weights["constant"])
    with pytest.raises(ValueError, match="lr_schedule"):
        train("mlp-bc", "easy", tmp_path / "bad", steps=5, demos=path, lr_schedule="step")


def test_residual_nlm_is_built_recorded_and_reloaded(easy, tmp_path):
    """``nlm_residual``: the run's architecture says so, every layer reads the inputs and all earlier layers'
    predicates (so does the ego's read-out: easy's 7 unary input predicates plus 4 layers x 8 invented ones), the
    saved run reloads; only an NLM learner takes it."""
    import torch

    from core.tasks.spf.demos import collect_oracle, save_demonstrations
    from core.tasks.spf.learning import train
    from core.tasks.spf.learning.run import load_run

    trajs, meta = collect_oracle("easy", 2, "train", seed=4)
    path = tmp_path / "demos.npz"
    save_demonstrations(path, trajs, meta)
    cfg = train("nlm-bc", "easy", tmp_path / "run", steps=10, seed=0, demos=path, val_episodes=1, test=False,
                tensorboard=False, batch=16, eval_every=10, nlm_residual=True)
    assert cfg["architecture"]["nlm"]["residual"] is True
    pol = load_run(tmp_path / "run")
    nlm = pol.net.features_extractor.nlm
    assert nlm.residual
    assert [layer.input_dims[1] for layer in nlm.layers] == [7, 15, 23, 31]
    assert pol.net.features_extractor.features_dim == 7 + 4 * 8
    _, obs, _ = easy
    x = torch.from_numpy(obs[:8])
    with torch.no_grad():
        assert pol.net(x).shape == (8, 4)
    with pytest.raises(ValueError, match="NLM"):
        train("gnn-bc", "easy", tmp_path / "bad", steps=5, demos=path, nlm_residual=True)


def test_nlm_bc_hidden_layer_default_and_option(tmp_path):
    """NLM-BC's logic MLPs have a hidden ReLU layer of 32 by default (and with ``nlm_hidden=32``); with
    ``nlm_hidden=0`` each is one linear layer and a sigmoid (breadth, depth and the 8 invented predicates per
    layer unchanged); the choice is recorded and reloaded; a negative width and a non-NLM learner are refused."""
    from torch import nn

    from core.tasks.spf.demos import collect_oracle, save_demonstrations
    from core.tasks.spf.learning import train
    from core.tasks.spf.learning.run import load_run

    trajs, meta = collect_oracle("easy", 2, "train", seed=4)
    path = tmp_path / "demos.npz"
    save_demonstrations(path, trajs, meta)
    linears = {}
    for hidden in (None, 0, 32):
        out = tmp_path / f"h{hidden}"
        cfg = train("nlm-bc", "easy", out, steps=5, seed=0, demos=path, val_episodes=1, test=False,
                    tensorboard=False, batch=16, eval_every=5, nlm_hidden=hidden)
        nlm_arch = cfg["architecture"]["nlm"]
        assert (nlm_arch["breadth"], nlm_arch["depth"], nlm_arch["output_dims"]) == (3, 4, 8)
        nlm = load_run(out).net.features_extractor.nlm
        mlp = next(m for m in nlm.layers[0].mlps if not isinstance(m, nn.Identity))
        linears[hidden] = [m.out_features for m in mlp if isinstance(m, nn.Linear)]
        assert list(nlm_arch.get("hidden_dims", [])) == linears[hidden][:-1]
    assert linears == {None: [32, 8], 0: [8], 32: [32, 8]}
    with pytest.raises(ValueError, match="nlm_hidden"):
        train("nlm-bc", "easy", tmp_path / "bad", steps=5, demos=path, nlm_hidden=-1)
    with pytest.raises(ValueError, match="NLM"):
        train("mlp-bc", "easy", tmp_path / "bad2", steps=5, demos=path, nlm_hidden=8)
