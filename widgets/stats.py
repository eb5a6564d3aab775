"""Statistics dock: actions per step (stacked areas), clause firing counts (bars), goals reached (lines).

Numbers come from :mod:`core.view.stats`; ``refresh(episode, cursor)`` recomputes them vectorised (a few ms
for thousands of steps), so the owner calls it at a low rate while the simulation plays.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from core.base.codes import ACTION_NAMES
from core.view.colouring import ACTION_COLOURS, KIND_COLOURS
from core.view.stats import RunningStats, clause_labels, range_summary, step_range_text
from widgets.layout_fence import fenced
from widgets.plot_marks import CursorLine, ShadedSpan


def _plot(title: str, bottom: str | None = "step") -> pg.PlotWidget:
    w = pg.PlotWidget(background=None)
    w.setMenuEnabled(False)
    w.hideButtons()
    pi = w.getPlotItem()
    pi.setTitle(title, size="9pt")
    if bottom:
        pi.setLabel("bottom", bottom)
    pi.showGrid(x=True, y=True, alpha=0.2)
    for name in ("left", "bottom"):
        # the axes with their grid lines span the plot: a seek moves the cursor line and the shading over them,
        # so they are blitted from a pixmap (redrawn when the range or size changes) instead of replayed
        pi.getAxis(name).setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
    w.setMinimumHeight(90)
    return w


def _with_key(plot: pg.PlotWidget, entries: list[tuple[str, tuple[int, int, int]]]) -> QtWidgets.QWidget:
    """The plot with a one-line colour key under it (a legend inside the plot would hide data)."""
    w = QtWidgets.QWidget()
    v = QtWidgets.QVBoxLayout(w)
    v.setContentsMargins(0, 0, 0, 0)
    v.setSpacing(0)
    v.addWidget(plot, 1)
    key = QtWidgets.QLabel("&nbsp;&nbsp;".join(f"<span style='color:rgb{c}'>&#9632;</span> {n}" for n, c in entries))
    key.setTextFormat(QtCore.Qt.TextFormat.RichText)
    key.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
    v.addWidget(key)
    return w


#: Height of one clause row in the Clauses tab (labels stay legible with many clauses).
ROW_PX = 17


class StatsWidget(QtWidgets.QWidget):
    stepRequested = QtCore.Signal(int)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.tabs = QtWidgets.QTabWidget(self)
        lay.addWidget(self.tabs)

        self.actions_plot = _plot("Agents per decided action")
        pi = self.actions_plot.getPlotItem()
        self.action_curves = []
        for name in reversed(ACTION_NAMES):   # biggest stack first, so smaller ones paint over it
            c = ACTION_COLOURS[name]
            curve = pg.PlotDataItem(pen=pg.mkPen(*c, width=1), fillLevel=0, brush=pg.mkBrush(*c, 170), name=name,
                                    autoDownsampleFactor=1.0)   # a filled area: one sample per pixel is enough
            pi.addItem(curve)   # first: PlotItem.addItem sets the item's clipping and downsampling to its own (off)
            # a long recording: draw the visible steps, one point per pixel at most (a filled curve of 10,000 points
            # is filled in 200 chunks per repaint, the longest stall while playing)
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
            self.action_curves.append(curve)
        # the cursor line and the shading a seek moves are Qt's own items (widgets/plot_marks.py)
        self.actions_cursor = CursorLine(pg.mkPen(230, 160, 0, width=2)).attach(pi)
        self.tabs.addTab(_with_key(self.actions_plot, [(n, ACTION_COLOURS[n]) for n in ACTION_NAMES]), "Actions")

        self.clause_plot = _plot("Clause firings up to the shown step", bottom="firings")
        self.clause_bars = pg.BarGraphItem(x0=[], y=[], height=0.7, width=[], brush=pg.mkBrush(96, 140, 196))
        self.clause_plot.getPlotItem().addItem(self.clause_bars)
        self.clause_plot.getPlotItem().invertY(True)
        self.clause_plot.setMouseEnabled(x=False, y=False)
        clause_scroll = QtWidgets.QScrollArea()   # one readable row per clause; scroll when the dock is short
        clause_scroll.setWidgetResizable(True)
        clause_scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        clause_scroll.setWidget(self.clause_plot)
        self.tabs.addTab(clause_scroll, "Clauses")
        self._clause_tab = clause_scroll
        self._clauses_stale = False
        self._clause_title = "Clause firings up to the shown step"
        self.tabs.currentChanged.connect(self._on_tab)

        self.goals_plot = _plot("Goals reached (cumulative)")
        gp = self.goals_plot.getPlotItem()
        self.goal_ped = gp.plot(pen=pg.mkPen(*KIND_COLOURS["Pedestrian"], width=2), name="Pedestrians")
        self.goal_car = gp.plot(pen=pg.mkPen(*KIND_COLOURS["Car"], width=2), name="Cars")
        for curve in (self.goal_ped, self.goal_car):
            curve.setClipToView(True)
            curve.setDownsampling(auto=True, method="peak")
        for curve in (*self.action_curves, self.goal_ped, self.goal_car):
            # a seek moves only the cursor line and the shading: the filled areas come from a cached picture, so a
            # repaint of the Actions tab does not fill them again
            curve.curve.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.goals_cursor = CursorLine(pg.mkPen(230, 160, 0, width=2)).attach(gp)
        self.tabs.addTab(_with_key(self.goals_plot, [("Pedestrians", KIND_COLOURS["Pedestrian"]),
                                                     ("Cars", KIND_COLOURS["Car"])]), "Goals")

        # the steps after the shown one are drawn but not counted (footer, Clauses): shaded, so every number in
        # the dock visibly speaks of the same steps 0..k-1
        self.after_cursor = []
        for w in (self.actions_plot, self.goals_plot):
            region = ShadedSpan(pg.mkBrush(128, 128, 128, 60))
            region.setZValue(-5)      # under the curves
            region.setToolTip("steps after the shown step: not counted in the figures below")
            self.after_cursor.append(region.attach(w.getPlotItem()))   # never part of the auto-range
        for w in (self.actions_plot, self.goals_plot):
            w.scene().sigMouseClicked.connect(lambda ev, w=w: self._clicked(w, ev))
        self.clause_plot.scene().sigMouseMoved.connect(self._clause_hover)
        self.summary = QtWidgets.QLabel()
        self.summary.setWordWrap(True)
        self.summary.setAlignment(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop)
        lay.addWidget(fenced(self.summary, lines=4))   # its text changes at every step: no window re-layout
        self._labels: list[str] = []
        self._texts: list[str] = []
        self._cc = np.zeros(0, np.int64)     # firings per clause in the counted range
        self._cum = np.zeros((0, 4), np.int64)
        self._ped = self._car = np.zeros(0, np.int64)
        self._steps_drawn = -1
        self._span = -1
        self._cursor = 0
        self._running = RunningStats()
        self._clause_axis: tuple | None = None

    def _clicked(self, w: pg.PlotWidget, ev) -> None:
        vb = w.getPlotItem().vb
        if vb.sceneBoundingRect().contains(ev.scenePos()):
            self.stepRequested.emit(max(0, int(round(vb.mapSceneToView(ev.scenePos()).x()))))

    def clear(self) -> None:
        for c in self.action_curves:
            c.setData([], [])
        self.clause_bars.setOpts(x0=[], y=[], width=[])
        self._clauses_stale = False
        self.goal_ped.setData([], [])
        self.goal_car.setData([], [])
        self.summary.setText("")
        self._cc = np.zeros(0, np.int64)
        self._steps_drawn = -1
        self._running.reset()
        self._clause_axis = None

    def refresh(self, episode, cursor: int) -> None:
        """Redraw from the episode. The counts are kept up to date incrementally (only the steps recorded since
        the last refresh are scanned) and the per-cursor figures come from cumulative arrays, so neither a new
        frame nor a cursor move costs time in proportion to the length of the recording; the curves are clipped
        to the visible range and downsampled to the plot's pixels (pyqtgraph) for the same reason."""
        run = self._running
        run.update(episode)
        t = run.steps
        self._cursor = cursor
        self.actions_cursor.setValue(cursor)
        self.goals_cursor.setValue(cursor)
        if t != self._steps_drawn:
            self._steps_drawn = t
            x = np.arange(t, dtype=float)
            cum = np.cumsum(run.counts, axis=1) if t else np.zeros((0, 4))
            for j, curve in enumerate(self.action_curves):   # reversed order: Stop, Fast, Normal, Slow
                col = 3 - j
                curve.setData(x, cum[:, col].astype(float) if t else [])
            span = max(20, int(np.ceil(t / 50.0)) * 50)   # chunked growth: fewer axis re-layouts
            if span != self._span:
                self._span = span
                for w in (self.actions_plot, self.goals_plot):
                    w.getPlotItem().setXRange(0, span, padding=0.02)
            self.goal_ped.setData(x, run.ped.astype(float))
            self.goal_car.setData(x, run.car.astype(float))
            self._labels = clause_labels(episode)
            self._texts = [str(c.get("text", "")) for c in episode.meta.get("clauses", [])]
            self._cum = run.counts_cum
            self._ped, self._car = run.ped, run.car
        k = min(cursor, t)
        for region in self.after_cursor:
            region.setRegion((k, max(k, t)))
        cc = run.clause_counts(k)
        default = int(cc[-1])
        cc = cc[:-1]   # the default decisions would dwarf every clause: reported in the title instead
        self._cc = cc
        self.summary.setText(range_summary(self._cum, self._ped, self._car, k, t, int(cc.sum()), default))
        self._clause_title = f"Clause firings in {step_range_text(k)} (+{default} default)"
        if self.tabs.currentWidget() is self._clause_tab:
            self._draw_clauses()
        else:   # a hidden tab: its bars and axis (a re-layout whenever a count changes) are drawn when it is shown
            self._clauses_stale = True

    def _on_tab(self, _index: int) -> None:
        if self._clauses_stale and self.tabs.currentWidget() is self._clause_tab:
            self._draw_clauses()

    def _draw_clauses(self) -> None:
        """The Clauses tab's bars and axis labels for the counts of the last refresh."""
        self._clauses_stale = False
        cc = self._cc
        pi = self.clause_plot.getPlotItem()
        if pi.titleLabel.text != self._clause_title:   # a title change re-lays out the plot: drawn with the tab
            pi.setTitle(self._clause_title, size="9pt")
        labels = list(self._labels) + [f"clause {i}" for i in range(len(self._labels), len(cc))]
        labels = [f"{lab} ({int(n)})" for lab, n in zip(labels[: len(cc)], cc)]
        y = np.arange(len(cc), dtype=float)
        self.clause_bars.setOpts(x0=np.zeros(len(cc)), y=y, width=cc.astype(float), height=0.7)
        axis = (tuple(labels), float(cc.max(initial=0)))
        if axis != self._clause_axis:   # ticks, height and ranges only when they change (each is a re-layout)
            self._clause_axis = axis
            self.clause_plot.setMinimumHeight(70 + ROW_PX * max(1, len(cc)))
            pi.getAxis("left").setTicks([[(i, lab) for i, lab in enumerate(labels)]])
            pi.setYRange(-0.6, max(len(cc), 1) - 0.4, padding=0)
            pi.setXRange(0, max(1.0, float(cc.max(initial=0))) * 1.05, padding=0)

    def clause_tip(self, i: int) -> str:
        """Hover text of clause row ``i``: its label, full text and firings in the counted range."""
        if not 0 <= i < len(self._cc):
            return ""
        label = self._labels[i] if i < len(self._labels) else f"clause {i}"
        text = self._texts[i] if i < len(self._texts) else ""
        n = int(self._cc[i])
        return (f"{label}: fired {n} time{'s' if n != 1 else ''} in {step_range_text(self._cursor_k())}"
                + (f"\n{text}" if text else ""))

    def _cursor_k(self) -> int:
        return min(self._cursor, max(self._steps_drawn, 0))

    def _clause_hover(self, pos) -> None:
        pi = self.clause_plot.getPlotItem()
        vb = pi.vb
        tip = ""
        if pi.sceneBoundingRect().contains(pos):   # over a bar or its label on the left axis
            tip = self.clause_tip(int(round(vb.mapSceneToView(pos).y())))
        self.clause_plot.setToolTip(tip)
