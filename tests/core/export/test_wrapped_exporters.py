"""The VAP dataset and study question-bank generators wrapped as exporters: same data as the generators write on
their own, read back by their own loaders, with the export manifest."""
from __future__ import annotations

import json

from core.export.runner import run_export
from tests.support.export import folder_bytes


def test_vap_export_equals_the_generator_world_by_world(tmp_path):
    from core.tasks.vap.dataset import generate
    from core.tasks.vap.settings import VapDataConfig

    opts = {"train_worlds": 1, "val_worlds": 0, "test_worlds": 1, "steps": 4, "ppc": 2, "seed": 3}
    report = run_export("vap", opts, tmp_path / "exp", backend="inline")
    assert report.manifest["counts"]["worlds"] == 2 and report.manifest["counts"]["frames"] == 6
    generate(VapDataConfig(mode="easy", worlds={"train": 1, "val": 0, "test": 1}, steps=4, px_per_cell=2, seed=3,
                           workers=1), tmp_path / "gen")
    ours = {k: v for k, v in folder_bytes(tmp_path / "exp" / "vap").items() if "/world_" in k}
    theirs = {k: v for k, v in folder_bytes(tmp_path / "gen").items() if "/world_" in k}
    assert sorted(ours) == sorted(theirs) and len(ours) >= 8
    assert all(ours[k] == theirs[k] for k in ours)
    info = json.loads((tmp_path / "exp" / "vap" / "dataset_info.json").read_text())
    assert info["status"] == "complete" and info["splits"]["test"]["worlds_done"] == 1
    from core.tasks.vap.torchdata import VapFrames  # the VAP training loader reads the export

    frames = VapFrames(tmp_path / "exp" / "vap", "test", min_step=1)
    assert len(frames) == 3 and frames[0]["image"].shape[0] == 3


def test_study_export_writes_a_loadable_bank(tmp_path):
    from core.study.design import load_study

    opts = {"questions": 6, "training": 2, "practice": 1, "worlds": 1, "steps": 25, "concepts": ""}
    report = run_export("study", opts, tmp_path / "s", backend="inline")
    study = load_study(tmp_path / "s" / "study")
    assert len(study.test) == 6 == report.manifest["counts"]["questions"]
    assert {f["path"] for f in report.manifest["files"]} == {"study/study.yaml", "study/questions.jsonl"}
