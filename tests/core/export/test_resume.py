"""Resuming an export after a real kill gives byte-identical output; finished shards are not run again."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from core.export.registry import ExportError
from core.export.runner import MANIFEST, STATE_DIR, run_export
from core.sim.episode import load_episode
from tests.support.export import assert_same_export
from tests.support.paths import ROOT

OPTS = {"episodes": 5, "steps": 150, "seed": 3}


def test_killed_export_resumes_to_identical_bytes(tmp_path):
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    cmd = [sys.executable, str(ROOT / "main.py"), "export", "episodes", "--episodes", "5", "--steps", "150",
           "--seed", "3", "--backend", "inline", "--quiet", "--out", str(killed)]
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    first = killed / STATE_DIR / "shard-00000.json"
    deadline = time.monotonic() + 120
    while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert first.exists(), proc.stderr.read().decode()
    assert not (killed / MANIFEST).exists(), "the export finished before it was killed"
    done_before = sorted(p.name for p in (killed / STATE_DIR).glob("shard-*.json"))
    assert len(done_before) < 5

    report = run_export("episodes", OPTS, killed, backend="inline")
    assert sorted(report.skipped) == [n[:-5] for n in done_before]
    assert len(report.ran) == 5 - len(done_before)
    run_export("episodes", OPTS, clean, backend="inline")
    assert_same_export(killed, clean)

    manifest = json.loads((clean / MANIFEST).read_text())
    assert manifest["counts"]["episodes"] == 5 and manifest["counts"]["steps"] == 750
    assert manifest["seeds"] == {f"shard-{i:05d}": [3 + i] for i in range(5)}
    ep = load_episode(clean / "episodes" / "episode_00004.npz")
    assert ep.num_steps == 150 and ep.meta["seed"] == 7


def test_changed_file_is_redone_and_other_export_refused(tmp_path):
    out = tmp_path / "out"
    opts = {"episodes": 2, "steps": 5}
    run_export("episodes", opts, out, backend="inline")
    target = out / "episodes" / "episode_00001.npz"
    good = target.read_bytes()
    target.write_bytes(good[:-10])                       # damaged after the export: its shard runs again
    report = run_export("episodes", opts, out, backend="inline")
    assert report.ran == ["shard-00001"] and target.read_bytes() == good
    with pytest.raises(ExportError, match="holds another export"):
        run_export("episodes", {"episodes": 2, "steps": 6}, out, backend="inline")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match="not empty"):
        run_export("episodes", opts, tmp_path / "busy", backend="inline")
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"
    with pytest.raises(ExportError, match="--steps must be >= 0"):
        run_export("episodes", {"steps": -1}, tmp_path / "x", backend="inline")


def test_one_run_per_folder(tmp_path):
    from core.io.fileio import host_tag

    out = tmp_path / "out"
    run_export("episodes", {"episodes": 1, "steps": 2}, out, backend="inline")
    assert not (out / STATE_DIR / "lock").exists()                 # released after the run
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / STATE_DIR / "lock").write_text(f"{host_tag()} {other.pid}\n")
        with pytest.raises(ExportError, match=f"another export \\(process {other.pid}\\)"):
            run_export("episodes", {"episodes": 1, "steps": 2}, out, backend="inline")
    finally:
        other.kill()
        other.wait()
    report = run_export("episodes", {"episodes": 1, "steps": 2}, out, backend="inline")   # its process is gone
    assert report.skipped == ["shard-00000"]
