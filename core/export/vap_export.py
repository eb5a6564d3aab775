"""Exporter ``vap``: the Visual Action Prediction dataset (docs/vap.md "Dataset") with this package's shards,
backends and manifest.

The VAP generator (core/tasks/vap/dataset.py) writes one folder per world; here every world is a shard
(``make_world`` of that module), so worlds run in parallel on the local pool or on Ray and a resumed export skips
finished worlds. Files: ``vap/<stage>/world_<wwww>/`` (frames, ``frames.parquet``, ``frames.jsonl``, ``world.json``)
and ``vap/dataset_info.json`` (the generator's own manifest, written by ``finalize``; its ``updated`` time stamp is
fixed so that two exports of the same settings are byte-identical). Point the VAP tools at ``<out>/vap``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from core.export.registry import ExporterSpec, Finalized, Option, Shard, ShardResult, register, shard_name
from core.io.fileio import atomic_write_text

# The VAP task and the thread pool are imported by the functions that use them: `python main.py --help` imports every
# exporter module to list its options (core/cli/export.py).

FIXED_UPDATED = "reproducible export (see manifest.json)"
_STAGE_CFGS: dict[str, Any] = {}


def vap_config(options: Mapping[str, Any]):
    from core.tasks.vap.settings import VapDataConfig

    return VapDataConfig(mode=options["mode"], agents=options["agents"],
                         worlds={"train": int(options["train_worlds"]), "val": int(options["val_worlds"]),
                                 "test": int(options["test_worlds"])},
                         steps=int(options["steps"]), direction=options["direction"], seed=int(options["seed"]),
                         px_per_cell=int(options["ppc"]) or None, png_level=int(options["png_level"]), workers=1)


def plan(options: Mapping[str, Any]) -> list[Shard]:
    from core.tasks.vap.settings import STAGES

    cfg = vap_config(options)
    jobs = [(s, w) for s in STAGES for w in range(cfg.world_count(s))]
    return [Shard(i, shard_name(i), {"stage": s, "world": w, "seed": cfg.world_seed(s, w)})
            for i, (s, w) in enumerate(jobs)]


def _stage_configs(config):
    from core.tasks.vap.dataset import load_stage_configs

    key = repr(config.to_dict())
    if key not in _STAGE_CFGS:
        _STAGE_CFGS.clear()
        _STAGE_CFGS[key] = load_stage_configs(config)
    return _STAGE_CFGS[key]


def run_shard(options: Mapping[str, Any], shard: Shard, out: Path) -> ShardResult:
    from concurrent.futures import ThreadPoolExecutor

    from core.tasks.vap import dataset as vap

    config = vap_config(options)
    stage, w = shard.params["stage"], int(shard.params["world"])
    root = out / "vap"
    final = vap.world_dir(root, stage, w)
    final.parent.mkdir(parents=True, exist_ok=True)
    icons = vap._icon_set(config)   # the generator's own choice of icon art (default or the user's library)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vap-png") as pool:
        summary = vap.make_world(config, _stage_configs(config)[stage], stage, w, final, icons, pool,
                                 lambda k: None, lambda: False)
    files = sorted(p.relative_to(out).as_posix() for p in final.rglob("*") if p.is_file())
    return ShardResult(shard.name, files, {"worlds": 1, "frames": int(summary["frames"]) if summary else 0})


def finalize(options: Mapping[str, Any], results: list[ShardResult], out: Path) -> Finalized:
    from core.tasks.vap import dataset as vap
    from core.tasks.vap.settings import config_hashes, fingerprint, mode_path

    config = vap_config(options)
    stage_cfgs = _stage_configs(config)
    hashes = config_hashes(stage_cfgs, mode_path(config.mode))
    manifest = vap.write_manifest(out / "vap", config, hashes, fingerprint(config, hashes), stage_cfgs["train"])
    manifest["updated"] = FIXED_UPDATED
    atomic_write_text(out / "vap" / vap.MANIFEST, json.dumps(manifest, indent=1))
    return Finalized([f"vap/{vap.MANIFEST}"], extra={"vap": {"root": "vap", "status": manifest.get("status")}})


def config_files(options: Mapping[str, Any]) -> dict[str, Path]:
    from core.tasks.vap.settings import mode_path

    return {"mode": Path(mode_path(options["mode"]))}


# registered only when the generator it wraps is part of this checkout (checked by file: importing its package
# would pull gymnasium into every CLI start-up)
_AVAILABLE = (Path(__file__).resolve().parents[1] / "tasks/vap/dataset.py").is_file()

if _AVAILABLE:
    SPEC = register(ExporterSpec(
        name="vap", title="VAP dataset (frames + labels)",
        description="Visual Action Prediction worlds: rendered frames with per-agent boxes, directions and "
                    "rule-derived action labels (docs/vap.md); one shard per world.",
        options=(
            Option("mode", "choice", "easy", "VAP rule set", choices=("easy", "hard")),
            Option("agents", "choice", "fixed", "fixed (the mode's agent sets) or random compositions",
                   choices=("fixed", "random")),
            Option("train_worlds", "int", 2, "worlds in the train stage", minimum=0),
            Option("val_worlds", "int", 1, "worlds in the val stage", minimum=0),
            Option("test_worlds", "int", 1, "worlds in the test stage", minimum=0),
            Option("steps", "int", 20, "simulated steps per world (frames 1..steps-1)", minimum=2),
            Option("direction", "choice", "next", "direction label: next (the reference) or own",
                   choices=("next", "own")),
            Option("seed", "int", 0, "offset of every world seed", minimum=0, maximum=2**31 - 1),
            Option("ppc", "int", 0, "pixels per cell (0: the mode's, 8)", minimum=0, maximum=16),
            Option("png_level", "int", 1, "PNG compression level", minimum=0, maximum=9),
        ),
        plan=plan, run_shard=run_shard, finalize=finalize, config_files=config_files,
        packages=("pyarrow", "Pillow")))
