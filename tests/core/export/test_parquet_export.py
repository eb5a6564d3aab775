"""Parquet export: loadable with datasets.load_dataset, rows equal to the episode files of the same seeds."""
from __future__ import annotations

import json

import numpy as np

from core.export.parquet import SCHEMA
from core.export.runner import run_export
from core.sim.episode import load_episode


def test_parquet_loads_with_datasets_and_matches_episodes(tmp_path):
    import datasets
    import pyarrow.parquet as pq

    opts = {"episodes": 3, "steps": 8, "seed": 2, "per_shard": 2}
    run_export("parquet", opts, tmp_path / "pq", backend="inline")
    run_export("episodes", opts, tmp_path / "ep", backend="inline")
    files = sorted(str(p) for p in (tmp_path / "pq" / "data").glob("*.parquet"))
    assert len(files) == 2
    ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(tmp_path / "hf"))
    table = pq.read_table(files).to_pandas()
    assert [c for c, _, _ in SCHEMA] == ds.column_names[:len(SCHEMA)]
    assert ds.num_rows == len(table)
    manifest = json.loads((tmp_path / "pq" / "manifest.json").read_text())
    assert manifest["counts"]["rows"] == ds.num_rows and manifest["parquet"]["schema"][0]["name"] == "episode"
    for e in range(3):
        ep = load_episode(tmp_path / "ep" / "episodes" / f"episode_{e:05d}.npz")
        rows = table[table.episode == e].sort_values(["step", "agent"])
        n = len(ep.agents)
        assert len(rows) == ep.num_steps * n and set(rows.seed) == {2 + e}
        np.testing.assert_array_equal(rows.row.to_numpy().reshape(-1, n), ep.array("positions")[:-1, :, 0])
        np.testing.assert_array_equal(rows.next_col.to_numpy().reshape(-1, n), ep.array("positions")[1:, :, 1])
        np.testing.assert_array_equal(rows.decided.to_numpy().reshape(-1, n), ep.array("decided"))
        np.testing.assert_array_equal(rows.holds_stop.to_numpy().reshape(-1, n), ep.array("holds")[..., 3])
        assert list(rows.agent_name[:n]) == list(ep.agents.names)
    row = ds[0]
    assert isinstance(row["witness"], list) and row["kind"] in ("Car", "Pedestrian")
