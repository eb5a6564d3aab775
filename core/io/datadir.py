"""Where the studio keeps per-user data (icon library, settings, caches), outside the repository.

Why: generated icons and the user's model path belong to the user, not to a project or to the install; tests and
portable installs redirect everything with the ``LOGICITY_DATA_DIR`` environment variable.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

APP_DIR_NAME = "LogiCityStudio"
ENV_VAR = "LOGICITY_DATA_DIR"


def user_data_dir() -> Path:
    """``$LOGICITY_DATA_DIR`` if set, else the platform's per-user data folder + ``LogiCityStudio``.

    Linux: ``$XDG_DATA_HOME`` or ``~/.local/share``; macOS: ``~/Library/Application Support``;
    Windows: ``%APPDATA%``. The folder is not created here (callers create what they write).
    """
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    home = Path.home()
    if sys.platform.startswith("win"):
        base = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / APP_DIR_NAME


def icon_library_dir() -> Path:
    return user_data_dir() / "icons"


def cache_dir() -> Path:
    return user_data_dir() / "cache"
