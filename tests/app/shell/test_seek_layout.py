"""Moving the shown step does not re-lay out the main window (widgets/layout_fence.py): the labels whose text
changes at every step (inspector, statistics footer, Agents panel count, status-bar step) are fenced or of fixed
size, so Qt's layout requests stop before the main window, which would otherwise re-lay out (and re-animate)
every dock at each step of a scrub."""
from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")


class LayoutRequests(QtCore.QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 (Qt name)
        if ev.type() == QtCore.QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def test_stepping_through_the_timeline_does_not_re_lay_out_the_window(studio, qtbot):
    win = studio
    win.window.resize(1440, 900)
    simulate(qtbot, win, 14)
    win.select_agent(0)
    panel = win.window.panels.widget("agents")
    win.set_cursor(14)
    qtbot.waitUntil(lambda: win.cursor == 14, timeout=WAIT)
    win.map.setFocus()
    qtbot.keyClick(win.map, QtCore.Qt.Key.Key_Left)      # once, so that every label has its size for a step
    qtbot.waitUntil(lambda: win.cursor == 13, timeout=WAIT)

    def shown(k: int, dock: str) -> bool:   # (a dock tabbed behind another is not refreshed)
        return (win.cursor == k and win.inspector.report is not None and win.inspector.report.step == k
                and (f"shown step {k} of" in win.stats.summary.text() if dock == "statistics"
                     else f"at step {k}" in panel.count.text()))

    counted = 0
    for dock, steps in (("agents", range(12, 8, -1)), ("statistics", range(8, 4, -1))):   # tabs of one area
        d = win.docks[dock]
        if not d.isVisible():
            d.toggleViewAction().trigger()
        d.raise_()
        qtbot.waitUntil(lambda d=d: d.widget().isVisible() and win.inspector.isVisible(), timeout=WAIT)
        qtbot.wait(300)
        spy = LayoutRequests()
        win.window.installEventFilter(spy)
        try:
            for k in steps:                              # Timeline ▸ Step back (Left), the panels redrawn each time
                qtbot.keyClick(win.map, QtCore.Qt.Key.Key_Left)
                try:
                    qtbot.waitUntil(lambda k=k, dock=dock: shown(k, dock), timeout=8000)
                except Exception as exc:
                    raise AssertionError((k, win.cursor, win.inspector.report and win.inspector.report.step,
                                          win.stats.isVisible(), win.stats.summary.text()[:60], panel.isVisible(),
                                          panel.count.text())) from exc
            qtbot.wait(200)
        finally:
            win.window.removeEventFilter(spy)
        counted += spy.count
    assert win.status_labels.step_label.text() == f"Step 5 / {win.num_steps}"
    assert counted == 0


def test_a_paused_seek_is_drawn_in_one_pass(studio, qtbot):
    """A step chosen while paused: the map, inspector and statistics are all redrawn before the window is painted
    (app/features/playback/drawing.py), so the first paint of the map already comes with the panels of that step and the
    map is painted once per seek."""
    win = studio
    win.window.resize(1440, 900)
    simulate(qtbot, win, 12)
    win.select_agent(0)
    win.set_cursor(12)
    qtbot.waitUntil(lambda: win.inspector.report is not None and win.inspector.report.step == 12, timeout=WAIT)
    qtbot.wait(200)
    seen: list[tuple[int, int]] = []
    win.map.painted.connect(lambda: seen.append((win.inspector.report.step, win.stats._cursor)))
    for k in (3, 9, 5):
        seen.clear()
        win.timeline.stepRequested.emit(k)           # what a click on the timeline asks for
        qtbot.waitUntil(lambda k=k: bool(seen) and win.inspector.report.step == k, timeout=WAIT)
        qtbot.wait(100)
        assert seen == [(k, k)]


class PaintPasses(QtCore.QObject):
    """Counts the passes that paint something in a window (Qt sends the window one UpdateRequest per pass of its
    backing store; a pass with nothing dirty paints no widget). An application event filter: it sees each event
    before the window's own filters."""

    def __init__(self, window: QtWidgets.QWidget) -> None:
        super().__init__()
        self.window = window
        self.passes: list[int] = []     # paint events in each pass

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 (Qt name)
        t = ev.type()
        if t == QtCore.QEvent.Type.UpdateRequest and obj is self.window:
            self.passes.append(0)
        elif t == QtCore.QEvent.Type.Paint and self.passes and isinstance(obj, QtWidgets.QWidget) \
                and obj.window() is self.window:
            self.passes[-1] += 1
        return False

    def painting(self) -> int:
        return sum(1 for n in self.passes if n)


def test_a_paused_seek_paints_the_window_once(studio, qtbot):
    """The map's and the plots' scenes process their changes before the window is painted, with the paint held
    (app/features/playback/drawing.py): a scene processing its changes paints its window at once, so the map's scene,
    then the statistics plot's, then the inspector's labels each brought a pass of the whole window of its own."""
    win = studio
    win.window.resize(1440, 900)
    simulate(qtbot, win, 12)
    win.select_agent(0)
    d = win.docks["statistics"]
    if not d.isVisible():
        d.toggleViewAction().trigger()
    d.raise_()
    win.set_cursor(12)
    qtbot.waitUntil(lambda: win.inspector.report is not None and win.inspector.report.step == 12
                    and win.stats.isVisible() and win.inspector.isVisible(), timeout=WAIT)
    qtbot.wait(300)
    spy = PaintPasses(win.window)
    app = QtWidgets.QApplication.instance()
    app.installEventFilter(spy)
    try:
        for k in (3, 9, 5, 11):
            spy.passes.clear()
            win.timeline.stepRequested.emit(k)       # what a click on the timeline asks for
            qtbot.waitUntil(lambda k=k: win.inspector.report.step == k and f"shown step {k} of"
                            in win.stats.summary.text(), timeout=WAIT)
            qtbot.wait(150)
            assert spy.painting() == 1, (k, spy.passes)
    finally:
        app.removeEventFilter(spy)
