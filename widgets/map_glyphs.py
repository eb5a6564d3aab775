"""Lean graphics items for the map's per-agent layers: every agent glyph in one ``drawPixmapFragments`` call, every
planned path of one colour in one ``QPainterPath``.

Why not pyqtgraph's ``ScatterPlotItem`` / ``PlotCurveItem`` (a full-window seek at 200 agents):
a scatter's ``setData`` builds a record per spot (symbol, size, pen and brush objects, a source rectangle looked
up spot by spot) and its paint culls and maps every spot again; a curve with NaN breaks is cut into one polygon per
agent on every paint after new data. Together that is about half of the map's share of a seek. These items keep
the same drawing — the glyphs are rasterised by pyqtgraph's own ``SymbolAtlas`` (same shapes, pen, brush, size and
antialiasing) and blitted centred on their cells at a fixed screen size; paths are drawn with the same cosmetic
pens — but a frame is a few numpy operations: styles are found with ``np.unique`` over (symbol, colour, size), and
a paint maps the centres through the painter's transform and blits them all at once.

Both items cover the rectangle given by :meth:`set_extent` (the view's pan limits), so they are never culled and
never need a geometry change while playing; they do not take part in the view box's auto-range.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import SymbolAtlas
from pyqtgraph.Qt.internals import PrimitiveArray
from PySide6 import QtCore, QtGui, QtWidgets

#: Styles kept in a glyph atlas before it is rebuilt with only those in use (each zoom level adds its sizes).
ATLAS_LIMIT = 1000


class _ExtentItem(QtWidgets.QGraphicsItem):
    def __init__(self) -> None:
        super().__init__()
        self._extent = QtCore.QRectF(-64, -64, 128, 128)

    def set_extent(self, rect: QtCore.QRectF) -> None:
        """Everything this item may draw lies in ``rect`` (data coordinates)."""
        if rect != self._extent:
            self.prepareGeometryChange()
            self._extent = QtCore.QRectF(rect)

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 (Qt name)
        return self._extent


class GlyphBatch(_ExtentItem):
    """Glyphs of a fixed screen size (pixels) centred on data points, one style (symbol path, size, brush; one pen
    for all) per point."""

    def __init__(self, pen: QtGui.QPen, symbols: list[QtGui.QPainterPath], hollow: bool = False) -> None:
        super().__init__()
        self.pen = pen
        self.symbols = symbols           # indexed by the ``symbol`` array of setData
        self.hollow = hollow             # outlines only (no brush: a selection ring, marks around glyphs)
        self._atlas = SymbolAtlas()
        self._coords: dict[tuple[int, int, float], tuple[int, int, int, int]] = {}
        self._brushes: dict[int, QtGui.QBrush] = {}
        self._frags = PrimitiveArray(QtGui.QPainter.PixmapFragment, 10)
        self._x = np.zeros(0)
        self._y = np.zeros(0)
        self._sym = np.zeros(0, np.int64)
        self._packed = np.zeros(0, np.int64)   # colour as 0xRRGGBB
        self._size = np.zeros(0)               # pixels per point
        self._src = np.zeros((0, 4))           # atlas source rectangle per point (x, y, w, h)
        self.rgb = np.zeros((0, 3), np.uint8)  # colour per point, as given

    def setData(self, x: np.ndarray, y: np.ndarray, symbol, size, rgb: np.ndarray) -> None:  # noqa: N802
        """Points (x, y), each with a symbol index (into ``symbols``), a size in pixels and an RGB colour (symbol and
        size: one per point or one for all). pyqtgraph's name, like :meth:`getData`."""
        self._x = np.asarray(x, float)
        self._y = np.asarray(y, float)
        self._sym = np.broadcast_to(np.asarray(symbol, np.int64), self._x.shape)
        self.rgb = np.asarray(rgb)
        c = self.rgb.astype(np.int64)
        self._packed = (c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2] if len(c) else np.zeros(0, np.int64)
        self.set_sizes(size)

    def set_sizes(self, size: np.ndarray) -> None:
        """New sizes in pixels (the zoom changed), same points and styles."""
        self._size = np.broadcast_to(np.asarray(size, float), (len(self._x),))
        self._restyle()
        self.update()

    def _restyle(self) -> None:
        if len(self._coords) > ATLAS_LIMIT:   # zooming makes new sizes: start afresh rather than grow for ever
            self._atlas.clear()
            self._coords.clear()
        if len(self._x):
            sizes, size_i = np.unique(self._size, return_inverse=True)
            key = (self._sym * (1 << 24) + self._packed) * len(sizes) + size_i.reshape(-1)
            uniq, inv = np.unique(key, return_inverse=True)
            table = np.asarray([self._source(int(u), sizes) for u in uniq], float).reshape(-1, 4)
            self._src = table[inv.reshape(-1)]
        else:
            self._src = np.zeros((0, 4))

    def _source(self, key: int, sizes: np.ndarray) -> tuple[int, int, int, int]:
        """The atlas rectangle (x, y, w, h) of one style; rendered into the atlas the first time it is used."""
        rest, size_i = divmod(key, len(sizes))
        sym, packed = divmod(rest, 1 << 24)
        size = float(sizes[size_i])
        k = (sym, packed, size)
        rect = self._coords.get(k)
        if rect is None:
            brush = QtGui.QBrush(QtCore.Qt.BrushStyle.NoBrush) if self.hollow else self._brushes.get(packed)
            if brush is None:
                brush = self._brushes[packed] = QtGui.QBrush(QtGui.QColor(packed >> 16, (packed >> 8) & 255,
                                                                          packed & 255))
            # (x, y, w, h) in the atlas pixmap (its names in SymbolAtlas refer to its transposed array)
            rect = self._coords[k] = tuple(self._atlas[[(self.symbols[sym], size, self.pen, brush)]][0])
        return rect

    def getData(self) -> tuple[np.ndarray, np.ndarray]:  # noqa: N802 (pyqtgraph's name, tests read it)
        return self._x, self._y

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        n = len(self._x)
        if not n:
            return
        dpr = self._atlas.devicePixelRatio()
        if widget is not None and widget.devicePixelRatioF() != dpr:
            dpr = widget.devicePixelRatioF()          # re-render at the new ratio
            self._atlas.setDevicePixelRatio(dpr)
            self._atlas.clear()
            self._coords.clear()
            self._restyle()
        t = p.transform()
        px = np.clip(t.m11() * self._x + t.m21() * self._y + t.dx(), -2 ** 30, 2 ** 30)
        py = np.clip(t.m12() * self._x + t.m22() * self._y + t.dy(), -2 ** 30, 2 ** 30)
        p.resetTransform()
        self._frags.resize(n)
        f = self._frags.ndarray()
        f[:, 0] = px
        f[:, 1] = py
        f[:, 2:6] = self._src
        f[:, 6:10] = (1 / dpr, 1 / dpr, 0.0, 1.0)   # scale x, scale y, rotation, opacity
        p.drawPixmapFragments(*self._frags.drawargs(), self._atlas.pixmap)


