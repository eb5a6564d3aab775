"""A VAP dataset split as the question source: the same facts and answers as simulating the same world."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.base.errors import ConfigError
from core.study.design import FRAME_RGB, StudySpec, load_study, make_study
from core.study.source import SimulatedSource, concept_filter
from core.study.source_vap import VapDatasetSource
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def vap_dataset(tmp_path_factory) -> Path:
    from core.tasks.vap.dataset import generate
    from core.tasks.vap.settings import VapDataConfig

    out = tmp_path_factory.mktemp("vapds")
    generate(VapDataConfig(mode="hard", agents="fixed", worlds={"train": 0, "val": 0, "test": 1}, steps=18,
                           workers=1), out)
    return out


def test_dataset_questions_equal_simulated_ones(vap_dataset):
    keep = concept_filter([], cars_only=True)
    a = VapDatasetSource(str(vap_dataset), "test", 11).collect(keep)
    b = SimulatedSource("configs/modes/vap_hard.yaml", "test", (0,), 18, 11).collect(keep, base=ROOT)
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert (x.step, x.agent, x.agent_name, x.truth, x.concepts) == (y.step, y.agent, y.agent_name, y.truth,
                                                                         y.concepts)
        assert x.facts.entities == y.facts.entities and x.facts.relations == y.facts.relations
        assert dict(x.facts.unary) == dict(y.facts.unary)


def test_study_from_a_dataset_with_its_images(vap_dataset, tmp_path):
    spec = StudySpec(name="vap", source=VapDatasetSource(str(vap_dataset), "test", 11), questions=4,
                     concepts=(), training=4, practice=0, modality="both")
    make_study(spec, tmp_path / "st")
    st = load_study(tmp_path / "st")
    assert isinstance(st.spec.source, VapDatasetSource) and len(st.test) == 4
    from PIL import Image

    img = np.asarray(Image.open(st.folder / st.test[0].image))
    assert img.shape == (1024, 1024, 3) and (img == FRAME_RGB).all(axis=-1).any()
    with pytest.raises(ConfigError, match="no worlds in split"):
        VapDatasetSource(str(vap_dataset), "train", 11).collect(concept_filter([]))
    with pytest.raises(ConfigError, match="not a VAP dataset"):
        VapDatasetSource(str(tmp_path), "test", 11).collect(concept_filter([]))
