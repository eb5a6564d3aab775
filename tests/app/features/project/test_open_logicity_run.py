"""A reference LogiCity run (.pkl cache) opens in the studio as a read-only replay: File ▸ Open through the real
action, and ``main.py FILE.pkl``."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.support.logicity_cache import make_cache
from tests.support.paths import ROOT
from tests.support.studio import WAIT

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402


@pytest.fixture(scope="module")
def run_cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "logicity_run.pkl"
    buf, _, _ = make_cache(path, steps=2, seed=1)
    return path, buf


def test_file_open_replays_a_pkl_run(studio, qtbot, run_cache, monkeypatch):
    path, buf = run_cache
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName",
                        staticmethod(lambda *a, **k: (str(path), "LogiCity runs (*.pkl)")))
    studio.action("File", "Open project…").trigger()
    qtbot.waitUntil(lambda: studio.session.read_only is not None, timeout=WAIT)
    assert studio.last_error is None, studio.last_error
    assert studio.num_steps == 2 and studio.project.name == "logicity_run"
    assert np.array_equal(studio.history.array("positions"), buf.array("positions"))
    assert "read-only replay" in studio.window.windowTitle()


def test_main_py_opens_a_pkl_run(run_cache, tmp_path):
    path, _ = run_cache
    shot = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LOGICITY_DATA_DIR=str(tmp_path / "data"))
    run = subprocess.run([sys.executable, "main.py", str(path), "--screenshot", str(shot), "--settle-ms", "100"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    assert shot.exists() and shot.stat().st_size > 10_000
    assert list((tmp_path / "data").rglob("logicity_run-*.npz"))   # converted once into the user cache
