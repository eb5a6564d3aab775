"""Backends: the local process pool and a local Ray cluster give byte-identical output to one process; a shard
that fails is retried and reported."""
from __future__ import annotations

import pytest

from core.export.registry import ExportError
from core.export.runner import run_export
from core.export.shards import FAULT_ENV
from tests.support.export import assert_same_export

OPTS = {"episodes": 3, "steps": 12, "seed": 11}


@pytest.fixture(scope="module")
def inline_export(tmp_path_factory):
    out = tmp_path_factory.mktemp("inline") / "out"
    run_export("episodes", OPTS, out, backend="inline")
    return out


def _faults(tmp_path, monkeypatch, *shards: str):
    f = tmp_path / "faults.txt"
    f.write_text("\n".join(shards))
    monkeypatch.setenv(FAULT_ENV, str(f))
    return f


def test_local_pool_equals_one_process_and_retries(tmp_path, monkeypatch, inline_export):
    faults = _faults(tmp_path, monkeypatch, "shard-00001")
    report = run_export("episodes", OPTS, tmp_path / "pool", backend="local", workers=2)
    assert report.workers == 2 and sorted(report.ran) == ["shard-00000", "shard-00001", "shard-00002"]
    assert [(f.shard, f.attempt) for f in report.failures] == [("shard-00001", 1)]
    assert "injected fault" in report.failures[0].error and faults.read_text() == ""
    assert_same_export(tmp_path / "pool", inline_export)


def test_a_worker_process_that_dies_is_reported_and_its_shard_rerun(tmp_path, monkeypatch, inline_export):
    faults = _faults(tmp_path, monkeypatch, "crash:shard-00000")
    report = run_export("episodes", OPTS, tmp_path / "pool", backend="local", workers=2)
    assert faults.read_text() == ""                                   # the worker really exited
    assert any(f.shard == "shard-00000" and "worker process died" in f.error for f in report.failures)
    assert_same_export(tmp_path / "pool", inline_export)


def test_a_shard_failing_every_retry_stops_the_export_naming_it(tmp_path, monkeypatch):
    _faults(tmp_path, monkeypatch, "shard-00000", "shard-00000", "shard-00000")
    with pytest.raises(ExportError, match="shard shard-00000 failed 2 time"):
        run_export("episodes", {"episodes": 1, "steps": 2}, tmp_path / "out", backend="inline", retries=1)
    assert not (tmp_path / "out" / "manifest.json").exists()


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    """A local 2-CPU Ray cluster; its workers inherit a fault file (set before they start) the test fills."""
    ray = pytest.importorskip("ray")
    faults = tmp_path_factory.mktemp("ray") / "faults.txt"
    faults.write_text("")
    mp = pytest.MonkeyPatch()
    mp.setenv(FAULT_ENV, str(faults))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield faults
    ray.shutdown()
    mp.undo()


@pytest.mark.slow
def test_ray_equals_one_process_and_reports_retries(tmp_path, inline_export, ray_cluster):
    ray_cluster.write_text("shard-00002")
    report = run_export("episodes", OPTS, tmp_path / "ray", backend="ray")
    assert report.backend == "ray" and report.workers == 2 and sorted(report.ran) == [
        "shard-00000", "shard-00001", "shard-00002"]
    assert [(f.shard, f.attempt) for f in report.failures] == [("shard-00002", 1)]
    assert "injected fault" in report.failures[0].error and ray_cluster.read_text() == ""
    assert_same_export(tmp_path / "ray", inline_export)
