"""The dataset manifest (``dataset_info.json``): rebuilt from the complete worlds on disk after every world, so it
always describes exactly what the folder holds (status, fingerprint, settings, config hashes, per-stage seeds,
frames, dropped frames and Table 3's "Num. Actions" counts)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from core.base.codes import ACTION_NAMES
from core.io.fileio import atomic_write_bytes
from core.tasks.vap.labels import DETAILED_TYPES, DIRECTIONS, H_FIELDS
from core.tasks.vap.png import encoder_name
from core.tasks.vap.settings import STAGES, VapDataConfig, mode_path

FORMAT = "logicity-vap"
FORMAT_VERSION = 1
MANIFEST = "dataset_info.json"
#: the loader keeps steps after this one (the reference skips the first 10 steps of every world)
SKIP_STEPS = 10


def read_summaries(out: Path) -> dict[str, list[dict]]:
    res: dict[str, list[dict]] = {s: [] for s in STAGES}
    for stage in STAGES:
        for p in sorted((out / stage).glob("world_*/world.json")):
            try:
                res[stage].append(json.loads(p.read_text()))
            except (OSError, ValueError):
                continue
    return res


def write_manifest(out: Path, config: VapDataConfig, hashes: dict[str, str], fp: str, cfg) -> dict:
    """(Re)write ``dataset_info.json`` from the complete worlds on disk (``cfg``: the train stage's SimConfig)."""
    onto = cfg.ontology
    sums = read_summaries(out)
    splits = {}
    complete = True
    for stage in STAGES:
        ws = sums[stage]
        want = config.world_count(stage)
        complete &= len(ws) >= want
        tot = {a: 0 for a in ACTION_NAMES}
        tot_loader = {a: 0 for a in ACTION_NAMES}
        for s in ws:
            for a in ACTION_NAMES:
                tot[a] += int(s["car_actions"].get(a, 0))
                tot_loader[a] += int(s["car_actions_loader"].get(a, 0))
        splits[stage] = {
            "worlds_expected": want, "worlds_done": len(ws),
            "frames": sum(s["frames"] for s in ws), "dropped_frames": sum(len(s["dropped"]) for s in ws),
            "num_actions": tot_loader, "num_actions_all_frames": tot,
            "worlds": [{k: s[k] for k in ("world", "seed", "frames", "dropped")} for s in ws],
            "data_files": f"{stage}/world_*/frames.parquet",
        }
    manifest = {
        "format": FORMAT, "version": FORMAT_VERSION,
        "status": "complete" if complete else "incomplete",
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "fingerprint": fp, "settings": config.to_dict(), "config_hashes": hashes,
        "png_encoder": encoder_name(config.png_level),   # same pixels either way; bytes per encoder
        "files": {k: os.path.relpath(v, mode_path(config.mode).parent) for k, v in cfg.files.items()},
        "seeding": "world seed = seed + w (train), + n_train + w (val), + n_train + n_val + w (test); "
                   "random compositions from default_rng([world seed, 0x5A])",
        "loader": {"min_step": SKIP_STEPS + 1, "supervised": "cars"},
        "unary_predicates": [p.name for p in onto.unary], "binary_predicates": [p.name for p in onto.binary],
        "actions": list(ACTION_NAMES), "directions": list(DIRECTIONS) + ["none"], "h_fields": list(H_FIELDS),
        "detailed_types": list(DETAILED_TYPES), "splits": splits,
    }
    atomic_write_bytes(out / MANIFEST, json.dumps(manifest, indent=1).encode())
    return manifest
