"""main.py vap make / train / eval end to end on a tiny dataset (2 px per cell, 16 steps)."""
from __future__ import annotations

import json

from tests.support.cli import run_main


def test_make_train_eval(tmp_path):
    data, run = tmp_path / "data", tmp_path / "run"
    r = run_main("vap", "make", "--worlds", "1/1/1", "--steps", "16", "--ppc", "2", "--workers", "1", "--quiet",
                 "--out", str(data))
    assert r.returncode == 0, r.stderr
    assert "3 world(s) made" in r.stdout and "status complete" in r.stdout
    r = run_main("vap", "train", "--model", "gnn", "--data", str(data), "--out", str(run), "--epochs", "1",
                 "--reasoning-epochs", "1", "--image-side", "64", "--threads", "1", "--quiet")
    assert r.returncode == 0, r.stderr
    assert (run / "model.safetensors").is_file() and (run / "config.yaml").is_file()
    assert list((run / "tb").iterdir()), "no TensorBoard log"
    r = run_main("vap", "eval", "--run", str(run), "--data", str(data), "--json", str(tmp_path / "m.json"))
    assert r.returncode == 0, r.stderr
    for word in ("Slow", "Normal", "Fast", "Stop", "aAcc", "wAcc", "Num. Actions", "IsAtInter", "NextTo"):
        assert word in r.stdout
    figures = json.loads((tmp_path / "m.json").read_text())
    assert figures["groundings"] == "predicted" and figures["stage"] == "test"
    assert 0.0 <= figures["actions"]["aAcc"] <= 1.0
    r = run_main("vap", "eval", "--run", str(run), "--data", str(tmp_path / "nothing"))
    assert r.returncode == 1 and "not a VAP dataset" in r.stderr
