"""Behaviour cloning's view augmentation (entities shuffled and hidden, oracle labels) and the NLM-BC training
settings that made the NLM learn at all (easy)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def easy():
    from core.tasks.spf import SPFEnv
    from core.tasks.spf_demos import collect_oracle
    from core.tasks.spf_learning.bc import demonstration_rows

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
    from core.tasks.spf_learning.augment import random_entity_maps, real_entities, remap_views

    base, obs, _ = easy
    blocks = [(o, a) for o, a in base.layout.blocks.values()]
    n_real = real_entities(obs, blocks, 5)
    maps, new_real = random_entity_maps(n_real, 5, np.random.default_rng(0))
    views = remap_views(obs, maps, blocks, 5)
    assert (maps[:, 0] == 0).all()
    assert (real_entities(views, blocks, 5) == new_real).all()
    lay = base.layout
    for b in range(0, len(obs), 7):
        for name, (off, ar) in lay.blocks.items():
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
    from core.tasks.spf_learning.augment import ViewAugmenter, random_entity_maps, real_entities, remap_views

    base, obs, act = easy
    aug = ViewAugmenter(base)
    n_real = real_entities(obs, aug.blocks, 5)
    maps, new_real = random_entity_maps(n_real, 5, np.random.default_rng(1), drop=False)
    assert (new_real == n_real).all()
    views = remap_views(obs, maps, aug.blocks, 5)
    assert (aug.label(views, new_real) == act).all()
    assert (views != obs).any()  # some views really were reordered


def test_augmented_batches_carry_the_oracle_labels(easy):
    from core.tasks.spf_learning.augment import ViewAugmenter

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
    """Regression: with the old default (Adam 1e-3) the NLM's four sigmoid layers stayed nearly constant for
    hundreds of steps and the run kept a policy that stops on every view but the plainest — balanced training
    accuracy ~0.5-0.85, the same policy for every seed. The default learning rate must fit both of easy's actions."""
    from core.tasks.spf_demos import collect_oracle, save_demonstrations
    from core.tasks.spf_learning import train
    from core.tasks.spf_learning.run import load_run

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
    from core.tasks.spf_demos import collect_oracle, save_demonstrations
    from core.tasks.spf_learning import train

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
    from core.tasks.spf_demos import collect_oracle, save_demonstrations
    from core.tasks.spf_learning.bc import _demos
    from core.tasks.spf_learning.monitor import Monitor

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
