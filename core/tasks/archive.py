"""Small "stored ZIP of .npy arrays + meta.json" files for task data (episode sets, demonstrations).

Same container as the episode files of :mod:`core.sim.episode` (docs/formats.md): members are stored
uncompressed, arrays are plain ``.npy`` (never pickled objects), ``meta.json`` carries a format tag and version.
``numpy.load(path)`` reads the arrays too. Writing is atomic (temporary file in the same folder, then rename).
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import EpisodeFileError
from ..fileio import write_npy_archive

__all__ = ["write_archive", "read_archive"]


def write_archive(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any], fmt: str,
                  version: int) -> Path:
    """Write a task archive tagged ``fmt``/``version`` (atomic, see :mod:`core.fileio`)."""
    return write_npy_archive(path, arrays, {"format": fmt, "version": version, **meta})


def read_archive(path: str | Path, fmt: str, version: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read all arrays and the metadata; a wrong or damaged file raises :class:`EpisodeFileError`."""
    path = Path(path)
    arrays: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            try:
                meta = json.loads(zf.read("meta.json").decode("utf-8"))
            except KeyError:
                raise EpisodeFileError("meta.json missing (not a LogiCity task file)", path) from None
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise EpisodeFileError(f"meta.json is not valid JSON: {exc}", path) from None
            if not isinstance(meta, dict) or meta.get("format") != fmt:
                got = meta.get("format") if isinstance(meta, dict) else None
                raise EpisodeFileError(f"not a {fmt} file (format tag {got!r})", path)
            v = meta.get("version", 0)
            if not isinstance(v, int) or isinstance(v, bool):
                raise EpisodeFileError(f"meta.json field 'version' must be an integer, got {v!r}", path)
            if v > version:
                raise EpisodeFileError(f"{fmt} version {meta.get('version')} is newer than this program supports "
                                       f"({version})", path)
            for info in zf.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with zf.open(info) as fh:
                    try:
                        arrays[info.filename[:-4]] = np.lib.format.read_array(fh, allow_pickle=False)
                    except ValueError as exc:
                        raise EpisodeFileError(f"member {info.filename} is not a plain .npy array: {exc}",
                                               path) from None
    except zipfile.BadZipFile as exc:
        raise EpisodeFileError(f"not a valid archive: {exc}", path) from None
    except FileNotFoundError:
        raise EpisodeFileError("file not found", path) from None
    except IsADirectoryError:
        raise EpisodeFileError("is a folder, not a file (.npz)", path) from None
    except OSError as exc:
        raise EpisodeFileError(f"cannot read the file: {exc.strerror or exc}", path) from None
    return arrays, meta
