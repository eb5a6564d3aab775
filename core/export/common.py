"""Pieces the simulation-based exporters share: the common options, the episode plan and one simulated episode.

Why one plan for all of them: episode ``e`` of an export always runs with seed ``seed + e`` (the same episode as
``python main.py simulate --seed <seed + e>``), whichever exporter, shard size, backend or worker count, so an
episodes export, a Parquet export and a video export of the same options show the same worlds.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from core.base.errors import LogiCityError
from core.base.paths import ROOT
from core.export.registry import ExportError, Option, Shard, shard_name

# The simulator is imported by the functions that run it: `python main.py --help` imports every exporter module to list
# its options (core/cli/export.py).

DEFAULT_MODE = ROOT / "configs" / "modes" / "default.yaml"
#: the ``created`` field of exported episodes: a time stamp would make two exports of one seed differ
FIXED_CREATED = "reproducible export (no time stamp)"


def sim_options(episodes: int = 4, steps: int = 100, per_shard: int = 1) -> tuple[Option, ...]:
    return (
        Option("mode", "path", str(DEFAULT_MODE), "mode file (configs/modes/*.yaml)"),
        Option("split", "choice", "", "agent set split for modes with several (train, val, test)",
               choices=("", "train", "val", "test")),
        Option("engine", "choice", "", "rule engine (default: the mode's)", choices=("", "compiled", "z3")),
        Option("episodes", "int", episodes, "number of episodes", minimum=1),
        Option("steps", "int", steps, "steps per episode", minimum=0),
        Option("seed", "int", 0, "seed of episode 0 (episode e uses seed + e)", minimum=0, maximum=2**62),
        Option("per_shard", "int", per_shard, "episodes per shard (the unit of resume and of parallel work)",
               minimum=1),
    )


def mode_files(options: Mapping[str, Any]) -> dict[str, Path]:
    """The mode file and the four files it names (their contents go into the configuration hash)."""
    cfg = load_config(options)
    out = {"mode": Path(options["mode"])}
    out.update({role: Path(p) for role, p in cfg.files.items()})
    return out


def load_config(options: Mapping[str, Any]):
    """The mode's configuration, loaded once per process for the same files (a worker runs many shards)."""
    path = Path(options["mode"])
    if not path.is_file():
        raise ExportError("mode file not found", path)
    key = (str(path.resolve()), path.stat().st_mtime_ns, options.get("split") or None, options.get("engine") or None)
    cfg = _CONFIGS.get(key)
    if cfg is None or any(Path(f).stat().st_mtime_ns != t for f, t in cfg[1].items()):
        config = _load_config(path, key[2], key[3])
        cfg = (config, {str(f): Path(f).stat().st_mtime_ns for f in config.files.values()})
        _CONFIGS.clear()
        _CONFIGS[key] = cfg
    return cfg[0]


_CONFIGS: dict[tuple, tuple[Any, dict[str, int]]] = {}


def _load_config(path: Path, split: str | None, engine: str | None):
    from core.sim.config import load_mode

    try:
        return load_mode(path, agents_split=split, engine=engine)
    except LogiCityError:
        raise
    except OSError as exc:
        raise ExportError(f"cannot read the mode file: {exc.strerror or exc}", path) from None


def episode_plan(options: Mapping[str, Any]) -> list[Shard]:
    n, per = int(options["episodes"]), int(options["per_shard"])
    shards = []
    for i, first in enumerate(range(0, n, per)):
        eps = list(range(first, min(n, first + per)))
        shards.append(Shard(i, shard_name(i), {"episodes": eps, "seeds": [int(options["seed"]) + e for e in eps]}))
    return shards


def simulate(config, seed: int, steps: int, engine: str | None = None):
    """One recorded episode (a :class:`~core.sim.simulation.Simulation` after ``steps`` steps)."""
    from core.sim.simulation import Simulation

    sim = Simulation(config, seed=seed, record=True, engine=engine or None)
    sim.run(steps)
    return sim
