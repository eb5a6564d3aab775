"""Fixtures of the Qt-free studio-core tests (frames, checkpoints, events, views, projects, inspector)."""
from __future__ import annotations

import pytest

from tests.support.studio import RUN_STEPS, default_config, run_sim


@pytest.fixture(scope="module")
def config():
    """The bundled default city's mode (``configs/modes/default.yaml``)."""
    return default_config()


@pytest.fixture(scope="module")
def sim(config):
    """A recorded 40-step run of the default city, seed 3 (read-only: tests must not step it)."""
    return run_sim(config, seed=3, steps=RUN_STEPS)
