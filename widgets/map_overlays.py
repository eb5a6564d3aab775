"""Overlays on the map view that tell agents apart: name labels (decluttered) and the witness of the selected
agent's explanation (a ring on each witness and a line to it from the selected agent).

Why separate items on the map's ViewBox instead of more code in :mod:`widgets.map_view`: they are optional and
drawn from a few arrays the app hands them after each frame, and the labels need screen-space placement (text
stays readable at any zoom; overlapping labels are skipped, :mod:`core.view.labels`), which one custom item does in
a single paint: no per-agent graphics items are created while playing.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from core.view.labels import LABEL_MIN_PPC, declutter, label_text, priority_order
from widgets.map_glyphs import GlyphBatch

#: How far (cells) a glyph reaches above its cell centre; labels sit above it.
GLYPH_REACH = 2.6
WITNESS_RGB = (0, 229, 255)
SELECTED_RGB = (255, 235, 59)


class AgentLabelLayer(QtWidgets.QGraphicsObject):
    """Every agent's name (or short id) above its glyph, in screen pixels; see :mod:`core.view.labels`.

    ``placed`` lists ``(agent, text)`` of the labels the last paint drew (what a test or a screenshot check reads).
    """

    def __init__(self) -> None:
        super().__init__()
        self.setZValue(12)
        self._xy = np.zeros((0, 2))
        self._names: tuple[str, ...] = ()
        self._first: tuple[int, ...] = ()
        self._rect = QtCore.QRectF()
        self.font = QtGui.QFont()
        self.font.setPointSizeF(8.0)
        self.font.setBold(True)
        self.placed: list[tuple[int, str]] = []
        self._key: tuple | None = None

    def set_agents(self, positions: np.ndarray, names: Sequence[str], first: Sequence[int] = ()) -> None:
        """Label these agents (cell positions [N, 2]); ``first`` are placed before the others (never dropped for
        them): the selected agent, then its witnesses."""
        pos = np.asarray(positions, float).reshape(-1, 2)
        key = (pos.tobytes(), tuple(names), tuple(int(a) for a in first))
        if key == self._key:   # called after every frame: an unchanged layer is not laid out and painted again
            return
        self._key = key
        self.prepareGeometryChange()
        self._xy = np.stack([pos[:, 1] + 0.5, pos[:, 0] + 0.5], axis=1) if len(pos) else np.zeros((0, 2))
        self._names = tuple(names)
        self._first = tuple(int(a) for a in first)
        if len(pos):
            (x0, y0), (x1, y1) = self._xy.min(axis=0), self._xy.max(axis=0)
            self._rect = QtCore.QRectF(x0 - 30, y0 - 30, x1 - x0 + 60, y1 - y0 + 60)
        else:
            self._rect = QtCore.QRectF()
        self.update()

    def boundingRect(self) -> QtCore.QRectF:  # noqa: N802 (Qt name)
        return self._rect

    def paint(self, painter: QtGui.QPainter, option, widget=None) -> None:
        t = painter.transform()           # cell coordinates -> device pixels
        ppc = float(np.hypot(t.m11(), t.m12()))
        n = len(self._xy)
        if n == 0 or ppc < LABEL_MIN_PPC:
            self.placed = []
            return
        x, y = self._xy[:, 0], self._xy[:, 1]
        px = t.m11() * x + t.m21() * y + t.dx()
        py = t.m12() * x + t.m22() * y + t.dy()
        fm = QtGui.QFontMetricsF(self.font)
        texts = [label_text(name, ppc) for name in self._names]
        w = np.array([fm.horizontalAdvance(s) + 6 for s in texts])
        h = fm.height() + 2
        top = py - GLYPH_REACH * ppc - h
        boxes = np.stack([px - w / 2, top, px + w / 2, top + h], axis=1)
        view = painter.viewport() if widget is None else QtCore.QRectF(widget.rect())
        on_screen = ((boxes[:, 2] >= view.left()) & (boxes[:, 0] <= view.right())
                     & (boxes[:, 3] >= view.top()) & (boxes[:, 1] <= view.bottom()))
        order = [i for i in priority_order(n, self._first) if on_screen[i]]
        kept = declutter(boxes, order)
        painter.save()
        painter.resetTransform()
        painter.setFont(self.font)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        special = set(self._first)
        for i in kept:
            r = QtCore.QRectF(boxes[i, 0], boxes[i, 1], w[i], h)
            painter.setBrush(QtGui.QColor(20, 22, 28, 190))
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            painter.drawRoundedRect(r, 3, 3)
            rgb = (SELECTED_RGB if self._first and i == self._first[0] else
                   WITNESS_RGB if i in special else (240, 240, 240))
            painter.setPen(QtGui.QColor(*rgb))
            painter.drawText(r, QtCore.Qt.AlignmentFlag.AlignCenter, texts[i])
        painter.restore()
        self.placed = [(i, texts[i]) for i in kept]


class WitnessOverlay:
    """The witness agents of the selected agent's shown explanation: a ring around each and a dashed line from the
    selected agent to it. ``agents`` holds the witnesses drawn (empty: hidden)."""

    def __init__(self, view_box: pg.ViewBox) -> None:
        self.vb = view_box
        pen = pg.mkPen(*WITNESS_RGB, width=2.5, style=QtCore.Qt.PenStyle.DashLine)
        self.line = pg.PlotCurveItem(pen=pen, connect="pairs")
        self.line.setZValue(10)
        # the rings as an outline batch: the same pixels as a hollow scatter, a fraction of its cost per paint
        self.ring = GlyphBatch(pg.mkPen(*WITNESS_RGB, width=3), [pg.graphicsItems.ScatterPlotItem.Symbols["o"]],
                               hollow=True)
        self.ring.setZValue(10)
        for it in (self.line, self.ring):
            it.setVisible(False)
        view_box.addItem(self.line)
        view_box.addItem(self.ring, ignoreBounds=True)
        self.agents: tuple[int, ...] = ()
        self._key: tuple | None = None    # what is drawn now (selected, witnesses, their positions)
        view_box.sigRangeChanged.connect(lambda *a: self._resize())

    def _ring_px(self) -> float:
        px = self.vb.viewPixelSize()[0] if self.vb.width() > 0 else 0.0
        return max(16.0, 8.0 / px) if px > 0 else 16.0     # 8 cells across, at least 16 pixels

    def _resize(self) -> None:
        if self.agents:
            self.ring.set_sizes(self._ring_px())

    def show(self, positions: np.ndarray, selected: int | None, witnesses: Sequence[int]) -> None:
        """Mark ``witnesses`` (agent indices into ``positions``) and link each to ``selected``."""
        pos = np.asarray(positions)
        ws = tuple(int(a) for a in witnesses if 0 <= int(a) < len(pos))
        self.agents = ws if selected is not None and 0 <= selected < len(pos) else ()
        key = (selected, self.agents, pos[[selected, *self.agents]].tobytes()) if self.agents else None
        if key == self._key:   # called after every frame: nothing to rebuild when nothing moved (or nothing shown)
            return
        self._key = key
        if not self.agents:
            self.line.setVisible(False)
            self.ring.setVisible(False)
            return
        wxy = pos[list(self.agents)][:, ::-1] + 0.5
        sxy = pos[selected][::-1] + 0.5
        pairs = np.empty((2 * len(wxy), 2))
        pairs[0::2] = sxy
        pairs[1::2] = wxy
        self.line.setData(pairs[:, 0], pairs[:, 1], connect="pairs")
        limits = self.vb.state["limits"]   # the batch draws within the view's pan limits (the city's, map_view)
        (x0, x1), (y0, y1) = limits["xLimits"], limits["yLimits"]
        if None in (x0, x1, y0, y1):
            lo, hi = np.minimum(wxy.min(axis=0), sxy) - 64, np.maximum(wxy.max(axis=0), sxy) + 64
            (x0, y0), (x1, y1) = lo, hi
        self.ring.set_extent(QtCore.QRectF(x0, y0, x1 - x0, y1 - y0))
        self.ring.setData(wxy[:, 0], wxy[:, 1], 0, self._ring_px(), np.zeros((len(wxy), 3), np.uint8))
        self.line.setVisible(True)
        self.ring.setVisible(True)

    def clear(self) -> None:
        self.show(np.zeros((0, 2)), None, ())
