"""Helpers of the dataset-export tests: compare two export folders byte for byte."""
from __future__ import annotations

from pathlib import Path

#: the only file of an export folder that differs by run (a log of each run's backend and timing)
RUN_LOG = ".export/runs.jsonl"


def folder_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path → bytes), except the run log."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).as_posix() != RUN_LOG}


def assert_same_export(a: Path, b: Path) -> None:
    fa, fb = folder_bytes(a), folder_bytes(b)
    assert sorted(fa) == sorted(fb)
    different = [name for name in fa if fa[name] != fb[name]]
    assert not different, f"files differ: {different}"
