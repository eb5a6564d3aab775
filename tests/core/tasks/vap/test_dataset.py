"""VAP dataset generation: labels against the simulator, manifest, determinism, loading, cancel and resume."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.support.paths import ROOT
from tests.support.vap import STEPS, make_tiny, tiny_config


def _rows(folder: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(folder / "frames.parquet").to_pylist()


def test_labels_match_the_simulator_and_renderer(tiny_vap):
    from core.base.codes import Action
    from core.render.renderer import Renderer
    from core.sim.simulation import Simulation
    from core.tasks.vap.dataset import _icon_set, load_stage_configs
    from core.tasks.vap.labels import direction_heading

    out, _ = tiny_vap
    cfg = tiny_config()
    rows = {r["step"]: r for r in _rows(out / "train" / "world_0000")}
    assert rows and set(rows) <= set(range(1, STEPS))
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["splits"]["train"]["frames"] == len(rows)
    assert sorted(set(range(1, STEPS)) - set(rows)) == info["splits"]["train"]["worlds"][0]["dropped"]
    sim_cfg = load_stage_configs(cfg)["train"]
    sim = Simulation(sim_cfg, seed=cfg.world_seed("train", 0), record=False)
    unary_names = info["unary_predicates"]
    binary_names = info["binary_predicates"]
    renderer = Renderer(sim.city, icons=_icon_set(cfg), px_per_cell=2, seed=0)
    checked = 0
    for k in range(STEPS - 1):
        snap = sim.snapshot()
        g, d = sim.decide(snap)
        outcome = sim.step(prepared=(g, d))
        row = rows.get(k)
        if row is None:
            continue
        n = len(snap.agents)
        assert row["agent_id"] == list(snap.agents.names)
        assert row["action"] == [int(a) for a in outcome.decided]
        # the decision of the state shown: Stop exactly when the rules derived Stop and nothing faster
        for i in range(n):
            if d.holds[i, Action.STOP] and not d.holds[i, :3].any():
                assert row["action"][i] == Action.STOP
        for j, p in enumerate(unary_names):
            assert [u[j] for u in row["unary"]] == [bool(v) for v in g.unary(p)]
        for a in range(n):
            view = set(int(x) for x in g.entities(a))
            assert {b for b in range(n) if row["sees"][a][b]} == view
            for b in view - {a}:   # a pair inside a's view carries the simulator's truth
                for j, p in enumerate(binary_names):
                    assert row["binary"][a][b][j] == g.truth(p, a, b)
        dpos = sim.positions - snap.positions
        for i, name in enumerate(row["direction"]):
            expect = "right" if dpos[i, 1] > 0 else "left" if dpos[i, 1] < 0 else \
                "down" if dpos[i, 0] > 0 else "up" if dpos[i, 0] < 0 else "none"
            assert name == expect
        heads = np.array([direction_heading(x) for x in row["direction"]])
        frame = renderer.render(snap, crop=(0, 0, 128, 128), headings=heads)
        for i in range(n):
            if heads[i] >= 0:     # with heading none the orientation comes from earlier frames
                assert tuple(row["box"][i]) == frame.boxes[i]
            x1, y1, x2, y2 = row["box"][i]
            assert 0 <= x1 < x2 <= 256 and 0 <= y1 < y2 <= 256
            assert row["h"][i][:4] == pytest.approx([x1 / 256, y1 / 256, x2 / 256, y2 / 256])
        pri = np.array(row["priority"], float)
        assert [h[8] for h in row["h"]] == pytest.approx(list(pri / pri.max()))
        assert (out / row["image"]).is_file()
        checked += 1
    assert checked >= 5


def test_manifest_counts_hashes_and_seeds(tiny_vap):
    from core.tasks.vap.settings import file_sha256

    out, res = tiny_vap
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["status"] == "complete" and info["format"] == "logicity-vap"
    assert info["config_hashes"]["rules"] == file_sha256(ROOT / "configs" / "rules" / "vap_easy.rules")
    assert info["config_hashes"]["agents_val"] == file_sha256(ROOT / "configs" / "agents" / "vap" / "easy" /
                                                              "val.yaml")
    assert info["splits"]["val"]["worlds"][0]["seed"] == 1     # n_train + w
    for stage in ("train", "val"):
        counts = {a: 0 for a in info["actions"]}
        for r in _rows(out / stage / "world_0000"):
            if r["step"] > 10:
                for t, a in zip(r["type"], r["action_name"]):
                    if t == "Car":
                        counts[a] += 1
        assert info["splits"][stage]["num_actions"] == counts
    assert len(info["unary_predicates"]) == 11 and len(info["binary_predicates"]) == 6
    assert res.frames == info["splits"]["train"]["frames"] + info["splits"]["val"]["frames"]


def test_same_seed_same_bytes_other_seed_other_data(tiny_vap, tmp_path):
    out, _ = tiny_vap
    make_tiny(tmp_path / "again", workers=2)    # two worker processes; the fixture made its worlds in-process
    for stage in ("train", "val"):
        a, b = out / stage / "world_0000", tmp_path / "again" / stage / "world_0000"
        assert _rows(a) == _rows(b)
        names = sorted(p.name for p in a.iterdir())
        assert names == sorted(p.name for p in b.iterdir()) and any(n.endswith(".png") for n in names)
        assert all((a / n).read_bytes() == (b / n).read_bytes() for n in names)
    a = out / "train" / "world_0000"
    make_tiny(tmp_path / "other", worlds={"train": 1}, seed=7)
    assert _rows(tmp_path / "other" / "train" / "world_0000") != _rows(a)


def test_own_direction_is_the_current_heading(tmp_path):
    from core.sim.simulation import Simulation
    from core.tasks.vap.dataset import load_stage_configs
    from core.tasks.vap.labels import own_directions

    cfg = tiny_config(worlds={"train": 1}, direction="own")
    make_tiny(tmp_path / "own", worlds={"train": 1}, direction="own")
    rows = {r["step"]: r for r in _rows(tmp_path / "own" / "train" / "world_0000")}
    sim = Simulation(load_stage_configs(cfg)["train"], seed=0, record=False)
    for k in range(STEPS - 1):
        heads = sim.snapshot().headings.copy()
        sim.step()
        if k in rows:
            assert rows[k]["direction"] == own_directions(heads)


def test_loads_with_hugging_face_datasets_and_the_torch_dataset(tiny_vap):
    from datasets import load_dataset

    from core.tasks.vap.torchdata import VapFrames

    out, _ = tiny_vap
    ds = load_dataset("parquet", data_files={"train": str(out / "train" / "world_*" / "frames.parquet"),
                                             "validation": str(out / "val" / "world_*" / "frames.parquet")})
    assert ds["train"].num_rows == json.loads((out / "dataset_info.json").read_text())["splits"]["train"]["frames"]
    assert len(ds["train"][0]["h"][0]) == 9
    frames = VapFrames(out, "val", image_side=64)
    assert len(frames) > 0 and all(it["step"] > 10 for it in frames.items)
    item = frames[0]
    n = item["h"].shape[0]
    assert item["image"].shape == (3, 64, 64) and 0 <= float(item["image"].min()) and float(item["image"].max()) <= 1
    assert item["unary"].shape == (n, 11) and item["binary"].shape == (n, n, 6) and item["sees"].shape == (n, n)
    assert float(item["boxes"].max()) <= 64
    assert item["car"].sum() > 0


def test_cancel_discards_the_world_in_progress_and_a_rerun_completes(tmp_path):
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 4

    from core.tasks.vap import generate

    out = tmp_path / "c"

    res = generate(tiny_config(worlds={"train": 1}), out, cancel=cancel)
    assert res.cancelled and res.made == 0
    assert not (out / "train" / "world_0000").exists()
    assert not list((out / "train").glob(".world_*"))
    assert json.loads((out / "dataset_info.json").read_text())["status"] == "incomplete"
    res = generate(tiny_config(worlds={"train": 1}), out)
    assert res.made == 1 and not res.cancelled
    with pytest.raises(Exception, match="other settings"):
        generate(tiny_config(worlds={"train": 1}, seed=3), out)


def test_resume_after_a_killed_generation(tmp_path, tiny_vap):
    out = tmp_path / "killed"
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from tests.support.vap import make_tiny\n"
            "if __name__ == '__main__':\n"
            "    make_tiny(__import__('pathlib').Path(%r), worlds={'train': 6}, steps=30, workers=2)\n"
            ) % (str(ROOT), str(out))
    # its own process group, so that the kill takes the worker processes too: an orphaned worker would go on
    # writing worlds (and race the resume below), as it did on a loaded CI box
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not (out / "train" / "world_0000" / "world.json").exists():
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the first world never finished"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        proc.stderr.close()
    done_before = sorted(p.parent.name for p in (out / "train").glob("world_*/world.json"))
    assert 1 <= len(done_before) < 6      # two workers: killed well before the sixth world
    before = {n: (out / "train" / n / "frames.parquet").stat().st_mtime_ns for n in done_before}
    from core.tasks.vap import generate

    res = generate(tiny_config(worlds={"train": 6}, steps=30), out)
    assert res.skipped == len(done_before) and res.made == 6 - len(done_before)
    assert {n: (out / "train" / n / "frames.parquet").stat().st_mtime_ns for n in done_before} == before
    assert not list((out / "train").glob(".world_*"))
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["status"] == "complete" and info["splits"]["train"]["worlds_done"] == 6
    assert not (out / ".generating.lock").exists()
    # the resumed dataset is the one an uninterrupted run writes, file for file and byte for byte
    fresh = tmp_path / "fresh"
    generate(tiny_config(worlds={"train": 6}, steps=30, workers=1), fresh)
    names = sorted(str(p.relative_to(fresh)) for p in fresh.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    for n in names:
        if n != "dataset_info.json":   # it says when it was updated
            assert (fresh / n).read_bytes() == (out / n).read_bytes(), n


def test_worker_processes_report_progress_and_cancel(tmp_path):
    from core.tasks.vap import generate

    seen = []

    def progress(done, total, text=""):
        seen.append((done, total))

    out = tmp_path / "p"
    res = generate(tiny_config(worlds={"train": 3}, steps=30, workers=2), out, progress=progress,
                   cancel=lambda: len(seen) > 20)
    assert res.cancelled and res.made < 3
    assert seen and all(t == 3 * 29 for _, t in seen) and all(d <= t for d, t in seen)
    assert not list((out / "train").glob(".world_*"))          # the workers' worlds in progress were discarded
    assert json.loads((out / "dataset_info.json").read_text())["status"] == "incomplete"
    res2 = generate(tiny_config(worlds={"train": 3}, steps=30, workers=2), out)
    assert res2.made + res2.skipped == 3 and res2.skipped == res.made and not res2.cancelled
