"""Small "stored ZIP of .npy arrays + meta.json" files for task data (episode sets, demonstrations).

Same container as the episode files of :mod:`core.sim.episode` (docs/formats.md): members are stored
uncompressed, arrays are plain ``.npy`` (never pickled objects), ``meta.json`` carries a format tag and version.
``numpy.load(path)`` reads the arrays too. Writing is atomic (temporary file in the same folder, then rename).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from core.base.errors import EpisodeFileError
from core.io.fileio import write_npy_archive
from core.io.npzfile import open_zip, read_member, read_meta

__all__ = ["write_archive", "read_archive"]


def write_archive(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any], fmt: str,
                  version: int, reproducible: bool = False) -> Path:
    """Write a task archive tagged ``fmt``/``version`` (atomic, see :mod:`core.io.fileio`; ``reproducible``: fixed
    ZIP member times, so equal content gives equal bytes)."""
    return write_npy_archive(path, arrays, {"format": fmt, "version": version, **meta}, reproducible)


def read_archive(path: str | Path, fmt: str, version: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read all arrays and the metadata; a wrong or damaged file raises :class:`EpisodeFileError`."""
    path = Path(path)
    arrays: dict[str, np.ndarray] = {}
    # members, .npy headers and meta.json are checked before use (core/io/npzfile.py): a crafted file gives an
    # EpisodeFileError naming the file, never a traceback or an allocation the file cannot back
    with open_zip(path) as zf:
        meta = read_meta(zf, path)
        if not isinstance(meta, dict) or meta.get("format") != fmt:
            got = meta.get("format") if isinstance(meta, dict) else None
            raise EpisodeFileError(f"not a {fmt} file (format tag {got!r:.60})", path)
        v = meta.get("version", 0)
        if not isinstance(v, int) or isinstance(v, bool):
            raise EpisodeFileError(f"meta.json field 'version' must be an integer, got {v!r:.60}", path)
        if v > version:
            raise EpisodeFileError(f"{fmt} version {v} is newer than this program supports ({version})", path)
        for info in zf.infolist():
            if info.filename.endswith(".npy"):
                arrays[info.filename[:-4]] = read_member(zf, info, path)
    return arrays, meta
