"""A panel whose dock is tabbed behind another costs nothing per frame and catches up when its tab is clicked
(app/shell/onscreen.py). Qt keeps such a dock "visible" (``isVisible()`` is true; it is moved out of the
window), so a panel that only asked Qt would recompute the Agents rows behind Statistics at every step for nobody."""
from __future__ import annotations

import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

pytestmark = pytest.mark.gui


def click_tab(qtbot, win, title: str) -> None:
    """Click the dock tab titled ``title`` (the tab bar QMainWindow puts under tabbed docks)."""
    for bar in win.window.findChildren(QtWidgets.QTabBar):
        for i in range(bar.count()):
            if bar.tabText(i).replace("&", "") == title and bar.isVisible():
                qtbot.mouseClick(bar, QtCore.Qt.MouseButton.LeftButton, pos=bar.tabRect(i).center())
                return
    raise AssertionError(f"no dock tab {title!r}")


def show_step(win, k: int) -> None:
    win.set_cursor(k)
    win.flush_redraw()
    win.feature("inspect").agents.refresh_rows()


def test_agents_rows_behind_the_statistics_tab_wait_for_the_tab(studio, qtbot):
    win = studio
    simulate(qtbot, win, 12)
    panel = win.window.panels.widget("agents")
    assert win.docks["statistics"] in win.window.tabifiedDockWidgets(win.docks["agents"])   # the default layout
    click_tab(qtbot, win, "Agents")
    qtbot.waitUntil(lambda: not panel.visibleRegion().isEmpty(), timeout=WAIT)
    show_step(win, 3)
    assert panel.count.text().endswith("at step 3")
    click_tab(qtbot, win, "Statistics")
    qtbot.waitUntil(lambda: panel.visibleRegion().isEmpty(), timeout=WAIT)
    assert panel.isVisible()            # Qt's view of a dock behind a tab: what isVisible() alone got wrong
    show_step(win, 7)
    qtbot.wait(50)
    assert panel.count.text().endswith("at step 3")   # not recomputed behind the tab
    click_tab(qtbot, win, "Agents")
    qtbot.waitUntil(lambda: panel.count.text().endswith("at step 7"), timeout=WAIT)


def test_statistics_behind_the_agents_tab_catch_up_when_clicked(studio, qtbot):
    win = studio
    simulate(qtbot, win, 12)
    click_tab(qtbot, win, "Statistics")
    qtbot.waitUntil(lambda: not win.stats.visibleRegion().isEmpty(), timeout=WAIT)
    show_step(win, 4)
    assert "shown step 4 of" in win.stats.summary.text()
    click_tab(qtbot, win, "Agents")
    qtbot.waitUntil(lambda: win.stats.visibleRegion().isEmpty(), timeout=WAIT)
    show_step(win, 9)
    qtbot.wait(50)
    assert "shown step 4 of" in win.stats.summary.text()   # behind the tab: not refreshed
    click_tab(qtbot, win, "Statistics")
    qtbot.waitUntil(lambda: "shown step 9 of" in win.stats.summary.text(), timeout=WAIT)
