"""Run ``main.py`` in a fresh interpreter, as a user would from the repository root."""
from __future__ import annotations

import subprocess
import sys

from tests.support.paths import ROOT


def run_main(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python main.py ARGS`` from the repository root; output captured as text."""
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)
