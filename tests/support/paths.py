"""Where the repository and its bundled inputs are, for every test whatever folder it sits in."""
from __future__ import annotations

from pathlib import Path

#: The repository root (tests/support/paths.py → two folders up).
ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
MODES = CONFIGS / "modes"
DEFAULT_MODE = MODES / "default.yaml"
#: The reference simulator's data files (read-only test data, MIT; see tests/data/.../LICENSE-NOTE.md).
REFERENCE_CONFIGS = ROOT / "tests" / "data" / "reference" / "logicity-configs"
