"""`main.py export`: the exporters listed with their options, an export into a folder with its summary, a rerun that
resumes (nothing to do), and bad options / folders as clean errors before any work."""
import json
import subprocess
import sys

from tests.support.paths import ROOT


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, "main.py", "export", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_export_list_names_every_exporter_and_its_flags():
    r = _run("list")
    assert r.returncode == 0, r.stderr
    for name in ("episodes", "spf", "parquet", "video", "pddl"):
        assert f"\n{name} " in "\n" + r.stdout
    assert "--per-shard" in r.stdout and "--format" in r.stdout and "[minari|npz]" in r.stdout


def test_export_runs_then_resumes(tmp_path):
    out = tmp_path / "pddl"
    r = _run("pddl", "--episodes", "2", "--per-shard", "1", "--out", str(out), "--backend", "inline", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "export pddl: " in r.stdout and "2 problems" in r.stdout and "2 shard(s) run, 0 already done" in r.stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "pddl" and manifest["options"]["per_shard"] == 1
    again = _run("pddl", "--episodes", "2", "--per-shard", "1", "--out", str(out), "--backend", "inline", "--quiet")
    assert again.returncode == 0 and "0 shard(s) run, 2 already done" in again.stdout


def test_bad_options_and_folders_are_clean_errors(tmp_path):
    r = _run("episodes", "--episodes", "0", "--out", str(tmp_path / "a"), "--quiet")
    assert r.returncode == 1 and "--episodes must be >= 1" in r.stderr and "Traceback" not in r.stderr
    r = _run("episodes", "--episodes", "x", "--out", str(tmp_path / "a"), "--quiet")
    assert r.returncode == 1 and "must be a whole number" in r.stderr
    (tmp_path / "f").write_text("a file")
    r = _run("episodes", "--out", str(tmp_path / "f"), "--quiet")
    assert r.returncode == 1 and "not a folder" in r.stderr
    r = _run("episodes", "--backend", "nope", "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and "invalid choice" in r.stderr
    from core.export.video import mp4_encoder

    if mp4_encoder() is None:   # this box has no MP4 encoder: refused with the reason, nothing written
        r = _run("video", "--format", "mp4", "--out", str(tmp_path / "v"), "--quiet")
        assert r.returncode == 1 and "MP4 encoder" in r.stderr and not (tmp_path / "v").exists()
