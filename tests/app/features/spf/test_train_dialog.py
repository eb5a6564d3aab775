"""Train dialog: Start runs a real (tiny) training on the job runner with progress and a live validation-TSR plot;
Cancel stops a long run and keeps the best checkpoint; the finished run is loaded into the Models panel."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")
pytest.importorskip("torch")

from PySide6 import QtCore  # noqa: E402

pytestmark = pytest.mark.gui
WAIT = 180_000


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    from core.tasks.spf.demos import collect_oracle, save_demonstrations

    trajs, meta = collect_oracle("easy", 4, "train", seed=0)
    path = tmp_path_factory.mktemp("demos") / "d.npz"
    save_demonstrations(path, trajs, meta)
    return path


@pytest.fixture
def jobs(qapp):
    from app.shell.jobs import JobRunner

    r = JobRunner()
    yield r
    assert r.shutdown(60_000)


def _dialog(qtbot, jobs, demos, out, steps):
    from app.features.spf.models import SPFModelsPanel

    panel = SPFModelsPanel(None, jobs)
    qtbot.addWidget(panel)
    qtbot.mouseClick(panel.train_button, QtCore.Qt.MouseButton.LeftButton)
    dlg = panel.train_dialog
    dlg.options = {"demos": demos, "val_episodes": 1, "test": False, "eval_every": 10, "tensorboard": False}
    dlg.algo.setCurrentText("mlp-bc")
    dlg.steps.setValue(steps)
    dlg.out.setText(str(out))
    return panel, dlg


def test_start_trains_with_progress_and_a_live_plot(qtbot, jobs, demos, tmp_path):
    panel, dlg = _dialog(qtbot, jobs, demos, tmp_path / "run", 30)
    with qtbot.waitSignal(dlg.runFinished, timeout=WAIT) as sig:
        qtbot.mouseClick(dlg.start_button, QtCore.Qt.MouseButton.LeftButton)
    assert sig.args == [str(tmp_path / "run")]
    assert dlg.status.text().startswith("finished: validation TSR")
    assert [s for s, _ in dlg.curves["val_tsr"]] == [10, 20, 30]
    assert dlg.progress.value() == dlg.progress.maximum() == 30
    assert "mlp-bc for easy" in panel.run_label.text()        # the finished run is loaded into the panel


def test_cancel_keeps_the_best_checkpoint(qtbot, jobs, demos, tmp_path):
    panel, dlg = _dialog(qtbot, jobs, demos, tmp_path / "run", 1_000_000)
    qtbot.mouseClick(dlg.start_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(dlg.curves["val_tsr"]) >= 1, timeout=WAIT)
    qtbot.mouseClick(dlg.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dlg.start_button.isEnabled(), timeout=WAIT)
    assert "cancelled; best checkpoint kept" in dlg.status.text()
    assert (tmp_path / "run" / "model.safetensors").is_file()
    from core.tasks.spf.learning.run import load_run, read_config

    cfg = read_config(tmp_path / "run")
    assert cfg["training"]["cancelled"] is True and cfg["training"]["best_step"] >= 10
    load_run(tmp_path / "run")
