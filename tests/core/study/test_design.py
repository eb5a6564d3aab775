"""Study designer: the paper's mini-test recipe, disjoint roles, seeded orders, bank integrity."""
from __future__ import annotations

import shutil
from collections import Counter

import numpy as np
import pytest

from core.base.errors import ConfigError
from core.study.design import FRAME_RGB, allocate, hardness_marks, load_study, participant_order


def test_mini_test_recipe_counts(mini_study_dir):
    st = load_study(mini_study_dir)
    test = st.test
    assert len(test) == 117
    assert all(q.agent_name.startswith("Car_") for q in st.questions)
    assert all({"tiro", "reckless"} & set(q.concepts) for q in st.questions)
    counts = Counter(q.truth_word for q in test)
    assert sorted(counts.values()) == [29, 29, 29, 30]        # stratified by action as evenly as possible
    training = st.by_role("training")
    assert len(training) == 5 and {q.truth for q in training} == {0, 1, 2, 3}  # demos cover all options
    assert len(st.by_role("practice")) == 4
    keys = [(q.world, q.step, q.agent) for q in st.questions]
    assert len(set(keys)) == len(keys)                          # roles are disjoint
    assert len({q.description for q in test}) == 117            # no question asked twice
    assert st.spec.source.mode.endswith("vap_hard.yaml")


def test_allocate():
    assert allocate(117, [500, 500, 500, 500]) == [30, 29, 29, 29]
    assert allocate(10, [1, 100, 2, 100]) == [1, 4, 2, 3]
    assert sum(allocate(7, [3, 0, 0, 4])) == 7
    with pytest.raises(ConfigError):
        allocate(10, [1, 2, 3, 3])


def test_hardness_marks():
    assert hardness_marks([80, 154, 86, 481]) == {"Slow": "‡", "Normal": "†", "Fast": "‡", "Stop": ""}


def test_participant_orders_are_seeded_and_distinct(mini_study_dir):
    st = load_study(mini_study_dir)
    a1, a2, b = participant_order(st, "P01"), participant_order(st, "P01"), participant_order(st, "P02")
    assert a1 == a2 and a1 != b and sorted(a1) == sorted(b) == sorted(q.id for q in st.test)


def test_edited_bank_is_refused(mini_study_dir, tmp_path):
    dst = tmp_path / "s"
    shutil.copytree(mini_study_dir, dst)
    bank = dst / "questions.jsonl"
    bank.write_text(bank.read_text().replace('"truth": "Stop"', '"truth": "Fast"', 1))
    with pytest.raises(ConfigError, match="SHA-256"):
        load_study(dst)


def test_bad_study_yaml_is_located(mini_study_dir, tmp_path):
    dst = tmp_path / "s"
    shutil.copytree(mini_study_dir, dst)
    y = dst / "study.yaml"
    y.write_text(y.read_text().replace("modality: text", "modality: smell"))
    with pytest.raises(ConfigError, match="modality"):
        load_study(dst)
    y.write_text(y.read_text().replace("modality: smell", "modality: text\ncolour: red"))
    with pytest.raises(ConfigError, match="colour") as ei:
        load_study(dst)
    assert ei.value.line is not None


def test_image_modality_renders_frames_with_the_agent_framed(tmp_path):
    from PIL import Image

    from tests.support.study import make_small_study

    st = load_study(make_small_study(tmp_path / "img", questions=4, modality="both",
                                           seeds=(0,), steps=60))
    assert len(st.questions) == 4 + 4 + 2
    for q in st.questions:
        img = Image.open(st.folder / q.image)
        assert img.size[0] > 200
        assert img.size == (640, 640)
        assert (np.asarray(img) == FRAME_RGB).all(axis=-1).any()   # the red frame around the asked agent
