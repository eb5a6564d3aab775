"""Studio settings (window layout, recent projects, view options) in an INI file in the user data folder.

Why not the platform default store: ``LOGICITY_DATA_DIR`` redirects every per-user file (tests, portable
installs), so settings live next to the icon library in :func:`core.io.datadir.user_data_dir`.
"""
from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore

from core.io.datadir import user_data_dir

MAX_RECENT = 8


def make_settings(path: str | Path | None = None) -> QtCore.QSettings:
    p = Path(path) if path is not None else user_data_dir() / "studio.ini"
    p.parent.mkdir(parents=True, exist_ok=True)
    return QtCore.QSettings(str(p), QtCore.QSettings.Format.IniFormat)


def recent_files(s: QtCore.QSettings) -> list[str]:
    v = s.value("recent/files", [])
    if isinstance(v, str):   # an INI file stores a list of one as a plain value
        v = [v]
    return [str(x) for x in v if x] if isinstance(v, list) else []


def add_recent(s: QtCore.QSettings, path: str | Path) -> list[str]:
    p = str(Path(path).resolve())
    files = [f for f in recent_files(s) if f != p]
    files.insert(0, p)
    files = files[:MAX_RECENT]
    s.setValue("recent/files", files)
    return files


def remove_recent(s: QtCore.QSettings, path: str) -> None:
    s.setValue("recent/files", [f for f in recent_files(s) if f != path])
