"""VAP dock on the studio's recording: "Follow timeline" redoes the overlay as the timeline's
Home / Right / Left keys move, "Evaluate episode" fills the confusion matrix over the recorded steps, and the
"Generate dataset…" dialog's settings reach the generated dataset (a bad value keeps the dialog open)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.support.studio import simulate
from tests.support.vap import assert_true_actions_recorded, open_vap_dock, tiny_checkpoint

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

WAIT = 120_000


def test_follow_timeline_and_evaluate_the_episode(qtbot, tmp_path, monkeypatch, studio):
    from core.render.icons import IconSet
    from core.render.renderer import Renderer
    from core.tasks.vap.overlay import state_item

    win = studio
    simulate(qtbot, win, 4)
    _dock, panel = open_vap_dock(qtbot, win)
    onto = win.session.project.config.ontology      # an untrained model on the opened project's ontology
    ckpt = tiny_checkpoint(tmp_path / "ckpt", (p.name for p in onto.unary), (p.name for p in onto.binary))
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(ckpt))
    qtbot.mouseClick(panel.load_btn, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.model is not None, timeout=WAIT)
    # Evaluate episode: the model over every recorded step
    n = win.num_steps
    qtbot.mouseClick(panel.episode_btn, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.table.rowCount() == 4 and "recorded steps" in panel.recall.text(),
                    timeout=WAIT)
    config, episode = win.session.project.config, win.session.history
    renderer = Renderer(config.city, icons=IconSet.load(library=None))
    truth = np.zeros(4, int)
    for k in range(n):
        item = state_item(config, episode, k, renderer)[1]
        np.add.at(truth, item["action"][item["car"]], 1)
    total = sum(int(panel.table.item(i, j).text()) for i in range(4) for j in range(4))
    assert total == truth.sum() > 0
    rows = [sum(int(panel.table.item(i, j).text()) for j in range(4)) for i in range(4)]
    assert rows == truth.tolist()                                  # rows: the recorded decisions
    # follow the timeline: the overlay is redone at every step the keys show
    panel.follow.click()
    assert panel.follow.isChecked()
    win.window.activateWindow()
    win.window.setFocus()
    qtbot.keyClick(win.window, QtCore.Qt.Key.Key_Home)
    qtbot.waitUntil(lambda: panel.overlay is not None and panel.overlay.world == -1
                    and panel.overlay.step == 0, timeout=WAIT)
    qtbot.keyClick(win.window, QtCore.Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: panel.overlay.step == 1, timeout=WAIT)
    qtbot.keyClick(win.window, QtCore.Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: panel.overlay.step == 2, timeout=WAIT)
    assert panel.overlay.has_prediction
    assert_true_actions_recorded(win, panel.overlay, 2)
    qtbot.keyClick(win.window, QtCore.Qt.Key.Key_Left)
    qtbot.waitUntil(lambda: panel.overlay.step == 1, timeout=WAIT)
    panel.follow.click()                                            # off: the timeline no longer drives it
    qtbot.keyClick(win.window, QtCore.Qt.Key.Key_Right)
    qtbot.wait(300)
    assert panel.overlay.step == 1


def test_generate_dialog_settings_reach_the_dataset(qtbot, tmp_path):
    from app.features.vap.generate import GenerateDialog
    from app.features.vap.overlay import VapPanel
    from app.shell.jobs import JobRunner

    panel = VapPanel(JobRunner())
    qtbot.addWidget(panel)
    out = tmp_path / "gen"
    seen = []

    def fill():
        dlg = QtWidgets.QApplication.activeModalWidget()
        assert isinstance(dlg, GenerateDialog)
        dlg.out.setText(str(out))
        dlg.worlds.setText("1/0")                                       # bad: the dialog stays open
        ok = dlg.findChild(QtWidgets.QDialogButtonBox).button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
        qtbot.mouseClick(ok, QtCore.Qt.MouseButton.LeftButton)
        seen.append((dlg.isVisible(), dlg.error.text()))
        dlg.worlds.setText("1/0/0")
        dlg.steps.setValue(13)
        dlg.direction.setCurrentText("own")
        dlg.seed.setValue(5)
        qtbot.mouseClick(ok, QtCore.Qt.MouseButton.LeftButton)

    QtCore.QTimer.singleShot(0, fill)
    qtbot.mouseClick(panel.gen_btn, QtCore.Qt.MouseButton.LeftButton)
    assert seen and seen[0][0] and "TRAIN/VAL/TEST" in seen[0][1]
    qtbot.waitUntil(lambda: "world(s) made" in panel.status.text() or panel.frames is not None, timeout=WAIT)
    qtbot.waitUntil(lambda: not panel.cancel_btn.isEnabled(), timeout=WAIT)
    info = json.loads((out / "dataset_info.json").read_text())
    assert info["status"] == "complete"
    assert info["settings"]["direction"] == "own" and info["settings"]["seed"] == 5
    assert info["settings"]["steps"] == 13 and info["splits"]["train"]["worlds"][0]["seed"] == 5
