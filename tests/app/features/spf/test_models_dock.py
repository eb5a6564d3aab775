"""Models panel: Tools ▸ SPF models… (its shortcut) shows the dock; a trained run is loaded, drives an episode on
the job runner, and the step view shows the model's probabilities, model vs oracle and the timeline markers."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.studio import close_window, open_window

pytest.importorskip("pytestqt")
pytest.importorskip("torch")

from PySide6 import QtCore  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def run_dir(tmp_path):
    import torch

    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.config import BCConfig
    from core.tasks.spf.learning.config_yaml import run_config
    from core.tasks.spf.learning.run import save_run
    from core.tasks.spf.networks import build_policy_net

    torch.manual_seed(0)
    env = SPFEnv("easy", "train")
    doc = run_config(BCConfig(algo="mlp-bc", mode="easy", seed=4), env, {})
    return save_run(tmp_path / "run", build_policy_net(doc["architecture"]), doc)


def test_load_a_model_drive_an_episode_and_step_through_it(qtbot, tmp_path, run_dir):
    from app.features.spf.models import SPFModelsPanel

    win = open_window(qtbot, tmp_path / "s.ini")
    try:
        win.window.activateWindow()
        qtbot.keyClick(win.window, QtCore.Qt.Key.Key_M,
                       QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.AltModifier)
        dock = win.docks["spf_models"]
        qtbot.waitUntil(dock.isVisible, timeout=20_000)
        panel = dock.widget() if isinstance(dock.widget(), SPFModelsPanel) else dock.findChild(SPFModelsPanel)
        assert panel.load(run_dir)
        assert "mlp-bc for easy (seed 4" in panel.run_label.text()
        panel.split.setCurrentText("val")
        panel.episode.setValue(1)
        qtbot.mouseClick(panel.run_button, QtCore.Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: panel.view.episode is not None, timeout=60_000)
        ep = panel.view.episode
        assert (ep.split, ep.episode) == ("val", 1) and ep.steps
        dis, vio = panel.view.marker_steps()
        assert dis == ep.disagreement_steps() and vio == ep.violation_steps()
        assert ep.fail == bool(vio)          # an untrained model either violates (marked) or runs out of steps
        # the bars are the model's action probabilities at the shown step; moving the slider moves the view
        np.testing.assert_allclose(panel.view.bar_heights(), ep.steps[0].probabilities, rtol=1e-6)
        if len(ep.steps) > 1:
            panel.view.slider.setValue(2)   # (arrow keys are the studio's window-wide step shortcuts)
            np.testing.assert_allclose(panel.view.bar_heights(), ep.steps[1].probabilities, rtol=1e-6)
            assert panel.view.step_label.text().startswith("step 2 of")
        s = ep.steps[0]
        assert s.model_action == int(np.argmax(s.scores))
        assert any(f.startswith("IsCar(Car_1)") for f in s.facts)
        assert "episode(s) driven: TSR" in panel.totals.text()
    finally:
        close_window(win)


def test_a_run_for_nothing_is_refused_with_a_message(qtbot, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    from app.features.spf.models import SPFModelsPanel
    from app.shell.jobs import JobRunner

    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: shown.append(a[2]))
    jobs = JobRunner()
    panel = SPFModelsPanel(None, jobs)
    qtbot.addWidget(panel)
    assert not panel.load(tmp_path)
    assert "no config.yaml" in shown[0]
    assert not panel.run_button.isEnabled()
    assert jobs.shutdown(5000)
