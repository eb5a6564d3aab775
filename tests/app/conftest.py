"""Fixtures of the studio window tests: a settings file per test and the default city opened in a window."""
from __future__ import annotations

import pytest

from tests.support.studio import close_window, open_window


@pytest.fixture
def settings_path(tmp_path):
    return tmp_path / "studio.ini"


@pytest.fixture
def studio(qtbot, settings_path):
    """The main window with the bundled default city open, closed (and its thread checked) afterwards."""
    win = open_window(qtbot, settings_path)
    yield win
    close_window(win)


@pytest.fixture(autouse=True)
def _nothing_left_running():
    """After each studio test, every background job and service (app/shell/jobs.py) is stopped: a test never leaves a
    thread running into the next one (and a job that cannot be stopped fails the test)."""
    yield
    from app.shell import jobs

    assert jobs.wait_for_all(30_000), f"still running after the test: {[h.kind for h in jobs.running()]}"
