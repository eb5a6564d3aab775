"""Crash-safe file writing shared by every saver (episodes, task archives, projects, exports).

Why: a researcher's data must survive a crash or a full disk mid-save. Everything is written to a temporary file
in the target's folder, flushed to disk, and renamed over the target in one step; on any error the temporary file
is removed and the old target is untouched.

A process killed mid-write (kill -9, power loss) cannot remove its temporary file. So temporary files carry a
name only this module makes, ``<target>.lcs-<host>-<pid>-<random>.tmp``: the host tag and process id prove whose
file it is, and :func:`clean_stale_temps` removes one only when that process is gone (same host, process no longer
running) or is this process and the write is no longer in flight. Files of other names are never touched.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import socket
import tempfile
import threading
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator, Mapping

import numpy as np

__all__ = ["atomic_writer", "atomic_write_bytes", "atomic_write_text", "write_npy_archive", "json_default",
           "clean_stale_temps", "is_stale_temp", "host_tag", "pid_alive"]

#: Marks the studio's temporary files (see the module docstring); the rest of the name is checked too.
TEMP_MARK = ".lcs-"
_TEMP_RE = re.compile(r"^(?P<target>.+)\.lcs-(?P<host>[0-9a-f]{6})-(?P<pid>[0-9]{1,10})-[a-z0-9_]{8}\.tmp$")
_in_flight: set[str] = set()          # names of the temporary files this process is writing right now
_in_flight_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def host_tag() -> str:
    """Six hex digits naming this machine (a temporary file from another machine is never judged stale)."""
    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine. When unsure (no permission, Windows) says True: a file is
    only ever deleted when its writer is known to be gone."""
    if pid <= 0 or os.name == "nt":   # on Windows os.kill(pid, 0) would terminate the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def is_stale_temp(path: str | Path) -> bool:
    """True when ``path`` is a temporary file of :func:`atomic_writer` whose writer is gone."""
    path = Path(path)
    m = _TEMP_RE.match(path.name)
    if m is None or m.group("host") != host_tag():
        return False
    pid = int(m.group("pid"))
    if pid == os.getpid():
        with _in_flight_lock:
            return path.name not in _in_flight
    return not pid_alive(pid)


def clean_stale_temps(folder: str | Path) -> list[Path]:
    """Delete the stale temporary files of interrupted atomic writes in ``folder``; returns what was removed.
    Called when a project folder is opened or saved and before an export writes into a folder. Never follows a
    symbolic link, never touches a file of another name, never raises: cleaning is best effort."""
    folder = Path(folder)
    removed: list[Path] = []
    try:
        if folder.is_symlink() or not folder.is_dir():
            return removed
        candidates = [Path(e.path) for e in os.scandir(folder) if TEMP_MARK in e.name and e.name.endswith(".tmp")
                      and e.is_file(follow_symlinks=False)]
    except (OSError, ValueError):
        return removed
    for p in candidates:
        try:
            if is_stale_temp(p):
                p.unlink()
                removed.append(p)
        except (OSError, ValueError):
            pass
    return removed


@contextmanager
def atomic_writer(path: str | Path) -> Iterator[IO[bytes]]:
    """Yield a binary file whose content replaces ``path`` only if the ``with`` block completes.

    The temporary file's name says who writes it (see the module docstring), so a killed write can be cleaned up.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _in_flight_lock:   # registered before the file exists, so no cleaner can see it unregistered
        fd, tmp = tempfile.mkstemp(prefix=f"{path.name}{TEMP_MARK}{host_tag()}-{os.getpid()}-", suffix=".tmp",
                                   dir=path.parent)
        _in_flight.add(os.path.basename(tmp))
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
    finally:
        with _in_flight_lock:
            _in_flight.discard(os.path.basename(tmp))


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


#: ZIP member time of reproducible archives (the earliest time a ZIP can hold)
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def write_npy_archive(path: str | Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any],
                      reproducible: bool = False) -> Path:
    """The project's data container: a ZIP of *stored* ``.npy`` members plus ``meta.json``, written atomically.

    Members are uncompressed so readers can memory-map them; object arrays are refused (nothing is pickled).
    ``reproducible``: every member gets the same fixed time and permissions instead of the clock's, so equal
    arrays and meta give a byte-identical file (dataset exports compare and resume by bytes).
    """
    def member(name: str) -> "str | zipfile.ZipInfo":
        if not reproducible:
            return name
        info = zipfile.ZipInfo(name, FIXED_ZIP_TIME)
        info.compress_type = zipfile.ZIP_STORED
        info.external_attr = 0o644 << 16
        return info

    with atomic_writer(path) as fh, zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            arr = np.ascontiguousarray(arr)
            if arr.dtype.hasobject:
                raise TypeError(f"array {name} holds Python objects")
            with zf.open(member(name + ".npy"), "w", force_zip64=True) as out:
                np.lib.format.write_array(out, arr, allow_pickle=False)
        zf.writestr(member("meta.json"), json.dumps(dict(meta), indent=1, default=json_default))
    return Path(path)
