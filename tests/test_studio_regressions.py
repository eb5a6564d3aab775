"""Studio regressions found in review: switching between cities, typing a step while playing."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from .studio_support import ROOT  # noqa: E402
from .test_studio_gui import WAIT, _close, _open_window, _simulate  # noqa: E402


def test_open_project_after_a_smaller_city(qtbot, tmp_path):
    """A saved 18-agent project with a high agent index selected opens cleanly over an 8-agent city."""
    win = _open_window(qtbot, tmp_path / "studio.ini")
    try:
        _simulate(qtbot, win, 8)
        win.select_agent(12)
        root = tmp_path / "proj"
        assert win.save_to(root)
        assert win.open_path(ROOT / "configs" / "modes" / "sim_easy.yaml", ask_save=False)
        qtbot.waitUntil(lambda: win.history is not None and len(win.history.agents) == 8, timeout=WAIT)
        win.flush_redraw()
        assert win.open_path(root, ask_save=False)
        assert len(win.history.agents) == 18 and win.selected == 12
        win.flush_redraw()
        assert len(win.map.scene_data.rgb) == 18
        assert win.project.root == root
    finally:
        _close(win)


def test_typing_a_step_while_playing_pauses_there(qtbot, tmp_path):
    win = _open_window(qtbot, tmp_path / "studio.ini")
    try:
        win.set_speed(20)
        win.play()
        qtbot.waitUntil(lambda: win.num_steps >= 6, timeout=WAIT)
        win.timeline.spin.setValue(3)          # what typing 3 + Enter does (keyboard tracking is off)
        qtbot.wait(400)                         # frames still in flight must not move the view
        assert not win.playing and win.cursor == 3
        assert win.timeline.value == 3
    finally:
        _close(win)
