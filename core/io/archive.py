"""Tagged "stored ZIP of .npy arrays + meta.json" files: the one reader and writer of episode files
(:mod:`core.sim.episode`) and task archives (episode sets, demonstrations).

The container (docs/formats.md): members are stored uncompressed, arrays are plain ``.npy`` (never pickled
objects), ``meta.json`` carries a format tag and version. ``numpy.load(path)`` reads the arrays too. Writing is
atomic (temporary file in the same folder, then rename). Reading checks the tag and the version here, once for
every kind of file, after :mod:`core.io.npzfile` has checked every member.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from core.base.errors import EpisodeFileError
from core.io.fileio import write_npy_archive
from core.io.npzfile import map_member, open_zip, read_member, read_meta

__all__ = ["write_archive", "read_archive"]


def write_archive(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any], fmt: str,
                  version: int, reproducible: bool = False) -> Path:
    """Write an archive tagged ``fmt``/``version`` (atomic, see :mod:`core.io.fileio`; ``reproducible``: fixed
    ZIP member times, so equal content gives equal bytes)."""
    return write_npy_archive(path, arrays, {"format": fmt, "version": version, **meta}, reproducible)


def read_archive(path: str | Path, fmt: str, version: int, *, kind: str | None = None, mapped: bool = False
                 ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """All arrays and the metadata of an archive tagged ``fmt`` of at most ``version``; a wrong or damaged file
    raises :class:`EpisodeFileError` naming it. ``kind`` names the file in messages (default ``fmt``);
    ``mapped``: memory-map the arrays in place (stored members) instead of reading them."""
    path = Path(path)
    kind = kind or fmt
    arrays: dict[str, np.ndarray] = {}
    # members, .npy headers and meta.json are checked before use (core/io/npzfile.py): a crafted file gives an
    # EpisodeFileError naming the file, never a traceback or an allocation the file cannot back
    with open_zip(path) as zf:
        meta = read_meta(zf, path)
        if not isinstance(meta, dict) or meta.get("format") != fmt:
            got = meta.get("format") if isinstance(meta, dict) else None
            tag = "format tag missing" if got is None else f"format tag {got!r:.60}"
            raise EpisodeFileError(f"not a {kind} file ({tag})", path)
        v = meta.get("version", 0)
        if not isinstance(v, int) or isinstance(v, bool):
            raise EpisodeFileError(f"meta.json field 'version' must be an integer, got {v!r:.60}", path)
        if v > version:
            raise EpisodeFileError(f"{kind} version {v} is newer than this program supports ({version})", path)
        member = map_member if mapped else read_member
        for info in zf.infolist():
            if info.filename.endswith(".npy"):
                arrays[info.filename[:-4]] = member(zf, info, path)
    return arrays, meta
