"""main.py vap make / train / eval end to end on a tiny dataset (2 px per cell, 16 steps). In-process through
the same entry point main.py uses (core.cli.run_cli), which keeps torch's import to one per test run."""
from __future__ import annotations

import json

import pytest


@pytest.fixture
def cli(capsys):
    import torch

    from core.cli import run_cli

    threads = torch.get_num_threads()

    def run(*args: str) -> tuple[int, str, str]:
        code = run_cli(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    yield run
    torch.set_num_threads(threads)


def test_make_train_eval(tmp_path, cli):
    data, run = tmp_path / "data", tmp_path / "run"
    code, out, err = cli("vap", "make", "--worlds", "1/1/1", "--steps", "16", "--ppc", "2", "--workers", "1",
                         "--quiet", "--out", str(data))
    assert code == 0, err
    assert "3 world(s) made" in out and "status complete" in out
    code, out, err = cli("vap", "train", "--model", "gnn", "--data", str(data), "--out", str(run), "--epochs", "1",
                         "--reasoning-epochs", "1", "--image-side", "64", "--threads", "1", "--quiet")
    assert code == 0, err
    assert "best on validation" in out
    assert (run / "model.safetensors").is_file() and (run / "config.yaml").is_file()
    assert list((run / "tb").iterdir()), "no TensorBoard log"
    code, out, err = cli("vap", "eval", "--run", str(run), "--data", str(data), "--json", str(tmp_path / "m.json"))
    assert code == 0, err
    for word in ("Slow", "Normal", "Fast", "Stop", "aAcc", "wAcc", "Num. Actions", "IsAtInter", "NextTo"):
        assert word in out
    figures = json.loads((tmp_path / "m.json").read_text())
    assert figures["groundings"] == "predicted" and figures["stage"] == "test"
    assert 0.0 <= figures["actions"]["aAcc"] <= 1.0
    code, out, err = cli("vap", "eval", "--run", str(run), "--data", str(tmp_path / "nothing"))
    assert code == 1 and "not a VAP dataset" in err
    code, out, err = cli("vap", "make", "--worlds", "1/1", "--out", str(tmp_path / "bad"))
    assert code == 1 and "TRAIN/VAL/TEST" in err


def test_paper_preset_runs_a_few_steps_on_cpu(tmp_path, cli):
    """The GPU configuration's command (docs/vap.md) on a CPU: ResNet-50 + FPN 256, stopped by --max-steps (at a
    small --image-side here to keep the test short; docs/vap.md records the 1024² smoke run)."""
    import yaml

    from tests.support.vap import make_tiny

    data, run = tmp_path / "data", tmp_path / "run"
    make_tiny(data, worlds={"train": 1, "val": 1, "test": 0})
    code, out, err = cli("vap", "train", "--model", "gnn", "--setting", "modular", "--preset", "paper",
                         "--data", str(data), "--out", str(run), "--epochs", "1", "--reasoning-epochs", "1",
                         "--max-steps", "2", "--image-side", "64", "--device", "cpu", "--threads", "1", "--quiet")
    assert code == 0, err
    assert "trained from scratch instead of frozen" in out and "stopped" in out
    doc = yaml.safe_load((run / "config.yaml").read_text())
    assert doc["model"]["backbone"] == "resnet50" and doc["model"]["fpn_channels"] == 256
    assert doc["model"]["freeze_backbone"] is False and doc["training"]["stopped_early"] is True
    assert doc["training"]["max_steps"] == 2
