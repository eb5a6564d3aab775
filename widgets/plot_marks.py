"""The marks a seek moves over a plot: the cursor line and the shading of the steps after it.

Why not pyqtgraph's ``InfiniteLine`` and ``LinearRegionItem``: each move of one runs Python code in several
places (it maps the view range to find the line's bounds, prepares the geometry change and paints through a
Python ``paint``), and a seek moves seven marks: the inspector's cursor, and the statistics' two cursors and two
shaded regions, each region with two lines. These marks are Qt's own line and rectangle items, so Qt paints them.
Each spans the view's visible y-range, taken from the view box's range signal, and the line's bounds are padded by
its pen width in pixels, which is measured again only when the view's range or size changes.
"""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


class _SpansView:
    """Mixin: follows a pyqtgraph ViewBox's visible y-range and pixel size (call :meth:`_attach`)."""

    _vb = None
    _y: tuple[float, float] = (0.0, 1.0)
    _px: float = 0.0          # one pixel in x data units

    def _attach(self, plot_item) -> None:
        plot_item.addItem(self, ignoreBounds=True)   # never part of the auto-range
        vb = self._vb = plot_item.getViewBox()
        vb.sigRangeChanged.connect(self._on_view)
        vb.sigResized.connect(self._on_view)
        self._on_view()

    def _on_view(self, *_args) -> None:
        vb = self._vb
        (x0, x1), (y0, y1) = vb.viewRange()
        w = max(1.0, float(vb.width()))
        self._px = (x1 - x0) / w
        pad = (y1 - y0) * 0.01   # past the edges, so no end of it shows
        self._y = (y0 - pad, y1 + pad)
        self._apply()

    def _apply(self) -> None:
        raise NotImplementedError


class CursorLine(_SpansView, QtWidgets.QGraphicsLineItem):
    """A vertical line at x = :meth:`value` across the plot (as ``pg.InfiniteLine(angle=90)``, not movable)."""

    def __init__(self, pen: QtGui.QPen) -> None:
        QtWidgets.QGraphicsLineItem.__init__(self)
        self.setPen(pen)
        self._x = 0.0
        self._bounds = QtCore.QRectF()

    def attach(self, plot_item) -> "CursorLine":
        self._attach(plot_item)
        return self

    def value(self) -> float:
        return self._x

    def setValue(self, x: float) -> None:  # noqa: N802 (as InfiniteLine)
        x = float(x)
        if x != self._x:
            self._x = x
            self._apply()

    def _apply(self) -> None:
        self.prepareGeometryChange()
        y0, y1 = self._y
        # a cosmetic pen is as wide in pixels at any zoom; Qt pads a line's bounds by its width in data units
        half = (self.pen().widthF() or 1.0) * max(self._px, 1e-12) + self._px
        self._bounds = QtCore.QRectF(self._x - half, y0, 2 * half, y1 - y0)
        self.setLine(self._x, y0, self._x, y1)

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 (Qt name)
        return self._bounds

    def shape(self) -> QtGui.QPainterPath:
        path = QtGui.QPainterPath()
        path.addRect(self._bounds)
        return path


class ShadedSpan(_SpansView, QtWidgets.QGraphicsRectItem):
    """A shaded band from x = a to x = b across the plot (as a fixed ``pg.LinearRegionItem``, without edge lines:
    the cursor line marks its left edge, and its right edge is the end of the data)."""

    def __init__(self, brush: QtGui.QBrush) -> None:
        QtWidgets.QGraphicsRectItem.__init__(self)
        self.setBrush(brush)
        self.setPen(QtGui.QPen(QtCore.Qt.PenStyle.NoPen))
        self._span = (0.0, 0.0)

    def attach(self, plot_item) -> "ShadedSpan":
        self._attach(plot_item)
        return self

    def getRegion(self) -> tuple[float, float]:  # noqa: N802 (as LinearRegionItem)
        return self._span

    def setRegion(self, span) -> None:  # noqa: N802 (as LinearRegionItem)
        a, b = float(span[0]), float(span[1])
        if (a, b) != self._span:
            self._span = (a, b)
            self._apply()

    def _apply(self) -> None:
        a, b = self._span
        y0, y1 = self._y
        self.setRect(QtCore.QRectF(a, y0, b - a, y1 - y0))
        self.setVisible(b > a)