class PathBatch(_ExtentItem):
    """Polylines in data coordinates, one ``QPainterPath`` per pen (e.g. every planned path of one colour), or,
    for a wide pen, one batch of line segments (what pyqtgraph's curves draw for a solid pen wider than a pixel,
    so the corners look the same)."""

    def __init__(self) -> None:
        super().__init__()
        self._paths: list[tuple[QtGui.QPen, QtGui.QPainterPath]] = []
        self._pen: QtGui.QPen | None = None
        self._lines = PrimitiveArray(QtCore.QLineF, 4)

    def set_paths(self, paths: list[tuple[QtGui.QPen, QtGui.QPainterPath]]) -> None:
        self._paths = list(paths)
        self._pen = None
        self.update()

    def set_segments(self, pen: QtGui.QPen, cells: list[np.ndarray]) -> None:
        """Each of ``cells`` (cells [L, 2] as (row, col)) as line segments between consecutive cell centres."""
        seg = [np.concatenate([c[:-1], c[1:]], axis=1) for c in cells if len(c) >= 2]
        seg = np.concatenate(seg) if seg else np.zeros((0, 4))
        self._lines.resize(len(seg))
        self._lines.ndarray()[:] = seg[:, [1, 0, 3, 2]] + 0.5      # x1, y1, x2, y2 at the centres
        self._paths = []
        self._pen = pen
        self.update()

    @property
    def paths(self) -> list[tuple[QtGui.QPen, QtGui.QPainterPath]]:
        return list(self._paths)

    def paint(self, p: QtGui.QPainter, option, widget=None) -> None:
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)   # as pyqtgraph's curves draw by default
        for pen, path in self._paths:
            p.setPen(pen)
            p.drawPath(path)
        if self._pen is not None and len(self._lines):
            p.setPen(self._pen)
            p.drawLines(*self._lines.drawargs())


def polyline_path(paths: list[np.ndarray]) -> QtGui.QPainterPath:
    """One painter path through the cell centres of each of ``paths`` (cells [L, 2] as (row, col)), not joined to
    one another; built in one pass (pyqtgraph's binary path stream with a connect array). A cell in the middle of
    a straight run is left out (the same line, a fraction of the vertices: planned paths are mostly straight)."""
    if not paths:
        return QtGui.QPainterPath()
    return joined_polyline_path(np.concatenate(paths), np.cumsum(np.fromiter(map(len, paths), np.int64, len(paths))))


def joined_polyline_path(cells: np.ndarray, ends: np.ndarray) -> QtGui.QPainterPath:
    """:func:`polyline_path` of paths given one after the other: ``cells`` [M, 2], path i ending at ``ends[i]``
    (cumulative lengths, each path at least one cell)."""
    if not len(ends):
        return QtGui.QPainterPath()
    cells = np.asarray(cells, np.int64)
    ends = np.asarray(ends, np.int64)
    last = np.zeros(len(cells), bool)
    last[ends - 1] = True                     # the last cell of each path
    first = np.zeros(len(cells), bool)
    first[ends[:-1]] = True
    first[0] = True
    d = np.diff(cells, axis=0)
    straight = np.zeros(len(cells), bool)     # cell i continues the step that reached it
    straight[1:-1] = (d[:-1, 0] == d[1:, 0]) & (d[:-1, 1] == d[1:, 1])
    idx = np.flatnonzero(first | last | ~straight)
    # a path ends with a zero-length step (its last cell twice), as pyqtgraph's NaN breaks made it: the cosmetic
    # stroker then draws the end pixel the same way
    rep = 1 + last[idx]
    idx = np.repeat(idx, rep)
    connect = np.ones(len(idx), np.int32)
    connect[(np.cumsum(rep) - 1)[rep == 2]] = 0   # the path's end does not connect to the next path's start
    cells = cells[idx]
    return pg.functions.arrayToQPath(cells[:, 1] + 0.5, cells[:, 0] + 0.5, connect=connect, finiteCheck=False)
