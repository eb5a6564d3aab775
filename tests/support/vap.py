"""Tiny VAP datasets for tests: the easy mode at 2 px per cell (256² frames), few steps, few worlds."""
from __future__ import annotations

from pathlib import Path

from core.tasks.vap import VapDataConfig

#: steps per test world (frames 1..STEPS-1; the loader keeps steps > 10)
STEPS = 16


def tiny_config(**kw) -> VapDataConfig:
    base = dict(mode="easy", worlds={"train": 1, "val": 1, "test": 0}, steps=STEPS, px_per_cell=2, workers=1)
    base.update(kw)
    return VapDataConfig(**base)


def make_tiny(out: Path, **kw):
    from core.tasks.vap import generate

    return generate(tiny_config(**kw), out)
