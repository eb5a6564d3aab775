"""Visual Action Prediction (the paper's second task): dataset generation, labels, loading and metrics.

``generate(config, out_dir, progress=None, cancel=None)`` makes a dataset folder (docs/vap.md); the models live
in ``core.models.vap``. Heavy libraries (torch, pyarrow, datasets) are imported inside the functions that use them.
"""
from __future__ import annotations

from core.tasks.vap.dataset import GenerationResult, generate
from core.tasks.vap.settings import VapDataConfig, parse_worlds

__all__ = ["generate", "GenerationResult", "VapDataConfig", "parse_worlds"]
