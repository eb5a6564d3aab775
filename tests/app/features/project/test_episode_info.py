"""File ▸ Episode info… (Ctrl+Shift+I): after a save the window lists the saved episode with the city and agent
hashes project.yaml records for it, and says when the edits no longer match it."""
from __future__ import annotations

from PySide6 import QtCore

from core.sim.provenance import agents_hash, city_hash
from core.studio import agent_sets as A
from tests.support.studio import WAIT, simulate

Qt = QtCore.Qt


def test_episode_info_shows_the_saved_provenance(studio, qtbot, tmp_path):
    win = studio
    simulate(qtbot, win, 2)
    assert win.projects.save_to(tmp_path / "proj")
    cfg = win.session.project.config
    qtbot.keyClick(win.window, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    ctl = win.features["episode_info"]
    qtbot.waitUntil(lambda: ctl.dialog is not None and ctl.dialog.isVisible(), timeout=WAIT)
    saved = ctl.dialog.saved
    assert saved.count() == 1
    text = saved.item(0).text()
    assert text.startswith("● main") and city_hash(cfg.city)[:12] in text and agents_hash(cfg.agents)[:12] in text
    assert "matches the edits" in text and agents_hash(cfg.agents) in saved.item(0).toolTip()
    assert "matches the edits" in ctl.dialog.recording.text()
    # an agent edit: the saved episode was made with other agents (the window follows while open)
    win.session.execute(A.edit(win.session, "agents", [0], add_concepts=["tiro"]))
    qtbot.waitUntil(lambda: "another city or agents" in saved.item(0).text(), timeout=WAIT)
    assert "agents changed" in ctl.dialog.recording.text()
