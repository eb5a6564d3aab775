"""Test-wide settings: headless Qt, offline Hugging Face, deterministic hypothesis profile."""
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# Never write to the real per-user data folder (icon library, settings) from a test run.
import tempfile  # noqa: E402

os.environ.setdefault("LOGICITY_DATA_DIR", tempfile.mkdtemp(prefix="logicity-test-data-"))

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pytest  # noqa: E402

#: The reference simulator's data files (read-only test data).
#: A copy ships in tests/data (MIT, see its LICENSE-NOTE.md) so the suite is self-contained in any checkout.
REFERENCE_CONFIGS = ROOT / "tests" / "data" / "reference" / "logicity-configs"


@pytest.fixture(scope="session")
def reference_configs() -> Path:
    assert REFERENCE_CONFIGS.exists(), f"test data missing: {REFERENCE_CONFIGS}"
    return REFERENCE_CONFIGS


@pytest.fixture(scope="module")
def saved_project(tmp_path_factory) -> Path:
    """A saved project of the bundled default city with a ``studio:`` block (copy it before editing)."""
    from tests.support.studio import save_default_project

    return save_default_project(tmp_path_factory.mktemp("proj") / "base")


@pytest.fixture(scope="session")
def tiny_sd_model(tmp_path_factory) -> Path:
    """The tiny random-weight text-to-image pipeline (tests/support/tiny_sd.py), built offline once per run."""
    from tests.support.tiny_sd import tiny_model

    return tiny_model(tmp_path_factory)


@pytest.fixture
def icon_user_data(monkeypatch, tmp_path) -> Path:
    """The test's own user data folder (``tmp_path/userdata``, its icon library inside) and no icon model
    configured through the environment."""
    data = tmp_path / "userdata"
    monkeypatch.setenv("LOGICITY_DATA_DIR", str(data))
    monkeypatch.delenv("LOGICITY_ICON_MODEL", raising=False)
    return data


@pytest.fixture(autouse=True)
def _no_unanswered_modal(request):
    """In every Qt test: a modal dialog or popup left unanswered for 30 s is closed and fails the test (see
    tests/support/modal_watchdog.py) instead of hanging the whole run."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("qtbot")   # the QApplication exists from here on
    from tests.support.modal_watchdog import ModalWatchdog

    dog = ModalWatchdog(limit_s=30.0)
    yield
    dog.stop()
    assert not dog.closed, f"a modal dialog waited for an answer no test gave (closed by the watchdog): {dog.closed}"


@pytest.fixture(autouse=True)
def _garbage_collected_in_the_gui_thread(request):
    """In every Qt test, as in the studio (app/shell/gui_gc.py): cyclic garbage is collected by a GUI-thread timer, never
    by a job thread that happens to allocate; afterwards the test's garbage is collected here and Python's automatic
    collector is back on for the tests without an event loop."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("qtbot")
    from app.shell import gui_gc

    gui_gc.install()
    yield
    gui_gc.uninstall()
