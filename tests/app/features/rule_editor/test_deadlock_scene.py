"""A deadlock found by Analyze is loaded from the analysis panel with "Load as scene" and stepped in the
studio; every agent of the scene decides Stop and none moves, step after step (the rules are typed into the
editor with real key events; the search runs as the panel's job)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.base.codes import Action  # noqa: E402
from tests.support.studio import WAIT  # noqa: E402

Key = QtCore.Qt.Key
# a pedestrian on an "at" line waits while someone is in the box; a car waits for what is straight ahead of it
PED_CAR = ["Stop(X) :- IsAtInter(X), IsInInter(Y).", "Stop(X) :- CollidingClose(X, Y)."]
STEPS = 4


def test_load_a_deadlock_as_scene_and_step_it(qtbot, studio):
    win = studio
    ctl = win.features["rule_editor"]
    ctl.show_panel("rule_editor")
    page = ctl.editor.page("rules")
    page.editor.setFocus()
    qtbot.keyClick(page.editor, Key.Key_A, QtCore.Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(page.editor, Key.Key_Delete)
    for line in PED_CAR:
        qtbot.keyClicks(page.editor, line)
        if page.editor.completer.popup().isVisible():   # the line ends with "." : no word to complete
            page.editor.completer.popup().hide()
        qtbot.keyClick(page.editor, Key.Key_Return)
    qtbot.waitUntil(lambda: page.text().split() == " ".join(PED_CAR).split(), timeout=WAIT)
    qtbot.waitUntil(lambda: "rules" in ctl.diagnostics and not ctl._timer.isActive() and not any(
        d.severity == "error" for d in ctl.diagnostics.get("rules", [])), timeout=WAIT)

    panel = ctl.analysis
    panel.deadlock_k.setCurrentIndex(panel.deadlock_k.findData(2))
    qtbot.keyClick(win.window, Key.Key_F7)
    qtbot.waitUntil(lambda: panel.analysis is not None and not panel.cancel_button.isEnabled(), timeout=WAIT * 3)
    found = panel.items_with("DEADLOCK ")
    assert found, [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]
    item = found[0]
    section, scene = item.data(0, QtCore.Qt.ItemDataRole.UserRole)["scene"]
    panel.tree.setCurrentItem(item)
    assert panel.load_button.isEnabled()
    win.answers["load_scene"] = "load"
    qtbot.mouseClick(panel.load_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.history is not None and win.history.meta.get("start") == "scene"
                    and win.num_steps == 0, timeout=WAIT)
    assert len(win.history.agents) == len(scene.agents) >= 2
    start = np.array(win.history.array("positions")[0])
    assert [tuple(p) for p in start] == [tuple(a.position) for a in scene.agents]

    for k in range(1, STEPS + 1):       # → at the newest state simulates one step, as a user steps it
        win.playback.step_forward()
        qtbot.waitUntil(lambda k=k: win.num_steps >= k, timeout=WAIT)
    decided = np.asarray(win.history.array("decided"))
    realised = np.asarray(win.history.array("realised"))
    assert decided.shape == (STEPS, len(scene.agents))
    assert (decided == int(Action.STOP)).all(), decided
    assert (realised == int(Action.STOP)).all(), realised
    for k in range(STEPS + 1):
        assert np.array_equal(win.history.array("positions")[k], start), k
    # every agent's Stop is explained by one of the two typed clauses
    labels = {c["id"]: c["text"] for c in win.history.meta["clauses"]}
    assert {labels[int(f)].split(" :-")[0] for f in np.asarray(win.history.array("fired")).ravel()} == {"Stop(X)"}
    win.session.select(0)
    win.set_cursor(STEPS)
    win.flush_redraw()
    assert "Stop" in win.inspector.summary.parts.why
