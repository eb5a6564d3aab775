"""Whether the compiled kernels of :mod:`core.logic.kernels` (numba) are used, imported on first need.

Why a switch: numba is an optional speed-up, not a requirement. Importing it is slow, so it is
imported only when a large scene (more than ``DENSE_PAIR_AGENTS`` agents) is first grounded; when it cannot be
imported (not installed, or a numpy it does not support) the numpy code runs instead, with the same results.
``LOGICITY_KERNELS=0`` in the environment turns the kernels off (e.g. to compare both paths); tests use
:func:`set_enabled`.
"""
from __future__ import annotations

import os
import sys
import threading
from types import ModuleType

_lock = threading.Lock()
_module: ModuleType | None = None
_tried = False
_enabled = os.environ.get("LOGICITY_KERNELS", "1").strip().lower() not in ("0", "false", "no", "off")


def kernels() -> ModuleType | None:
    """The kernels module, or None when disabled or numba cannot be imported."""
    global _module, _tried
    if not _enabled:
        return None
    if not _tried:
        with _lock:
            if not _tried:
                try:
                    from core.logic.kernels import G_NONE  # noqa: F401  (imports the module, which compiles nothing yet)
                    mod = sys.modules[f"{__package__}.kernels"]
                except Exception:   # ImportError, or numba refusing this numpy: fall back to numpy
                    mod = None
                _module, _tried = mod, True
    return _module


def set_enabled(flag: bool) -> bool:
    """Turn the kernels on or off for this process; returns the previous setting."""
    global _enabled
    old, _enabled = _enabled, bool(flag)
    return old


def available() -> bool:
    """Whether the kernels can run here (numba importable), whatever the switch says."""
    global _enabled
    old, _enabled = _enabled, True
    try:
        return kernels() is not None
    finally:
        _enabled = old
