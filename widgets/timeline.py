"""Timeline: a scrubbable bar over all recorded steps with event markers and breakpoints, plus a step box.

Why a painted bar instead of a ``QSlider``: markers (goal reached, action changes, ...) and breakpoints are
drawn on the track itself, several lanes of them, binned per pixel so thousands of events cost nothing.
Dragging or clicking emits :attr:`TimelineWidget.stepRequested` at once; the owner decides what to show.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets


@dataclass(frozen=True)
class Marker:
    step: int
    lane: str             # marker kind name; one lane per kind
    colour: tuple[int, int, int]
    text: str


def _nice_step(span: int, pixels: int, min_px: int = 70) -> int:
    """A 1/2/5×10^k tick interval giving at least ``min_px`` pixels between labels."""
    if span <= 0 or pixels <= 0:
        return 1
    raw = span * min_px / pixels
    mag = 10 ** math.floor(math.log10(max(raw, 1)))
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return int(m * mag)
    return int(10 * mag)


class TimelineBar(QtWidgets.QWidget):
    """The painted track. Value range 0..maximum (= recorded states - 1)."""

    stepRequested = QtCore.Signal(int)
    scrubbing = QtCore.Signal(bool)

    MARGIN = 10
    LANE_H = 7
    CURSOR_HALF = 8     # px either side of the cursor's line that its glyph may touch (6 px, antialiased)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.maximum = 0
        self.value = 0
        self.live_end = 0                # newest state (may exceed the replay cursor)
        self.markers: list[Marker] = []
        self.lanes: list[tuple[str, str, tuple[int, int, int]]] = []  # (name, label, colour)
        self.breakpoints: list[int] = []
        self._dragging = False
        self.setMouseTracking(True)
        self.setMinimumHeight(46)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        # the bar paints its own background (the window colour): a repaint at every step does not repaint the
        # dock and the window below it first
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self._bins: dict = {}
        self._bins_width: object = None
        # per lane, the steps of its markers (grown as markers arrive, so a new frame costs O(new markers)), and
        # every marker's step in arrival order (sorted: markers arrive step by step) for tooltips by bisection
        self._lane_steps: dict[str, list[int]] = {}
        self._lane_colour: dict[str, tuple[int, int, int]] = {}
        self._steps: list[int] = []
        self._sorted = True
        self._static_pm: QtGui.QPixmap | None = None   # what a seek does not change, painted (see paintEvent)
        self._markers_version = 0                      # counts the changes of the markers (the picture's key)
        self._static_key: object = None

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(600, 16 + self.LANE_H * max(1, len(self.lanes)) + 26)

    # ---- model ---------------------------------------------------------------------------------------------
    def set_range(self, maximum: int) -> None:
        if maximum != self.maximum:
            self.maximum = max(0, int(maximum))
            self._bins_width = None
            self.update()

    def set_value(self, value: int) -> None:
        v = min(max(int(value), 0), self.maximum)
        if v != self.value:
            a, b = sorted((self.x_of(self.value), self.x_of(v)))
            self.value = v
            # only the strip between the old and the new cursor changes (the highlighted track and the two cursor
            # glyphs, CURSOR_HALF px either side of their line): a step repaints that strip, not the whole bar
            h = self.CURSOR_HALF
            self.update(QtCore.QRect(int(a) - h, 0, int(b) - int(a) + 2 * h + 1, self.height()))

    def set_lanes(self, lanes: list[tuple[str, str, tuple[int, int, int]]]) -> None:
        self.lanes = list(lanes)
        self.setMinimumHeight(20 + self.LANE_H * max(1, len(self.lanes)) + 22)
        self._bins_width = None
        self.updateGeometry()
        self.update()

    def set_markers(self, markers: list[Marker]) -> None:
        self.markers = []
        self._lane_steps, self._lane_colour, self._steps, self._sorted = {}, {}, [], True
        self._index(markers)
        self._bins_width = None
        self._markers_version += 1
        self.update()

    def add_markers(self, markers: list[Marker]) -> None:
        if markers:
            self._index(markers)
            self._bins_width = None
            self._markers_version += 1
            self.update()

    def _index(self, markers: list[Marker]) -> None:
        last = self._steps[-1] if self._steps else -1
        for m in markers:
            self.markers.append(m)
            lane = self._lane_steps.setdefault(m.lane, [])
            if not lane or lane[-1] != m.step:   # one entry per step and lane: the bins need no more
                lane.append(m.step)
            self._lane_colour.setdefault(m.lane, m.colour)
            self._sorted = self._sorted and m.step >= last
            last = m.step
            self._steps.append(m.step)

    def set_breakpoints(self, steps: list[int]) -> None:
        self.breakpoints = sorted(set(int(s) for s in steps))
        self.update()

    # ---- geometry ------------------------------------------------------------------------------------------
    def _track(self) -> tuple[float, float]:
        return float(self.MARGIN), float(max(self.width() - self.MARGIN, self.MARGIN + 1))

    def x_of(self, step: float) -> float:
        x0, x1 = self._track()
        return x0 + (x1 - x0) * (step / self.maximum if self.maximum else 0.0)

    def step_at(self, x: float) -> int:
        x0, x1 = self._track()
        if self.maximum == 0:
            return 0
        t = (x - x0) / (x1 - x0)
        return int(round(min(max(t, 0.0), 1.0) * self.maximum))

    def _binned(self) -> dict[str, tuple[np.ndarray, tuple[int, int, int]]]:
        """Per lane: the pixel runs ``[start, end)`` covered by its markers (each marker 3 px wide, touching ones
        merged, so a lane full of markers is a few rectangles), recomputed when the width, the range or the markers
        change (vectorised over the lane's marker steps) and the lane's colour."""
        key = (self.width(), self.maximum, len(self.markers))
        if self._bins_width != key:
            x0, x1 = self._track()
            scale = (x1 - x0) / self.maximum if self.maximum else 0.0
            self._bins = {}
            for lane, st in self._lane_steps.items():
                cols = np.unique((x0 + np.asarray(st, float) * scale).astype(np.int64))
                if not len(cols):
                    continue
                breaks = np.nonzero(np.diff(cols) > 3)[0]
                starts = np.concatenate([cols[:1], cols[breaks + 1]]) - 1
                ends = np.concatenate([cols[breaks], cols[-1:]]) + 2
                self._bins[lane] = (np.stack([starts, ends], axis=1), self._lane_colour[lane])
            self._bins_width = key
        return self._bins

    # ---- painting ------------------------------------------------------------------------------------------
    def paintEvent(self, ev: QtGui.QPaintEvent) -> None:  # noqa: N802 (Qt name)
        p = QtGui.QPainter(self)
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        pal = self.palette()
        x0, x1 = self._track()
        lanes_top = 6
        track_y = lanes_top + self.LANE_H * max(1, len(self.lanes)) + 4
        # what a seek does not change (background, lanes and markers, ticks and their numbers): one opaque cached
        # picture, drawn again when the markers, range, lanes, size, font or palette change; moving the cursor
        # repaints the bar with one copy of it
        key = (self._markers_version, self.width(), self.height(), self.maximum, tuple(self.lanes),
               self.devicePixelRatioF(), pal.cacheKey(), self.font().key())
        if self._static_key != key or self._static_pm is None:
            self._static_key = key
            self._static_pm = self._static_picture(x0, x1, lanes_top, track_y)
        dpr = self._static_pm.devicePixelRatio()
        r = ev.rect()
        p.drawPixmap(QtCore.QRectF(r), self._static_pm,
                     QtCore.QRectF(r.x() * dpr, r.y() * dpr, r.width() * dpr, r.height() * dpr))
        # track
        p.fillRect(QtCore.QRectF(x0, track_y, x1 - x0, 6), pal.color(QtGui.QPalette.ColorRole.Mid))
        if self.maximum:
            p.fillRect(QtCore.QRectF(x0, track_y, self.x_of(self.value) - x0, 6),
                       pal.color(QtGui.QPalette.ColorRole.Highlight))
        # breakpoints
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        p.setPen(QtGui.QPen(QtGui.QColor(120, 0, 0), 1))
        p.setBrush(QtGui.QColor(220, 30, 40))
        for s in self.breakpoints:
            if 0 <= s <= max(self.maximum, s):
                x = self.x_of(min(s, self.maximum)) if self.maximum else x0
                p.drawEllipse(QtCore.QPointF(x, track_y + 3), 4.5, 4.5)
        # cursor
        x = self.x_of(self.value)
        p.setPen(QtGui.QPen(QtGui.QColor(20, 20, 20), 1))
        p.setBrush(QtGui.QColor(255, 235, 59))
        p.drawLine(QtCore.QPointF(x, lanes_top - 4), QtCore.QPointF(x, track_y))
        p.drawPolygon(QtGui.QPolygonF([QtCore.QPointF(x - 6, track_y - 3), QtCore.QPointF(x + 6, track_y - 3),
                                       QtCore.QPointF(x + 6, track_y + 9), QtCore.QPointF(x, track_y + 13),
                                       QtCore.QPointF(x - 6, track_y + 9)]))
        p.end()

    def _static_picture(self, x0: float, x1: float, lanes_top: int, track_y: int) -> QtGui.QPixmap:
        """The background, the lanes with their markers and the ticks with their numbers, as one opaque picture."""
        pal = self.palette()
        dpr = self.devicePixelRatioF()
        pm = QtGui.QPixmap(max(1, int(self.width() * dpr)), max(1, int(self.height() * dpr)))
        pm.setDevicePixelRatio(dpr)
        pm.fill(pal.color(QtGui.QPalette.ColorRole.Window))
        q = QtGui.QPainter(pm)
        q.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        bins = self._binned()
        lane_names = [n for n, _, _ in self.lanes]
        for li, (name, _label, colour) in enumerate(self.lanes):
            y = lanes_top + li * self.LANE_H
            q.fillRect(QtCore.QRectF(x0, y, x1 - x0, self.LANE_H - 1), QtGui.QColor(0, 0, 0, 18))
            col = QtGui.QColor(*colour)
            for a, b in bins.get(name, (np.zeros((0, 2), np.int64), colour))[0].tolist():
                q.fillRect(QtCore.QRectF(a, y, b - a, self.LANE_H - 1), col)
        for lane, (runs, colour) in bins.items():   # markers of unknown lanes go on the first lane
            if lane not in lane_names:
                for a, b in runs.tolist():
                    q.fillRect(QtCore.QRectF(a, lanes_top, b - a, self.LANE_H - 1), QtGui.QColor(*colour))
        q.setPen(pal.color(QtGui.QPalette.ColorRole.WindowText))
        f = QtGui.QFont(self.font())   # (a pixmap's painter starts with the application's font, not the bar's)
        f.setPointSizeF(max(7.0, f.pointSizeF() - 1.5))
        q.setFont(f)
        step = _nice_step(self.maximum, int(x1 - x0))
        fm = QtGui.QFontMetrics(f)
        for s in range(0, self.maximum + 1, step):
            x = self.x_of(s)
            label = str(s)
            w = fm.horizontalAdvance(label)
            lx = min(max(x - w / 2, 0), self.width() - w)
            q.drawLine(QtCore.QPointF(x, track_y + 7), QtCore.QPointF(x, track_y + 11))
            q.drawText(QtCore.QPointF(lx, track_y + 11 + fm.ascent()), label)
        q.end()
        return pm

    # ---- mouse ---------------------------------------------------------------------------------------------
    def mousePressEvent(self, ev: QtGui.QMouseEvent) -> None:  # noqa: N802
        if ev.button() == QtCore.Qt.MouseButton.LeftButton:
            self._dragging = True
            self.scrubbing.emit(True)
            self.stepRequested.emit(self.step_at(ev.position().x()))

    def mouseMoveEvent(self, ev: QtGui.QMouseEvent) -> None:  # noqa: N802
        if self._dragging:
            self.stepRequested.emit(self.step_at(ev.position().x()))
        else:
            self.setToolTip(self._tooltip_at(ev.position().x(), ev.position().y()))

    def mouseReleaseEvent(self, ev: QtGui.QMouseEvent) -> None:  # noqa: N802
        if self._dragging:
            self._dragging = False
            self.scrubbing.emit(False)

    def _tooltip_at(self, x: float, y: float) -> str:
        """Texts of the markers under the mouse (±3 px), or the step number."""
        s = self.step_at(x)
        if self._sorted:   # the markers within 3 px, found by bisection (thousands of markers: no full scan)
            lo = bisect.bisect_left(self._steps, self.step_at(x - 3.5))
            hi = bisect.bisect_right(self._steps, self.step_at(x + 3.5))
            candidates = self.markers[lo:hi]
        else:
            candidates = self.markers
        near = [m for m in candidates if abs(self.x_of(m.step) - x) <= 3]
        lane_i = int((y - 6) // self.LANE_H)
        if 0 <= lane_i < len(self.lanes):
            in_lane = [m for m in near if m.lane == self.lanes[lane_i][0]]
            near = in_lane or near
        if near:
            lines = [f"step {m.step}: {m.text}" for m in near[:8]]
            if len(near) > 8:
                lines.append(f"… and {len(near) - 8} more")
            return "\n".join(lines)
        return f"step {s}"


class TimelineWidget(QtWidgets.QWidget):
    """Bar + step spin box + "of T" label + marker legend."""

    stepRequested = QtCore.Signal(int)
    scrubbing = QtCore.Signal(bool)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = TimelineBar(self)
        self.spin = QtWidgets.QSpinBox(self)
        self.spin.setRange(0, 0)
        self.spin.setKeyboardTracking(False)
        self.spin.setToolTip("Type a step and press Enter to show it")
        self.spin.setAccelerated(True)
        self.spin.setMinimumWidth(80)
        self.spin.setMaximumWidth(110)
        self.total = QtWidgets.QLabel("of 0", self)
        self.total.setMinimumWidth(70)
        self.legend = QtWidgets.QLabel(self)
        self.legend.setTextFormat(QtCore.Qt.TextFormat.RichText)
        lay = QtWidgets.QGridLayout(self)
        lay.setContentsMargins(6, 2, 6, 2)
        lay.setHorizontalSpacing(8)
        lay.setVerticalSpacing(0)
        lay.addWidget(self.bar, 0, 0)
        step_lbl = QtWidgets.QLabel("Step", self)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(step_lbl)
        row.addWidget(self.spin)
        row.addWidget(self.total)
        lay.addLayout(row, 0, 1, QtCore.Qt.AlignmentFlag.AlignTop)
        lay.addWidget(self.legend, 1, 0, 1, 2)
        lay.setColumnStretch(0, 1)
        self.bar.stepRequested.connect(self.stepRequested)
        self.bar.scrubbing.connect(self.scrubbing)
        self.spin.valueChanged.connect(self._spin_changed)
        self._setting = False
        # opaque in the window colour (what its dock shows beneath it): the spin box's new step at each seek
        # repaints this panel's background under it, not the dock's frame and title and the window beneath
        self.setAutoFillBackground(True)

    def _spin_changed(self, v: int) -> None:
        if not self._setting:
            self.stepRequested.emit(int(v))

    def set_range(self, maximum: int) -> None:
        self.bar.set_range(maximum)
        self._setting = True
        self.spin.setMaximum(max(0, maximum))
        self._setting = False
        self.total.setText(f"of {maximum}")

    def set_value(self, value: int) -> None:
        self.bar.set_value(value)
        if self.spin.hasFocus() and self.spin.lineEdit().isModified():
            return  # the user is typing a step: playback must not overwrite it
        if self.spin.value() != value:
            self._setting = True
            self.spin.setValue(value)
            self._setting = False

    @property
    def value(self) -> int:
        return self.bar.value

    def set_lanes(self, lanes: list[tuple[str, str, tuple[int, int, int]]]) -> None:
        self.bar.set_lanes(lanes)
        self.legend.setText("  ".join(
            [f"<span style='color:rgb{c}'>&#9632;</span> {label}" for _n, label, c in lanes]
            + ["<span style='color:rgb(220,30,40)'>&#9679;</span> breakpoint"]))

    def set_markers(self, markers: list[Marker]) -> None:
        self.bar.set_markers(markers)

    def add_markers(self, markers: list[Marker]) -> None:
        self.bar.add_markers(markers)

    def set_breakpoints(self, steps: list[int]) -> None:
        self.bar.set_breakpoints(steps)
