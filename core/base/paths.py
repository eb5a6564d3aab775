"""Where the studio's own files are: the repository root and its bundled configs and resources. One definition, so a
module that moves never points at the wrong folder."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
RESOURCES = ROOT / "resources"
#: The bundled default city: what the studio opens and ``simulate`` runs when given nothing.
DEFAULT_MODE = CONFIGS / "modes" / "default.yaml"

__all__ = ["ROOT", "CONFIGS", "RESOURCES", "DEFAULT_MODE"]
