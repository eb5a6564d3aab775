"""Crash-safe file writing shared by every saver (episodes, task archives, projects, exports).

Why: a researcher's data must survive a crash or a full disk mid-save. Everything is written to a temporary file
in the target's folder, flushed to disk, and renamed over the target in one step; on any error the temporary file
is removed and the old target is untouched.
"""
from __future__ import annotations

import json
import os
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator, Mapping

import numpy as np

__all__ = ["atomic_writer", "atomic_write_bytes", "atomic_write_text", "write_npy_archive", "json_default"]


@contextmanager
def atomic_writer(path: str | Path) -> Iterator[IO[bytes]]:
    """Yield a binary file whose content replaces ``path`` only if the ``with`` block completes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes the file private; these are ordinary data files
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path) as fh:
        fh.write(data)
    return Path(path)


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def json_default(o: Any) -> Any:
    """JSON encoder fallback for numpy scalars/arrays and paths."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_npy_archive(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> Path:
    """The project's data container: a ZIP of *stored* ``.npy`` members plus ``meta.json``, written atomically.

    Members are uncompressed so readers can memory-map them; object arrays are refused (nothing is pickled).
    """
    with atomic_writer(path) as fh, zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            arr = np.ascontiguousarray(arr)
            if arr.dtype.hasobject:
                raise TypeError(f"array {name} holds Python objects")
            with zf.open(name + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, arr, allow_pickle=False)
        zf.writestr("meta.json", json.dumps(dict(meta), indent=1, default=json_default))
    return Path(path)
