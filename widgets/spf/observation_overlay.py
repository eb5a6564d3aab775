"""What an SPF model saw, drawn on a map: the ego's field-of-view box and a numbered ring on each entity of its
observation (0 = the ego, then the others in observation order), coloured by whether the model agreed with the
oracle at that step.

Why an overlay of its own: the map view draws the world; this draws one ego's observation, which the Models panel
and the SPF window change whenever the shown step changes. Fed plain data (a
:class:`core.tasks.spf.drive.ObservedView` or None); never imports the app."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

AGREE_RGB = (40, 170, 255)
DISAGREE_RGB = (255, 140, 0)


class ObservationOverlay:
    """``show(view, disagrees)`` draws it, ``show(None)`` hides it. ``shown`` is the view drawn (tests read it)."""

    def __init__(self, view_box: pg.ViewBox) -> None:
        self.vb = view_box
        self.box = QtWidgets.QGraphicsRectItem()
        self.box.setZValue(9)
        self.rings = pg.ScatterPlotItem(pxMode=True, symbol="s", size=22, brush=pg.mkBrush(None))
        self.rings.setZValue(11)
        self.labels: list[pg.TextItem] = []
        self.shown = None
        view_box.addItem(self.box)
        view_box.addItem(self.rings)
        view_box.sigRangeChanged.connect(lambda *a: self._resize())
        self.show(None)

    def _ring_px(self) -> float:
        px = self.vb.viewPixelSize()[0] if self.vb.width() > 0 else 0.0
        return max(18.0, 6.0 / px) if px > 0 else 18.0

    def _resize(self) -> None:
        if self.shown is not None:
            self.rings.setSize(self._ring_px())

    def show(self, view, disagrees: bool = False) -> None:
        for t in self.labels:
            self.vb.removeItem(t)
        self.labels = []
        self.shown = view
        if view is None:
            self.box.setVisible(False)
            self.rings.setVisible(False)
            return
        rgb = DISAGREE_RGB if disagrees else AGREE_RGB
        r0, r1, c0, c1 = view.box
        self.box.setRect(QtCore.QRectF(c0, r0, c1 - c0 + 1, r1 - r0 + 1))
        pen = pg.mkPen(*rgb, width=2.5, style=QtCore.Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        self.box.setPen(pen)
        self.box.setBrush(pg.mkBrush(*rgb, 28))
        self.box.setVisible(True)
        xy = np.array([(c + 0.5, r + 0.5) for r, c in view.cells], float).reshape(-1, 2)
        self.rings.setData(pos=xy, size=self._ring_px(), pen=pg.mkPen(*rgb, width=3))
        self.rings.setVisible(len(xy) > 0)
        for i, ((x, y), name) in enumerate(zip(xy, view.names)):
            t = pg.TextItem(f"{i} {name}", color=(255, 255, 255), fill=pg.mkBrush(*rgb, 200), anchor=(0, 1))
            t.setZValue(13)
            t.setPos(x + 1.0, y - 1.0)
            self.vb.addItem(t)
            self.labels.append(t)

    def clear(self) -> None:
        self.show(None)
