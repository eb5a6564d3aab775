"""Legend: the map's static semantics and the current agent colour-by scheme, as colour swatches.

Why a plain widget (not a pyqtgraph LegendItem on the map): it never hides part of the city, it can be docked
anywhere, and swatches are drawn with the same glyph shapes the map uses.
"""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from core.sim.events import FORCED_MARK_COLOUR
from core.view.colouring import INTERSECTION_COLOURS, SEMANTIC_COLOURS


def swatch(rgb, shape: str = "square", size: int = 14, path: QtGui.QPainterPath | None = None) -> QtGui.QPixmap:
    pm = QtGui.QPixmap(size, size)
    pm.fill(QtCore.Qt.GlobalColor.transparent)
    p = QtGui.QPainter(pm)
    p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
    p.setPen(QtGui.QPen(QtGui.QColor(40, 40, 40), 1))
    p.setBrush(QtGui.QColor(*rgb))
    if path is not None:
        p.translate(size / 2, size / 2)
        p.scale(size - 2, size - 2)
        pen = QtGui.QPen(QtGui.QColor(40, 40, 40), 1.0 / (size - 2))
        p.setPen(pen)
        p.drawPath(path)
    elif shape == "circle":
        p.drawEllipse(1, 1, size - 3, size - 3)
    else:
        p.drawRect(1, 1, size - 3, size - 3)
    p.end()
    return pm


class LegendWidget(QtWidgets.QScrollArea):
    """``set_agents(title, entries)`` with entries ``(label, rgb, count)``; the map part is fixed."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inner = QtWidgets.QWidget()
        self.setWidget(inner)
        self.lay = QtWidgets.QVBoxLayout(inner)
        self.lay.setContentsMargins(8, 6, 8, 6)
        self.lay.setSpacing(2)
        self._map_box = self._section("Map")
        for name, rgb in SEMANTIC_COLOURS.items():
            self._row(self._map_box, name, rgb)
        self._inter_box = self._section("Intersections (overlay)")
        for name, rgb in INTERSECTION_COLOURS.items():
            self._row(self._inter_box, name, rgb)
        self._inter_box.parentWidget().setVisible(False)
        self._agent_box = self._section("Agents")
        self._agent_title = self._agent_box.parentWidget()
        self._shape_box = self._section("Glyphs")
        self.lay.addStretch(1)
        self.agent_rows: list[tuple[str, tuple[int, int, int], int]] = []
        self.agent_notes: tuple[str, ...] = ()

    def _section(self, title: str) -> QtWidgets.QVBoxLayout:
        box = QtWidgets.QGroupBox(title)
        box.setFlat(True)
        v = QtWidgets.QVBoxLayout(box)
        v.setContentsMargins(4, 4, 4, 4)
        v.setSpacing(1)
        self.lay.addWidget(box)
        return v

    @staticmethod
    def _row(box: QtWidgets.QVBoxLayout, text: str, rgb, shape: str = "square",
             path: QtGui.QPainterPath | None = None, tip: str = "") -> QtWidgets.QWidget:
        row = QtWidgets.QWidget()
        row.setToolTip(tip)
        h = QtWidgets.QHBoxLayout(row)
        h.setContentsMargins(0, 0, 0, 0)
        h.setSpacing(6)
        sw = QtWidgets.QLabel()
        sw.setPixmap(swatch(rgb, shape, path=path))
        h.addWidget(sw)
        lab = QtWidgets.QLabel(text)
        h.addWidget(lab, 1)
        box.addWidget(row)
        return row

    @staticmethod
    def _clear(box: QtWidgets.QVBoxLayout) -> None:
        while box.count():
            item = box.takeAt(0)
            w = item.widget()
            if w is not None:
                w.deleteLater()

    def set_agents(self, title: str, entries: list[tuple[str, tuple[int, int, int], int]],
                   notes: list[str] | tuple[str, ...] = ()) -> None:
        """``notes[i]``: hover text of entry i (a clause's text); the tooltip also says how many agents the count
        is (for "Fired clause": how many agents that clause fired for at the shown step)."""
        notes = tuple(notes)
        if (entries == self.agent_rows and notes == self.agent_notes
                and self._agent_title.title() == f"Agents — {title}"):
            return
        self.agent_rows = list(entries)
        self.agent_notes = notes
        self._agent_title.setTitle(f"Agents — {title}")
        self._clear(self._agent_box)
        verb = "fired for" if title == "Fired clause" else "shown as"
        for i, (label, rgb, count) in enumerate(entries):
            note = notes[i] if i < len(notes) else ""
            tip = f"{label}: {verb} {count} agent{'s' if count != 1 else ''} at the shown step"
            self._row(self._agent_box, f"{label}  ({count})", rgb, "circle", tip=tip + (f"\n{note}" if note else ""))

    def set_glyphs(self, symbols: dict) -> None:
        """Show the glyph shapes (car / pedestrian, moving / not moved yet)."""
        self._clear(self._shape_box)
        grey = (200, 200, 200)
        self._row(self._shape_box, "Car (nose = heading)", grey, path=symbols[(1, 1)])
        self._row(self._shape_box, "Pedestrian", grey, path=symbols[(0, 1)])
        self._row(self._shape_box, "Not moved yet", grey, path=symbols[(1, -1)])
        self._row(self._shape_box, "Goal", grey, path=_star())
        self._row(self._shape_box, "Selected / field of view", (255, 235, 59), "circle")
        self._row(self._shape_box, "Forced action", FORCED_MARK_COLOUR, "circle",
                  tip="Dashed diamond: an action the user forced (Simulation ▸ Force), not derived by the rules")

    def set_intersections_visible(self, on: bool) -> None:
        self._inter_box.parentWidget().setVisible(on)


def _star() -> QtGui.QPainterPath:
    import math

    p = QtGui.QPainterPath()
    for i in range(10):
        r = 0.5 if i % 2 == 0 else 0.2
        a = -math.pi / 2 + i * math.pi / 5
        pt = QtCore.QPointF(r * math.cos(a), r * math.sin(a))
        p.moveTo(pt) if i == 0 else p.lineTo(pt)
    p.closeSubpath()
    return p
