"""The Problems panel (app/features/problems/controller.py, widgets/problems/problems_panel.py): it lists every registered checker's
findings, an entry leads to its cells on the map, and an error stops the simulation from stepping (the real F10
shortcut) with the reason in the status line; a warning does not."""
from __future__ import annotations

import pytest

from core.studio.problems import ERROR, WARNING, Problem, register_checker, unregister_checker
from tests.support.studio import close_window, open_window

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402


@pytest.fixture
def found():
    """What the test checker reports (edit the list in the test)."""
    items: list[Problem] = []
    register_checker("test_problems", lambda session: list(items))
    yield items
    unregister_checker("test_problems")


def test_problems_are_listed_lead_to_their_cells_and_errors_block_stepping(qtbot, tmp_path, found):
    win = open_window(qtbot, tmp_path / "s.ini")
    try:
        ctl = win.features["problems"]
        panel = win.window.panels.widget("problems")
        found.append(Problem(WARNING, "a lonely sidewalk", "test", cells=((100, 100), (101, 100))))
        ctl.refresh_now()
        assert ("a lonely sidewalk", "cell (100, 100) +1", "test") in panel.row_texts()
        steps = win.num_steps
        win.window.activateWindow()
        qtbot.keyClick(win.window, QtCore.Qt.Key.Key_F10)          # a warning does not block
        qtbot.waitUntil(lambda: win.num_steps == steps + 1, timeout=60_000)

        found.insert(0, Problem(ERROR, "the lane graph is split", "test", cells=((20, 30),)))
        ctl.schedule()
        qtbot.waitUntil(lambda: len(panel.row_texts()) == 2)
        assert panel.row_texts()[0][0] == "the lane graph is split"     # errors first
        assert "1 error, 1 warning" in panel.summary.text()
        panel.activate_row(0)
        assert win.map.tools.highlighted == ((20, 30),)
        (x0, x1), (y0, y1) = win.map.vb.viewRange()
        assert x0 <= 30.5 <= x1 and y0 <= 20.5 <= y1 and x1 - x0 < 100   # zoomed in on the cell

        win.docks["problems"].hide()
        qtbot.keyClick(win.window, QtCore.Qt.Key.Key_F10)
        qtbot.wait(300)
        assert win.num_steps == steps + 1                                 # refused
        assert "Cannot simulate a step" in win.last_message and "lane graph is split" in win.last_message
        assert win.docks["problems"].isVisible()                          # and the panel shows why
    finally:
        close_window(win)
