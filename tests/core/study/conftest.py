"""Study fixtures: the paper's mini-test recipe once per session, and a small study for fast tests."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tests.support.study import make_small_study


@pytest.fixture(scope="session")
def mini_study_dir(tmp_path_factory) -> Path:
    """The default recipe (117 tiro/reckless questions of vap_hard), made once; copy before writing into it."""
    from core.study.design import StudySpec, make_study

    folder = tmp_path_factory.mktemp("mini") / "study"
    make_study(StudySpec(), folder, base=ROOT)
    return folder


@pytest.fixture()
def small_study(tmp_path_factory, _small_study_master) -> Path:
    """A fresh copy of a 12-question study (safe to write journals into)."""
    dst = tmp_path_factory.mktemp("small") / "study"
    shutil.copytree(_small_study_master, dst)
    return dst


@pytest.fixture(scope="session")
def _small_study_master(tmp_path_factory) -> Path:
    return make_small_study(tmp_path_factory.mktemp("small_master") / "study")


@pytest.fixture(scope="session")
def tiny_causal_lm(tmp_path_factory) -> Path:
    """A random-weight GPT-2 (1 layer, 32-d) with a byte-level BPE tokenizer trained here: no downloads."""
    from tests.support.study import make_tiny_causal_lm

    return make_tiny_causal_lm(tmp_path_factory.mktemp("tiny_lm"))
