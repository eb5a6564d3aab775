"""A dataset frame with its VAP overlay: agent boxes, a badge per agent (predicted vs true action, green when
right, red when wrong, grey without a model), scene-graph edges of one predicate (or all), and a hover card with
the agent's predicted vs true groundings. Plain data in (``core.tasks.vap.overlay.FrameOverlay``), signals out;
imports nothing from ``app``."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

GOOD = (46, 160, 67)
BAD = (208, 52, 44)
NEUTRAL = (90, 90, 90)
EDGE = (30, 110, 230)


class VapFrameView(QtWidgets.QWidget):
    """``set_frame(image, overlay)``, ``set_predicate(name or None)``; ``hovered(int)`` (-1 when off any agent)."""

    hovered = QtCore.Signal(int)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.glw = pg.GraphicsLayoutWidget()
        self.glw.setBackground("w")
        self.vb = self.glw.addViewBox(lockAspect=True, invertY=True, enableMenu=False)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.vb.addItem(self.image)
        self.edges = pg.PlotDataItem(pen=pg.mkPen(EDGE, width=2), connect="pairs")
        self.vb.addItem(self.edges)
        self.card = pg.TextItem("", color=(20, 20, 20), fill=pg.mkBrush(255, 255, 230, 235),
                                border=pg.mkPen(120, 120, 120), anchor=(0, 0))
        self.card.setZValue(30)
        self.card.hide()
        self.vb.addItem(self.card)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.glw)
        self.overlay = None
        self.predicate: str | None = None
        self.badges: list[pg.TextItem] = []
        self.rects: list[QtWidgets.QGraphicsRectItem] = []
        self.hover_index = -1
        self.glw.scene().sigMouseMoved.connect(self._mouse_moved)

    # ---- content ------------------------------------------------------------------------------------------------
    def set_frame(self, image: np.ndarray | None, overlay) -> None:
        if image is not None:
            self.image.setImage(image, levels=(0, 255))
            self.vb.autoRange(padding=0.0)
        for it in self.badges + self.rects:
            self.vb.removeItem(it)
        self.badges, self.rects = [], []
        self.overlay = overlay
        if overlay is not None:
            for a in overlay.agents:
                colour = NEUTRAL if a.correct is None else GOOD if a.correct else BAD
                x1, y1, x2, y2 = a.box
                rect = QtWidgets.QGraphicsRectItem(x1, y1, x2 - x1, y2 - y1)
                rect.setPen(pg.mkPen(colour, width=2))
                rect.setZValue(10)
                self.vb.addItem(rect)
                self.rects.append(rect)
                badge = pg.TextItem(a.badge(), color=(255, 255, 255), fill=pg.mkBrush(*colour, 220), anchor=(0, 1))
                badge.setPos(x1, y1)
                badge.setZValue(20)
                self.vb.addItem(badge)
                self.badges.append(badge)
        self._draw_edges()
        self._show_card(-1)

    def set_predicate(self, predicate: str | None) -> None:
        self.predicate = predicate
        self._draw_edges()

    def shown_edges(self) -> list:
        return [] if self.overlay is None else self.overlay.shown_edges(self.predicate)

    def _draw_edges(self) -> None:
        pts = []
        if self.overlay is not None:
            centre = {a.index: ((a.box[0] + a.box[2]) / 2, (a.box[1] + a.box[3]) / 2) for a in self.overlay.agents}
            for e in self.shown_edges():
                pts += [centre[e.src], centre[e.dst]]
        if pts:
            arr = np.asarray(pts, float)
            self.edges.setData(arr[:, 0], arr[:, 1])
        else:
            self.edges.setData([], [])

    # ---- hover card ---------------------------------------------------------------------------------------------
    def _mouse_moved(self, pos: QtCore.QPointF) -> None:
        if self.overlay is None:
            return
        p = self.vb.mapSceneToView(pos)
        self.hover_at(p.x(), p.y())

    def hover_at(self, x: float, y: float) -> None:
        """Show the card of the agent under image point (x, y) (hide it off any agent)."""
        idx = self.overlay.agent_at(x, y) if self.overlay is not None else None
        self._show_card(-1 if idx is None else idx)

    def _show_card(self, idx: int) -> None:
        if idx == self.hover_index:
            return
        self.hover_index = idx
        if idx < 0 or self.overlay is None:
            self.card.hide()
        else:
            a = self.overlay.agents[idx]
            self.card.setText(self.overlay.card(idx))
            width = self.image.width() or 1024
            if a.box[2] > 0.55 * width:     # near the right edge: open the card to the left of the agent
                self.card.setAnchor((1, 0))
                self.card.setPos(a.box[0] - 4, a.box[1])
            else:
                self.card.setAnchor((0, 0))
                self.card.setPos(a.box[2] + 4, a.box[1])
            self.card.show()
        self.hovered.emit(idx)

    def card_text(self) -> str:
        return self.card.textItem.toPlainText() if self.card.isVisible() else ""

    def badge_colours(self) -> list[tuple[int, int, int]]:
        return [tuple(b.fill.color().getRgb()[:3]) for b in self.badges]


def confusion_table(table: QtWidgets.QTableWidget, confusion: np.ndarray, names) -> None:
    """Fill a QTableWidget with a confusion matrix (rows true, columns predicted), the diagonal shaded."""
    n = len(names)
    table.setRowCount(n)
    table.setColumnCount(n)
    table.setHorizontalHeaderLabels([f"pred {x}" for x in names])
    table.setVerticalHeaderLabels([f"true {x}" for x in names])
    for i in range(n):
        for j in range(n):
            it = QtWidgets.QTableWidgetItem(str(int(confusion[i, j])))
            it.setFlags(it.flags() & ~QtCore.Qt.ItemFlag.ItemIsEditable)
            it.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
            if i == j:
                it.setBackground(QtGui.QColor(220, 240, 220))
            table.setItem(i, j, it)
    table.resizeColumnsToContents()
