"""The cursor line and the shaded span a seek moves over a plot (widgets/plot_marks.py): Qt's own items that span
the view's y-range. Moved step by step, the plot shows exactly what a whole repaint draws (no trail of an old line,
even when a step is far narrower than a pixel), and a new y-range is spanned at once."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from PySide6 import QtWidgets  # noqa: E402

from tests.support.qt import shown  # noqa: E402
from widgets.plot_marks import CursorLine, ShadedSpan  # noqa: E402

STEPS = 10_000


@pytest.fixture
def plot(qtbot):
    w = shown(qtbot, pg.PlotWidget(background="w"), 420, 200)
    pi = w.getPlotItem()
    pi.plot(np.arange(STEPS, dtype=float), np.sin(np.arange(STEPS) / 500.0) * 40 + 50, pen=pg.mkPen(90, 90, 90))
    pi.setXRange(0, STEPS, padding=0.02)
    pi.setYRange(0, 100, padding=0)
    qtbot.wait(20)
    return w


def on_screen(w: pg.PlotWidget):
    """What the window's backing store holds for the plot: what the partial repaints left there."""
    return w.screen().grabWindow(w.window().winId()).toImage().copy(w.rect())


def whole_repaint(w: pg.PlotWidget):
    """What the plot looks like painted anew from scratch."""
    w.viewport().update()
    w.viewport().repaint()
    return on_screen(w)


def test_moved_marks_leave_what_a_whole_repaint_draws(plot, qtbot):
    pi = plot.getPlotItem()
    line = CursorLine(pg.mkPen(230, 160, 0, width=2)).attach(pi)
    span = ShadedSpan(pg.mkBrush(128, 128, 128, 60)).attach(pi)
    span.setZValue(-5)
    for k in (5000, 5003, 120, 9990, 7000, 7001, 0, STEPS):
        line.setValue(k)
        span.setRegion((k, STEPS))
        QtWidgets.QApplication.processEvents()
        qtbot.wait(5)
        incremental = on_screen(plot)     # after the partial repaints
        assert incremental == whole_repaint(plot), k
        assert line.value() == k and span.getRegion() == (k, STEPS)
    # the line crosses the whole plot: orange at its x near the top and the bottom of the view
    line.setValue(4000)
    QtWidgets.QApplication.processEvents()
    img = whole_repaint(plot)
    x = int(round(pi.getViewBox().mapViewToDevice(pg.Point(4000, 50)).x() + plot.viewport().pos().x()))
    top = pi.getViewBox().mapViewToDevice(pg.Point(4000, 99)).y() + plot.viewport().pos().y()
    bottom = pi.getViewBox().mapViewToDevice(pg.Point(4000, 1)).y() + plot.viewport().pos().y()
    for y in (int(top), int(bottom)):
        near = [img.pixelColor(x + dx, y).getRgb()[:3] for dx in (-1, 0, 1)]
        assert (230, 160, 0) in near, (y, near)


def test_a_new_y_range_is_spanned_and_an_empty_span_is_hidden(plot, qtbot):
    pi = plot.getPlotItem()
    line = CursorLine(pg.mkPen(230, 160, 0, width=2)).attach(pi)
    span = ShadedSpan(pg.mkBrush(128, 128, 128, 60)).attach(pi)
    line.setValue(300)
    pi.setYRange(-500, 2000, padding=0)
    qtbot.wait(10)
    ln = line.line()
    assert ln.y1() <= -500 and ln.y2() >= 2000
    span.setRegion((STEPS, STEPS))
    assert not span.isVisible()
    span.setRegion((10, 20))
    assert span.isVisible() and span.rect().top() <= -500 and span.rect().bottom() >= 2000
    assert pi.getViewBox().viewRange()[1] == [-500, 2000]   # they never re-range the plot (no auto-range)
