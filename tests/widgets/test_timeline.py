"""The timeline bar with thousands of markers (widgets/timeline.py): markers are kept per lane as they arrive and
drawn as merged pixel runs, so a lane full of markers is a few rectangles; what is painted and what the tooltip
says still match every marker."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

from tests.support.qt import paint_spy  # noqa: E402
from widgets.timeline import Marker, TimelineBar  # noqa: E402

RED, BLUE = (220, 30, 40), (30, 60, 230)


@pytest.fixture
def bar(qtbot):
    w = TimelineBar()
    qtbot.addWidget(w)
    w.set_lanes([("dense", "Dense", RED), ("sparse", "Sparse", BLUE)])
    w.resize(610, 60)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_a_lane_with_a_marker_at_every_step_is_one_run_and_sparse_markers_stay_apart(bar):
    bar.set_range(5000)
    bar.set_markers([Marker(k, "dense", RED, f"d{k}") for k in range(0, 2500)])
    bar.add_markers([Marker(k, "dense", RED, f"d{k}") for k in range(2500, 5001)]
                    + [Marker(k, "sparse", BLUE, f"s{k}") for k in (100, 2600, 4900)])
    runs = bar._binned()
    assert runs["dense"][0].tolist() == [[bar.MARGIN - 1, int(bar.x_of(5000)) + 2]]
    sparse = runs["sparse"][0]
    assert len(sparse) == 3
    for (a, b), k in zip(sparse.tolist(), (100, 2600, 4900)):
        assert a <= bar.x_of(k) < b and b - a == 3
    assert len(bar.markers) == 5004


def test_painted_columns_and_tooltips_follow_the_markers(bar, qtbot):
    bar.set_range(1000)
    bar.add_markers([Marker(k, "sparse", BLUE, f"thing at {k}") for k in (200, 700)])
    img = bar.grab().toImage()
    y = 6 + bar.LANE_H + 3                                         # middle of the second lane
    at = img.pixelColor(int(bar.x_of(700)), y)
    assert (at.red(), at.green(), at.blue()) == BLUE
    between = img.pixelColor(int(bar.x_of(450)), y)
    assert (between.red(), between.green(), between.blue()) != BLUE
    assert bar._tooltip_at(bar.x_of(700) + 1, y) == "step 700: thing at 700"
    assert bar._tooltip_at(bar.x_of(450), y) == "step 450"
    bar.add_markers([Marker(100, "sparse", BLUE, "late, out of order")])   # still found without bisection
    assert "late, out of order" in bar._tooltip_at(bar.x_of(100), y)
    assert bar._binned()["sparse"][0].shape == (3, 2)


def test_set_markers_replaces_every_lane(bar):
    bar.set_range(100)
    bar.set_markers([Marker(5, "dense", RED, "a")])
    bar.set_markers([Marker(50, "sparse", BLUE, "b")])
    assert set(bar._binned()) == {"sparse"}
    assert [m.text for m in bar.markers] == ["b"]


def test_a_cursor_move_draws_the_cached_picture_and_new_markers_draw_it_anew(bar, qtbot, monkeypatch):
    """Background, lanes, markers and ticks are one cached picture: a new step copies it (none of it drawn again);
    markers replaced by as many others at other steps are drawn anew (the picture follows them, not their count)."""
    made = []
    real = TimelineBar._static_picture
    monkeypatch.setattr(TimelineBar, "_static_picture", lambda self, *a: made.append(1) or real(self, *a))
    bar.set_range(1000)
    bar.set_markers([Marker(200, "sparse", BLUE, "a")])
    bar.repaint()
    assert len(made) == 1
    for k in (100, 600, 900):
        bar.set_value(k)
        bar.repaint()
    assert len(made) == 1
    y = 6 + bar.LANE_H + 3
    bar.set_markers([Marker(700, "sparse", BLUE, "b")])
    img = bar.grab().toImage()
    assert len(made) == 2
    assert img.pixelColor(int(bar.x_of(700)), y).getRgb()[:3] == BLUE
    assert img.pixelColor(int(bar.x_of(200)), y).getRgb()[:3] != BLUE


def test_a_cursor_move_repaints_the_strip_between_the_cursors_only_and_draws_the_same_pixels(bar, qtbot):
    """A step repaints the strip between the old and the new cursor (the highlighted track and the two cursor
    glyphs), not the whole bar: what it leaves on screen is what a full repaint draws."""
    bar.set_range(10000)
    bar.set_markers([Marker(k, "dense", RED, f"d{k}") for k in range(0, 10000, 7)])
    bar.set_breakpoints([1200, 5000])
    bar.set_value(3000)
    bar.repaint()
    spy = paint_spy()
    bar.installEventFilter(spy)
    try:
        for k in (3100, 2000, 8000, 7990, 0, 10000, 3990, 4010, 4200, 4210):   # (tick labels across strip edges)
            before = bar.grab().toImage()           # the whole bar at the old step
            x_old = bar.x_of(bar.value)
            spy.rects.clear()
            bar.set_value(k)
            qtbot.waitUntil(lambda: bool(spy.rects), timeout=3000)
            a, b = sorted((x_old, bar.x_of(k)))
            strip = spy.rects[-1]
            assert strip.left() <= a - 6 and strip.right() >= b + 6 and strip.height() == bar.height()
            assert strip.width() <= b - a + 2 * bar.CURSOR_HALF + 2
            p = QtGui.QPainter(before)               # the old picture with the strip repainted at the new step ...
            bar.render(p, strip.topLeft(), QtGui.QRegion(strip))
            p.end()
            assert before == bar.grab().toImage(), k   # ... is what a whole repaint draws
    finally:
        bar.removeEventFilter(spy)


def test_a_new_step_repaints_the_panel_not_the_dock_beneath_it(qtbot):
    """The timeline panel fills its background (the window colour its dock shows): the spin box's new value at
    each step repaints the panel under it, not the dock's frame and title; same pixels as the dock beneath."""
    from widgets.timeline import TimelineWidget

    win = QtWidgets.QMainWindow()
    qtbot.addWidget(win)
    dock = QtWidgets.QDockWidget("Timeline", win)
    panel = TimelineWidget()
    dock.setWidget(panel)
    win.addDockWidget(QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    win.setCentralWidget(QtWidgets.QWidget())
    win.resize(700, 240)
    win.show()
    qtbot.waitExposed(win)
    panel.spin.setRange(0, 500)
    spy = paint_spy()
    app = QtWidgets.QApplication.instance()
    app.installEventFilter(spy)
    try:
        qtbot.wait(50)
        spy.painted.clear()
        panel.spin.setValue(42)
        qtbot.waitUntil(lambda: panel.spin in spy.painted, timeout=2000)
        qtbot.wait(20)
    finally:
        app.removeEventFilter(spy)
    assert dock not in spy.painted and win not in spy.painted
    before = win.grab().toImage()
    panel.setAutoFillBackground(False)   # without its own background the dock is painted beneath the panel
    assert win.grab().toImage() == before


