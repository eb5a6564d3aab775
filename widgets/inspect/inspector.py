"""Inspector dock: everything about the selected agent at the shown step, and its actions over time.

It formats a :class:`core.view.inspect.AgentReport`; it computes nothing itself. Its summary (who, the facts, and
under "Why this action" the explanation the simulation recorded, saying so: widgets/inspect/agent_summary.py) is one
read-only document; only the view table below it is re-grounded, and its title says so.
The action plot's cursor follows the timeline (:meth:`InspectorWidget.set_cursor`) and clicking the plot asks for
that step.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from core.base.codes import ACTION_NAMES
from core.view.colouring import ACTION_COLOURS
from core.view.inspect import AgentReport
from widgets.inspect.agent_summary import AgentSummary
from widgets.plot_marks import CursorLine

POINTS_UP_TO = 300
#: Above this many steps the action curve is drawn as a line over the visible steps, downsampled to the plot's
#: pixels (a step outline of 10,000 steps costs a paint in proportion to the recording, for steps under a pixel).
STEPS_UP_TO = 2000
#: Whether a row is the ego's (rows are updated in place from view to view; the ego's row is bold).
EGO_ROLE = QtCore.Qt.ItemDataRole.UserRole + 2


def _retitle(box: QtWidgets.QGroupBox, title: str) -> None:
    """Set a group box's title repainting its title band only: QGroupBox repaints the whole box on a new title,
    and with it everything inside (the true-predicates table, at almost every step: its title names the step)."""
    if box.title() == title:
        return
    band = box.contentsRect().top()
    attr = QtCore.Qt.WidgetAttribute.WA_UpdatesDisabled
    blocked = box.testAttribute(attr)
    box.setAttribute(attr, True)
    box.setTitle(title)
    box.setAttribute(attr, blocked)
    box.update(0, 0, box.width(), max(band, box.fontMetrics().height()) + 2)


def _set_relation_rows(item: QtWidgets.QTreeWidgetItem, rels: tuple[str, ...]) -> None:
    """An entity row's relation rows show ``rels``: the rows there are given the new texts, the missing ones are
    added, the extra ones removed (what removing them all and making new ones shows, with no row made anew)."""
    n = item.childCount()
    for j, rel in enumerate(rels[:n]):
        child = item.child(j)
        if child.text(1) != rel:
            child.setText(1, rel)
    if n > len(rels):
        for j in range(n - 1, len(rels) - 1, -1):
            item.takeChild(j)
    elif len(rels) > n:
        item.addChildren([QtWidgets.QTreeWidgetItem(["", str(rel)]) for rel in rels[n:]])


class InspectorWidget(QtWidgets.QWidget):
    stepRequested = QtCore.Signal(int)
    agentRequested = QtCore.Signal(int)   # a click on an entity of the view table

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: AgentReport | None = None
        # the content sits in a scroll area: its labels change text at every step, and a text change re-lays out
        # every widget up to the top-level window (the main window then re-lays out all its docks); the scroll
        # area's viewport stops that at the dock's edge (and a short dock scrolls instead of squeezing the table)
        shell = QtWidgets.QVBoxLayout(self)
        shell.setContentsMargins(0, 0, 0, 0)
        self.scroll = QtWidgets.QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QtWidgets.QWidget()
        self.scroll.setWidget(body)
        shell.addWidget(self.scroll)
        outer = QtWidgets.QVBoxLayout(body)
        outer.setContentsMargins(6, 4, 6, 4)
        # who the agent is, its facts and why it took its action: one document (widgets/inspect/agent_summary.py)
        self.summary = AgentSummary()
        outer.addWidget(self.summary)

        self.plot = pg.PlotWidget(background=None)
        self.plot.setMinimumHeight(80)
        self.plot.setMaximumHeight(170)
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        pi = self.plot.getPlotItem()
        pi.setLabel("bottom", "step")
        pi.setTitle("Decided action over time", size="9pt")
        pi.getAxis("left").setTicks([[(i, n) for i, n in enumerate(ACTION_NAMES)]])
        pi.setYRange(-0.5, 3.5, padding=0)
        pi.enableAutoRange(axis="y", enable=False)
        pi.vb.setLimits(yMin=-0.6, yMax=3.6, xMin=-1)
        pi.showGrid(x=True, y=True, alpha=0.2)
        for name in ("left", "bottom"):   # the cursor line moves over the axes' grid lines: blit them (stats.py)
            pi.getAxis(name).setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.curve = pg.PlotDataItem(pen=pg.mkPen(90, 90, 90, width=1))
        # a seek moves only the cursor line over it: the curve is blitted from a cached picture (widgets/stats.py)
        self.curve.curve.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.points = pg.ScatterPlotItem(size=5, pen=None)
        self.cursor = CursorLine(pg.mkPen(230, 160, 0, width=2))   # Qt's own line item (widgets/plot_marks.py)
        pi.addItem(self.curve)
        pi.addItem(self.points)
        self.cursor.attach(pi)
        self.plot.scene().sigMouseClicked.connect(self._plot_clicked)
        view_box = self.view_box = QtWidgets.QGroupBox("True predicates in its view")
        vl = QtWidgets.QVBoxLayout(view_box)
        vl.setContentsMargins(4, 4, 4, 4)
        self.table = QtWidgets.QTreeWidget()
        self.table.setColumnCount(2)
        self.table.setHeaderLabels(["Entity", "True predicates (properties; relations below)"])
        self.table.setRootIsDecorated(True)
        self.table.setIndentation(12)
        self.table.setAlternatingRowColors(True)
        # one line per row (long lists elide; the full text is the row's tooltip): with uniform heights the view
        # lays out and paints the rows in sight only, not the hundreds of relations of a crowded view
        self.table.setUniformRowHeights(True)
        self.table.setWordWrap(False)
        self.table.header().setStretchLastSection(True)
        self.table.setMinimumHeight(80)
        self.table.itemDoubleClicked.connect(self._entity_clicked)
        self.table.itemExpanded.connect(self._populate)
        # the rows changed at a step repaint the rows (not the whole table, frame included: the table is updated
        # in place with its updates on), and the scroll bar, whose range changes with the rows, paints its
        # background itself (the window colour, all its style leaves visible): neither repaints the table's frame,
        # the group box and the splitter beneath it
        self.table.verticalScrollBar().setAutoFillBackground(True)
        # the scroll bar always there: one that comes and goes with the number of rows narrows the rows, which
        # resizes the stretched column and repaints the table in a pass of its own after the step's (a timer)
        self.table.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        vl.addWidget(self.table)
        # the table comes right after the explanation; the action plot shares a splitter with it (drag to resize)
        self.splitter = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(view_box)
        self.splitter.addWidget(self.plot)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        outer.addWidget(self.splitter, 1)

        self._brushes = [pg.mkBrush(*ACTION_COLOURS[n]) for n in ACTION_NAMES]
        self._plotted: tuple[int, int] | None = None
        self._table_key: tuple | None = None    # what the true-predicates table shows (rebuilt when it changes)
        self._expanded: set[int] = set()          # entities whose relations are expanded (the ego, the user's)
        self._row_relations: list[tuple[str, ...] | None] = []   # each table row's relations as shown
        self._span = 20
        self.plot.getPlotItem().setXRange(0, self._span, padding=0.02)

    # ---- updates ----------------------------------------------------------------------------------------------
    def clear(self) -> None:
        self.report = None
        self.summary.clear_report()
        self.table.clear()
        self._table_key = None
        self._row_relations = []
        self.curve.setData([], [])
        self.points.setData([], [])
        self._plotted = None
        self._span = 20
        self.plot.getPlotItem().setXRange(0, self._span, padding=0.02)  # a sane empty axis, not ±500

    def set_report(self, r: AgentReport, colour: tuple[int, int, int] | None = None) -> None:
        self.report = r
        if self.summary.show_report(r, colour):
            # it grew for a longer text: place the table below it now, before the table lays out its rows (the
            # dock's layout would move it in the event loop, and the table's header resize itself a pass later)
            self.scroll.widget().layout().activate()
        at = "" if r.decision_step in (None, r.step) else f", step {r.decision_step}"
        _retitle(self.view_box, f"True predicates in its view (re-grounded{at})")
        self.view_box.setToolTip(r.regrounded_note)
        self._fill_table(r)
        self._plot_actions(r)
        self.set_cursor(r.step)

    def _fill_table(self, r: AgentReport) -> None:
        """One row per entity in the view (ego first) with its true unary predicates; its true relations are
        child rows. The ego's relations are expanded, and those of the entities the user expanded (kept from view
        to view): a crowded view has hundreds of relations, which a collapsed row does not lay out or paint."""
        key = (r.agent, r.view, r.view_error)
        if key == self._table_key:   # e.g. an agent waiting at a crossing: the same view step after step
            return
        if self._table_key is not None and self._table_key[0] == r.agent:
            # the rows open now, and those meant to be open that had no relations to show (nothing to collapse)
            items = [self.table.topLevelItem(j) for j in range(self.table.topLevelItemCount())]
            agents = [it.data(0, QtCore.Qt.ItemDataRole.UserRole) for it in items]
            self._expanded = {int(a) for it, a, rels in zip(items, agents, self._row_relations)
                              if a is not None and (it.isExpanded() or (not rels and int(a) in self._expanded))}
        else:
            self._expanded = {r.agent}
        self._table_key = key
        role = QtCore.Qt.ItemDataRole
        rows: list[tuple[str, str, int | None, tuple[str, ...]]] = []   # (entity, predicates, agent, relations)
        if r.view_error:
            rows.append(("(not available)", r.view_error, None, ()))
        for row in r.view:
            rows.append((row.name + ("  (ego)" if row.agent == r.agent else ""), ", ".join(row.unary) or "—",
                         row.agent, tuple(row.relations)))
        # the rows are updated in place (a cleared and refilled tree is reset and laid out again, and the view
        # repaints all of it); a row changes kind (ego or not: its font) only by being made anew
        t = self.table
        while t.topLevelItemCount() > len(rows):
            t.takeTopLevelItem(t.topLevelItemCount() - 1)
        shown = self._row_relations = (self._row_relations + [None] * len(rows))[: len(rows)]
        for i, (name, unary, agent, rels) in enumerate(rows):
            ego = agent is not None and agent == r.agent
            item = t.topLevelItem(i)
            if item is None or bool(item.data(0, EGO_ROLE)) != ego:
                fresh = QtWidgets.QTreeWidgetItem()
                fresh.setData(0, EGO_ROLE, ego)
                if ego:
                    fnt = fresh.font(0)
                    fnt.setBold(True)
                    fresh.setFont(0, fnt)
                if item is not None:
                    t.takeTopLevelItem(i)
                t.insertTopLevelItem(i, fresh)
                item, shown[i] = fresh, None
            if item.text(0) != name:
                item.setText(0, name)
            if item.text(1) != unary:
                item.setText(1, unary)
                item.setToolTip(1, unary if agent is not None else "")
            if item.data(0, role.UserRole) != agent:
                item.setData(0, role.UserRole, agent)
            # the relation rows are made when the entity is expanded (_populate, from shown[i]: kept here, not in the
            # item's data, which copied every collapsed row's relations into Qt and emitted a change at each step);
            # rows made already are updated in place (the ego's change at almost every step: removed and made
            # anew, the view laid all of them out)
            if shown[i] != rels:
                shown[i] = rels
                if item.childCount():
                    _set_relation_rows(item, rels)
                policy = (QtWidgets.QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator if rels
                          else QtWidgets.QTreeWidgetItem.ChildIndicatorPolicy.DontShowIndicatorWhenChildless)
                if item.childIndicatorPolicy() != policy:
                    item.setChildIndicatorPolicy(policy)
            expand = bool(rels) and agent is not None and int(agent) in self._expanded
            if expand and item.isExpanded():
                self._populate(item)   # expanded already: itemExpanded does not come again
            elif expand != item.isExpanded():
                item.setExpanded(expand)
        # the entity column as wide as its longest name (measuring every row's contents costs a layout pass)
        fm = self.table.fontMetrics()
        longest = max((row.name + "  (ego)" for row in r.view), key=len, default="(not available)")
        width = max(90, fm.horizontalAdvance(longest) + 40)
        if width != self.table.columnWidth(0):
            self.table.setColumnWidth(0, width)
        # lay the rows out now, and run what the tree queued for itself, rather than in the event loop after the
        # window is painted: each would repaint the table, its group box and the dock's scroll bar once more
        t.doItemsLayout()
        QtCore.QCoreApplication.sendPostedEvents(t, QtCore.QEvent.Type.MetaCall)
        t.header().resizeSections()

    def _populate(self, item: QtWidgets.QTreeWidgetItem) -> None:
        """An entity row is expanded: its relation rows, made once (a crowded view has hundreds); later views
        update them in place (_fill_table)."""
        if item.parent() is not None or item.childCount():
            return
        i = self.table.indexOfTopLevelItem(item)
        rels = self._row_relations[i] if 0 <= i < len(self._row_relations) else None
        if rels:
            item.addChildren([QtWidgets.QTreeWidgetItem(["", str(rel)]) for rel in rels])

    def _plot_actions(self, r: AgentReport) -> None:
        acts = np.asarray(r.actions, np.int64)
        key = (r.agent, len(acts))
        if self._plotted == key:
            return
        self._plotted = key
        t = len(acts)
        if t == 0:
            self.curve.setData([], [])
            self.points.setData([], [])
            return
        if t <= STEPS_UP_TO:
            self.curve.setDownsampling(auto=False)
            self.curve.setClipToView(False)
            self.curve.setData(np.arange(t + 1, dtype=float) - 0.5, acts.astype(float), stepMode="center")
        else:   # a long recording: steps narrower than a pixel; the visible part, one point per pixel at most
            self.curve.setData(np.arange(t, dtype=float), acts.astype(float), stepMode=None)
            self.curve.setClipToView(True)
            self.curve.setDownsampling(auto=True, method="peak")
        if t <= POINTS_UP_TO:   # coloured dots per step while they are distinguishable (and cheap)
            self.points.setData(np.arange(t, dtype=float), acts.astype(float),
                                brush=[self._brushes[a] for a in acts])
        else:
            self.points.setData([], [])
        self.points.setVisible(t <= POINTS_UP_TO)   # an empty scatter still costs bounds and culling a paint
        # grow the x range in chunks: a range change re-lays out the axis (an extra repaint)
        span = max(20, int(np.ceil(t / 50.0)) * 50)
        if span != self._span:
            self._span = span
            self.plot.getPlotItem().setXRange(0, span, padding=0.02)

    def set_cursor(self, k: int) -> None:
        self.cursor.setValue(k)

    def _plot_clicked(self, ev) -> None:
        vb = self.plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        x = vb.mapSceneToView(ev.scenePos()).x()
        self.stepRequested.emit(max(0, int(round(x))))

    def _entity_clicked(self, item: QtWidgets.QTreeWidgetItem, _col: int) -> None:
        if item.parent() is not None:   # a relation row: its entity
            item = item.parent()
        a = item.data(0, QtCore.Qt.ItemDataRole.UserRole)
        if a is not None and int(a) >= 0:
            self.agentRequested.emit(int(a))
