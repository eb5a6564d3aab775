"""Exporter ``spf``: Safe Path Following oracle demonstrations as a Minari dataset (or the studio's NPZ).

Shards: shard ``i`` collects the episodes ``[i*per_shard, (i+1)*per_shard)``; its first episode resets the
environment with seed ``seed + first episode``, the others with plain resets (the background world keeps running
between episodes, as ``spf collect`` and the reference's training do). Each shard is written as an NPZ
demonstration file ``shards/spf_NNNNN.npz`` (docs/spf.md; the resumable unit). ``finalize`` then builds:

* ``format=minari`` (default): a real Minari dataset under ``minari/`` with the id
  ``logicity/spf-<mode>-<split>-oracle-v0`` (observations [T+1, D] float32, actions 0..3, rewards, terminations,
  truncations, infos as in the NPZ), written with ``minari.create_dataset_from_buffers``. Open it with
  ``MINARI_DATASETS_PATH=<out>/minari`` and ``minari.load_dataset(id)``.
* ``format=npz``: the episodes merged into ``spf_demos.npz`` (``core.tasks.spf.demos.load_demonstrations``).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Mapping

from core.export.registry import ExportError, ExporterSpec, Finalized, Option, Shard, ShardResult, register, shard_name

MODES = ("easy", "medium", "hard", "expert")
_ENVS: dict[tuple[str, str], Any] = {}


def dataset_id(options: Mapping[str, Any]) -> str:
    return f"logicity/spf-{options['mode']}-{options['split']}-oracle-v0"


def plan(options: Mapping[str, Any]) -> list[Shard]:
    n, per, seed = int(options["episodes"]), int(options["per_shard"]), int(options["seed"])
    return [Shard(i, shard_name(i), {"episodes": list(range(first, min(n, first + per))), "seed": seed + first})
            for i, first in enumerate(range(0, n, per))]


def _env(mode: str, split: str):
    env = _ENVS.get((mode, split))
    if env is None:
        from core.tasks.spf.env import SPFEnv

        env = _ENVS[(mode, split)] = SPFEnv(mode, split)
    return env


def run_shard(options: Mapping[str, Any], shard: Shard, out: Path) -> ShardResult:
    from core.tasks.spf.demos import dataset_meta, oracle_trajectory, save_demonstrations

    env = _env(options["mode"], options["split"])
    trajs = [oracle_trajectory(env, int(shard.params["seed"]) if j == 0 else None, e)
             for j, e in enumerate(shard.params["episodes"])]
    rel = f"shards/spf_{shard.index:05d}.npz"
    meta = dataset_meta(env, "oracle", seed=int(shard.params["seed"]),
                        collection="reset(seed) for the shard's first episode, then reset()")
    save_demonstrations(out / rel, trajs, meta, reproducible=True)
    return ShardResult(shard.name, [rel], {"episodes": len(trajs), "steps": int(sum(len(t) for t in trajs))})


def _load_all(results: list[ShardResult], out: Path):
    from core.tasks.spf.demos import load_demonstrations

    trajs: list = []
    meta: dict = {}
    for r in results:
        t, meta = load_demonstrations(out / r.files[0])
        trajs.extend(t)
    return trajs, meta


def finalize(options: Mapping[str, Any], results: list[ShardResult], out: Path) -> Finalized:
    trajs, meta = _load_all(results, out)
    if options["format"] == "npz":
        from core.tasks.spf.demos import save_demonstrations

        meta = {k: v for k, v in meta.items() if k not in ("format", "version", "seed", "total_episodes",
                                                              "total_steps", "episodes", "action_names")}
        meta.update(seeds=[int(r) for r in options_seeds(options)], dataset_id=dataset_id(options))
        save_demonstrations(out / "spf_demos.npz", trajs, meta, reproducible=True)
        return Finalized(["spf_demos.npz"])
    return _write_minari(options, trajs, meta, out)


def options_seeds(options: Mapping[str, Any]) -> list[int]:
    return [s.params["seed"] for s in plan(options)]


def _write_minari(options: Mapping[str, Any], trajs: list, meta: Mapping[str, Any], out: Path) -> Finalized:
    """Build the Minari dataset in a scratch folder, then move it into place (a killed finalize leaves the
    previous ``minari/`` or none, never half a dataset)."""
    import warnings

    import gymnasium as gym
    import minari
    import numpy as np
    from minari.data_collector.episode_buffer import EpisodeBuffer

    import core.tasks  # noqa: F401 - registers the LogiCity/SPF-* ids Minari records as the env spec

    scratch = out / ".export" / "minari-build"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    buffers = [EpisodeBuffer(id=i, observations=t.observations, actions=t.actions, rewards=list(t.rewards),
                             terminations=list(t.terminations), truncations=list(t.truncations),
                             infos=dict(t.infos)) for i, t in enumerate(trajs)]
    size = int(meta["observation_space"]["shape"][0])
    env_id = f"LogiCity/SPF-{options['mode']}-v0"
    import dataclasses

    spec = dataclasses.replace(gym.spec(env_id), kwargs={**gym.spec(env_id).kwargs, "split": options["split"]})
    saved = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(scratch)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)   # Minari's reminders (no eval env, no e-mail) are noise
            minari.create_dataset_from_buffers(
                dataset_id(options), buffers, env=spec,
                action_space=gym.spaces.Discrete(4),
                observation_space=gym.spaces.Box(0.0, 1.0, (size,), np.float32),
                algorithm_name="LogiCity SPF oracle (rule-derived expert)", author="LogiCity Studio",
                code_permalink="https://github.com/logicity-studio (core/export/spf.py)",
                description=f"Safe Path Following {options['mode']}/{options['split']} oracle demonstrations, "
                            f"{len(trajs)} episodes, seeds {options_seeds(options)}; observation layout in "
                            f"the export's manifest.json.")
    except Exception as exc:  # noqa: BLE001 - Minari's own errors, named
        raise ExportError(f"minari could not write the dataset: {type(exc).__name__}: {exc}", out) from None
    finally:
        if saved is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = saved
    final = out / "minari"
    old = out / ".export" / "minari-old"
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    scratch.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    files = sorted(p.relative_to(out).as_posix() for p in final.rglob("*") if p.is_file())
    return Finalized(files, extra={"minari": {"dataset_id": dataset_id(options), "datasets_path": "minari",
                                              "observation_layout": meta.get("observation_layout")}})


def _check(options: Mapping[str, Any]) -> None:
    if options["mode"] not in MODES:
        raise ExportError(f"export spf: --mode must be one of {', '.join(MODES)}, got {options['mode']!r}")


def config_files(options: Mapping[str, Any]) -> dict[str, Path]:
    from core.export.common import ROOT

    return {"mode": ROOT / "configs" / "modes" / f"spf_{options['mode']}.yaml"}


SPEC = register(ExporterSpec(
    name="spf", title="SPF demonstrations (Minari / NPZ)",
    description="Safe Path Following oracle demonstrations as a Minari dataset (minari.load_dataset opens it) or "
                "the studio's NPZ demonstration file.",
    options=(
        Option("mode", "choice", "easy", "SPF difficulty", choices=MODES),
        Option("split", "choice", "train", "agent set split", choices=("train", "val", "test")),
        Option("episodes", "int", 8, "number of oracle episodes", minimum=1),
        Option("per_shard", "int", 4, "episodes per shard (one reset(seed) each)", minimum=1),
        Option("seed", "int", 0, "seed of the first shard (shard starting at episode e: seed + e)", minimum=0,
               maximum=2**31 - 1),
        Option("format", "choice", "minari", "minari (a Minari dataset) or npz (one spf_demos.npz)",
               choices=("minari", "npz")),
    ),
    plan=plan, run_shard=run_shard, finalize=finalize, config_files=config_files, check=_check,
    packages=("minari", "h5py", "gymnasium")))
