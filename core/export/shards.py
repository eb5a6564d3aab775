"""The worker side of an export: what runs one shard in a pool process or a Ray task, and how it reports.

Why a module of its own: the backends (:mod:`core.export.backends`) and the driver (:mod:`core.export.runner`) both
need it, and it must stay importable on its own in a fresh worker process (spawn, Ray) with nothing but plain
arguments.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.export.registry import Shard, get_exporter

__all__ = ["ShardFailure", "run_shard_in_worker", "sha256_file", "FAULT_ENV"]

#: fault injection for tests of retries: a file whose lines name shards that fail once (the line is removed)
FAULT_ENV = "LOGICITY_EXPORT_FAULTS"


@dataclass(frozen=True)
class ShardFailure:
    """One failed attempt of a shard (reported, then retried)."""

    shard: str
    attempt: int
    error: str


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _maybe_inject_fault(shard: str) -> None:
    """Test hook: fail this shard once when it is listed in the file named by ``LOGICITY_EXPORT_FAULTS``
    (``crash:<shard>``: the worker process exits instead)."""
    path = os.environ.get(FAULT_ENV)
    if not path:
        return
    try:
        lines = Path(path).read_text().split()
    except OSError:
        return
    if shard in lines:
        lines.remove(shard)
        Path(path).write_text("\n".join(lines))
        raise RuntimeError(f"injected fault in {shard} ({FAULT_ENV})")
    if f"crash:{shard}" in lines:   # the worker process dies (pool backends only)
        lines.remove(f"crash:{shard}")
        Path(path).write_text("\n".join(lines))
        os._exit(3)


def run_shard_in_worker(kind: str, options: dict[str, Any], shard: dict[str, Any], out: str) -> dict[str, Any]:
    """The function every backend runs for one shard (module level, plain arguments: picklable for spawn and Ray).

    Returns the shard's result with each file's size and SHA-256, computed where the file was written."""
    spec = get_exporter(kind)
    sh = Shard.from_json(shard)
    _maybe_inject_fault(sh.name)
    root = Path(out)
    result = spec.run_shard(options, sh, root)
    files = [{"path": rel, "bytes": (root / rel).stat().st_size, "sha256": sha256_file(root / rel)}
             for rel in result.files]
    return {"shard": sh.name, "files": files, "counts": dict(result.counts), "pid": os.getpid()}
