"""SPF demonstrations export: a real Minari dataset that minari.load_dataset opens, and the NPZ option."""
from __future__ import annotations

import json

import numpy as np

from core.export.runner import run_export
from core.tasks.spf.demos import load_demonstrations


def test_minari_dataset_opens_and_matches_the_shards(tmp_path, monkeypatch):
    import minari

    out = tmp_path / "spf"
    opts = {"mode": "easy", "episodes": 3, "per_shard": 2, "seed": 5}
    report = run_export("spf", opts, out, backend="inline")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["minari"]["dataset_id"] == "logicity/spf-easy-train-oracle-v0"
    assert manifest["seeds"] == {"shard-00000": 5, "shard-00001": 7}
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(out / "minari"))
    ds = minari.load_dataset("logicity/spf-easy-train-oracle-v0")
    assert ds.total_episodes == 3 and ds.total_steps == manifest["counts"]["steps"] == report.manifest["counts"]["steps"]
    assert ds.spec.env_spec.id == "LogiCity/SPF-easy-v0" and ds.spec.env_spec.kwargs["split"] == "train"
    shards = load_demonstrations(out / "shards/spf_00000.npz")[0] + load_demonstrations(out / "shards/spf_00001.npz")[0]
    for ep, tr in zip(ds.iterate_episodes(), shards):
        np.testing.assert_array_equal(ep.actions, tr.actions)
        np.testing.assert_allclose(ep.observations, tr.observations)
        np.testing.assert_array_equal(ep.infos["oracle_action"], tr.infos["oracle_action"])
        assert bool(ep.terminations[-1] or ep.truncations[-1])
    assert ds.action_space.n == 4 and ds.observation_space.shape == (shards[0].observations.shape[1],)


def test_npz_format_merges_the_shards(tmp_path):
    out = tmp_path / "npz"
    run_export("spf", {"mode": "easy", "episodes": 2, "per_shard": 1, "format": "npz"}, out, backend="inline")
    trajs, meta = load_demonstrations(out / "spf_demos.npz")
    assert len(trajs) == 2 and meta["total_episodes"] == 2 and meta["seeds"] == [0, 1]
    one = load_demonstrations(out / "shards/spf_00001.npz")[0][0]
    np.testing.assert_array_equal(trajs[1].actions, one.actions)
    assert not (out / "minari").exists()


def test_a_shard_does_not_depend_on_what_its_worker_ran_before(tmp_path):
    """Pool and Ray workers run shards in any order; a shard's bytes must not depend on the worker's history."""
    from core.export import spf

    opts = spf.SPEC.normalise({"mode": "easy", "episodes": 4, "per_shard": 2, "seed": 1})
    shards = spf.plan(opts)
    spf._ENVS.clear()
    alone = spf.run_shard(opts, shards[1], tmp_path / "a")
    spf.run_shard(opts, shards[0], tmp_path / "b")
    after = spf.run_shard(opts, shards[1], tmp_path / "b")            # same env object, reused
    assert (tmp_path / "a" / alone.files[0]).read_bytes() == (tmp_path / "b" / after.files[0]).read_bytes()
