"""Exporter ``runs``: convert a folder of reference LogiCity runs (``.pkl`` episode caches) into episode files.

For researchers with many existing runs: each cache is one shard, read with the restricted unpickler and converted
as ``main.py RUN.pkl`` does (core/export/logicity_pkl.py), into ``episodes/<name>.npz``. The manifest hashes every
source file, so a changed cache is converted again on the next run; a cache that cannot be converted (a refused
global, another city) stops the export naming it, after the converted ones are recorded.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from core.export.registry import ExportError, ExporterSpec, Option, Shard, ShardResult, register, shard_name

# The cache importer and the simulator's episodes are imported by the shard: `python main.py --help` imports every
# exporter module to list its options (core/cli/export.py).


def sources(options: Mapping[str, Any]) -> list[Path]:
    src = Path(options["source"])
    if src.is_file():
        return [src]
    if not src.is_dir():
        raise ExportError("export runs: --source is neither a .pkl file nor a folder", src)
    files = sorted(p for p in src.glob(options["pattern"]) if p.is_file())
    if not files:
        raise ExportError(f"export runs: no file matches {options['pattern']!r} in the folder", src)
    stems = [p.stem for p in files]
    dup = sorted({s for s in stems if stems.count(s) > 1})
    if dup:
        raise ExportError(f"export runs: several files are named {dup[0]} (episode names must differ)", src)
    return files


def plan(options: Mapping[str, Any]) -> list[Shard]:
    return [Shard(i, shard_name(i), {"file": str(p)}) for i, p in enumerate(sources(options))]


def run_shard(options: Mapping[str, Any], shard: Shard, out: Path) -> ShardResult:
    from core.export.logicity_pkl import convert_cache

    src = Path(shard.params["file"])
    rel = f"episodes/{src.stem}.npz"
    convert_cache(src, out / rel)
    from core.sim.episode import load_episode

    ep = load_episode(out / rel)
    return ShardResult(shard.name, [rel], {"episodes": 1, "steps": ep.num_steps})


def config_files(options: Mapping[str, Any]) -> dict[str, Path]:
    return {f"run {p.name}": p for p in sources(options)}


def _check(options: Mapping[str, Any]) -> None:
    if not options["source"]:
        raise ExportError("export runs: give --source (a .pkl cache or a folder of them)")
    sources(options)


SPEC = register(ExporterSpec(
    name="runs", title="Reference LogiCity runs (.pkl) → episodes",
    description="Convert existing LogiCity episode caches (.pkl) into the studio's episode files, without executing "
                "pickle code (docs/export.md).",
    options=(
        Option("source", "path", "", "a .pkl cache or a folder of them"),
        Option("pattern", "str", "*.pkl", "file pattern inside the folder"),
    ),
    plan=plan, run_shard=run_shard, config_files=config_files, check=_check))
