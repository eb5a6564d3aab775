"""A small real study (simulated vap_hard episodes) for study tests in several folders."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make_small_study(folder: Path, questions: int = 12, modality: str = "text", seeds: tuple[int, ...] = (0, 1),
                     steps: int = 100) -> Path:
    from core.study.design import StudySpec, make_study
    from core.study.source import SimulatedSource

    spec = StudySpec(name="small", source=SimulatedSource("configs/modes/vap_hard.yaml", "test", seeds, steps, 11),
                     questions=questions, training=4, practice=2, modality=modality)
    make_study(spec, folder, base=ROOT)
    return folder
