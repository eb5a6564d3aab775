"""VAP predictions dock: opened with its shortcut, a dataset frame with badges coloured by
right/wrong predictions of a loaded checkpoint, edges filtered by predicate, hover card, Right key steps frames,
split evaluation fills the confusion matrix, dataset generation from the dock can be cancelled."""
from __future__ import annotations

import json

import pytest

from tests.support.studio import simulate
from tests.support.vap import assert_true_actions_recorded, open_vap_dock

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

WAIT = 120_000


@pytest.fixture(scope="module")
def data_and_checkpoint(tmp_path_factory):
    from tests.support.vap import make_tiny, tiny_checkpoint

    root = tmp_path_factory.mktemp("vapui")
    make_tiny(root / "data", worlds={"train": 1, "val": 0, "test": 1}, steps=24)
    info = json.loads((root / "data" / "dataset_info.json").read_text())
    tiny_checkpoint(root / "ckpt", info["unary_predicates"], info["binary_predicates"])
    return root / "data", root / "ckpt"


def test_vap_dock_predictions_edges_hover_and_confusion(qtbot, data_and_checkpoint, studio):
    from widgets.vap.vap_view import BAD, GOOD, NEUTRAL

    data, ckpt = data_and_checkpoint
    win = studio
    assert not win.docks["vap"].isVisible()
    _dock, panel = open_vap_dock(qtbot, win)
    panel.open_dataset(data)
    qtbot.waitUntil(lambda: panel.overlay is not None, timeout=WAIT)
    assert set(panel.view.badge_colours()) == {NEUTRAL}          # no model: true actions only
    panel.load_checkpoint(ckpt)
    qtbot.waitUntil(lambda: panel.overlay is not None and panel.overlay.has_prediction, timeout=WAIT)
    ov = panel.overlay
    expect = [GOOD if a.correct else BAD for a in ov.agents]
    assert panel.view.badge_colours() == expect
    # edges: all predicted relations, then one predicate only
    panel.predicate.setCurrentText("IsClose")
    assert all(e.predicate == "IsClose" and e.pred for e in panel.view.shown_edges())
    assert panel.view.edges.xData is None or len(panel.view.edges.xData) == 2 * len(panel.view.shown_edges())
    # hover card through a real mouse move over the first agent's box
    a = ov.agents[0]
    cx, cy = (a.box[0] + a.box[2]) / 2, (a.box[1] + a.box[3]) / 2
    scene_pt = panel.view.vb.mapViewToScene(QtCore.QPointF(cx, cy))
    qtbot.mouseMove(panel.view.glw.viewport(), panel.view.glw.mapFromScene(scene_pt))
    qtbot.waitUntil(lambda: a.agent_id in panel.view.card_text(), timeout=10_000)
    assert "predicted" in panel.view.card_text() and "concepts true" in panel.view.card_text()
    # step through frames with the keyboard
    before = (ov.world, ov.step)
    panel.slider.setFocus()
    qtbot.keyClick(panel.slider, QtCore.Qt.Key.Key_Right)
    qtbot.waitUntil(lambda: (panel.overlay.world, panel.overlay.step) != before, timeout=WAIT)
    # split evaluation fills the confusion matrix (rows true, columns predicted)
    qtbot.mouseClick(panel.eval_btn, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.table.rowCount() == 4, timeout=WAIT)
    cars = sum(int(it["car"].sum()) for it in panel.frames.items)
    total = sum(int(panel.table.item(i, j).text()) for i in range(4) for j in range(4))
    assert total == cars and "aAcc" in panel.recall.text()
    # the studio's shown step as a VAP frame: truth = the recorded decisions of that step
    simulate(qtbot, win, 3)
    win.set_cursor(1)
    qtbot.mouseClick(panel.state_btn, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.overlay.world == -1 and panel.overlay.step == 1, timeout=WAIT)
    assert panel.overlay.agents
    assert_true_actions_recorded(win, panel.overlay, 1)
    win.set_cursor(win.num_steps)
    qtbot.mouseClick(panel.state_btn, QtCore.Qt.MouseButton.LeftButton)
    assert "no recorded decision" in panel.status.text()


def test_generation_from_the_dock_can_be_cancelled(qtbot, tmp_path):
    from app.features.vap.overlay import VapPanel
    from app.shell.jobs import JobRunner
    from tests.support.vap import tiny_config

    panel = VapPanel(JobRunner())
    qtbot.addWidget(panel)
    out = tmp_path / "gen"
    panel.generate(out, tiny_config(worlds={"train": 3}, steps=60))
    assert panel.cancel_btn.isEnabled()
    qtbot.waitUntil(lambda: panel.progress.value() > 0, timeout=WAIT)
    qtbot.mouseClick(panel.cancel_btn, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.cancel_btn.isEnabled(), timeout=WAIT)
    assert "cancelled" in panel.status.text()
    assert not list((out / "train").glob(".world_*"))
    assert json.loads((out / "dataset_info.json").read_text())["status"] == "incomplete"
