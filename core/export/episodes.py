"""Exporter ``episodes``: simulated episodes in the studio's episode format (docs/formats.md "Episode files").

Files: ``episodes/episode_NNNNN.npz``, one per episode, each self-contained (it embeds the configuration texts, so
``python main.py FILE.npz`` replays it). Episode ``e`` is the simulation of seed ``seed + e``; its bytes are
reproducible (fixed ZIP member times and ``created`` field).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from core.export.common import FIXED_CREATED, episode_plan, load_config, mode_files, sim_options, simulate
from core.export.registry import ExporterSpec, Shard, ShardResult, register


def run_shard(options: Mapping[str, Any], shard: Shard, out: Path) -> ShardResult:
    cfg = load_config(options)
    files, steps = [], 0
    for e, seed in zip(shard.params["episodes"], shard.params["seeds"]):
        sim = simulate(cfg, seed, int(options["steps"]), options.get("engine"))
        rel = f"episodes/episode_{e:05d}.npz"
        sim.buffer.save(out / rel, extra_meta={"mode_file": str(options["mode"]), "created": FIXED_CREATED,
                                               "export_episode": e}, reproducible=True)
        files.append(rel)
        steps += sim.buffer.num_steps
    return ShardResult(shard.name, files, {"episodes": len(files), "steps": steps})


SPEC = register(ExporterSpec(
    name="episodes", title="Simulated episodes (.npz)",
    description="Rule-governed episodes in the studio's episode format, one self-contained .npz per episode.",
    options=sim_options(), plan=episode_plan, run_shard=run_shard, config_files=mode_files))
