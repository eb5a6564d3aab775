"""Hidden panels cost nothing per frame and catch up when shown (app/features/playback/drawing.py, agents.py): the
statistics and the inspector hidden through their View ▸ Docks actions keep what they showed while the cursor moves,
and show the current step as soon as they are shown again; the Compare panel likewise."""
from __future__ import annotations

import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")


def test_hidden_statistics_and_inspector_catch_up_when_shown(studio, qtbot):
    win = studio
    simulate(qtbot, win, 12)
    win.select_agent(0)
    stats_dock, insp_dock = win.docks["statistics"], win.docks["inspector"]
    for dock in (stats_dock, insp_dock):
        if not dock.isVisible():
            dock.toggleViewAction().trigger()
        dock.raise_()
    qtbot.waitUntil(lambda: win.stats.isVisible() and win.inspector.isVisible(), timeout=WAIT)
    win.set_cursor(5)
    win.flush_redraw()
    assert "shown step 5 of" in win.stats.summary.text() and win.inspector.report.step == 5
    for dock in (stats_dock, insp_dock):
        dock.toggleViewAction().trigger()          # View ▸ Docks: hide
    qtbot.waitUntil(lambda: not win.stats.isVisible() and not win.inspector.isVisible(), timeout=WAIT)
    win.set_cursor(9)
    win.flush_redraw()
    qtbot.wait(50)
    assert "shown step 5 of" in win.stats.summary.text() and win.inspector.report.step == 5   # not refreshed
    for dock in (stats_dock, insp_dock):
        dock.toggleViewAction().trigger()          # shown again: the current step at once
    qtbot.waitUntil(lambda: "shown step 9 of" in win.stats.summary.text() and win.inspector.report.step == 9,
                    timeout=WAIT)


def test_the_compare_panel_is_refreshed_when_shown(studio, qtbot):
    win = studio
    simulate(qtbot, win, 8)
    ctl = win.feature("inspect").agents
    win.select_agent(0)
    ctl.set_compare((1,))                          # two agents: the Compare dock opens in front
    view = ctl.compare_view
    qtbot.waitUntil(view.isVisible, timeout=WAIT)
    qtbot.waitUntil(lambda: f"at step {win.cursor} " in view.title.text(), timeout=WAIT)
    win.docks["compare"].toggleViewAction().trigger()
    qtbot.waitUntil(lambda: not view.isVisible(), timeout=WAIT)
    win.set_cursor(3)
    win.flush_redraw()
    ctl.refresh_rows()
    assert "at step 3 " not in view.title.text()   # hidden: not computed
    win.docks["compare"].toggleViewAction().trigger()
    qtbot.waitUntil(lambda: "at step 3 " in view.title.text(), timeout=WAIT)
