"""The rule analysis panel: what Analyze (F7) found, each finding linked to its clause lines, plus the action
dependency graph.

It shows a :class:`core.analysis.report.RulesAnalysis` as a tree — conflicts (with the minimal unsat core, each
member at its line), dead clauses and clauses that fire only where a constraint is violated, undefined uses, strata
and negation cycles, the deadlock search with its bound, and clause coverage of the shown episode. Clicking a
finding or a core member emits ``lineActivated(line)`` (the controller moves the rule editor there); a conflict with
a witness scene or a deadlock has **Load as scene** (``sceneRequested(scene, title)``). The graph is drawn with a
networkx layout by stratum in a ``QGraphicsView``: negative edges dashed red, cycle members red.

Plain widget: it never runs the analysis (the controller does, as a job) and never imports ``app``.
"""
from __future__ import annotations

from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

__all__ = ["AnalysisPanel", "DependencyGraphView"]

_ROLE = QtCore.Qt.ItemDataRole.UserRole


class DependencyGraphView(QtWidgets.QGraphicsView):
    """The action dependency graph of one rule section: head → body action, by stratum (left to right)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setScene(QtWidgets.QGraphicsScene(self))
        self.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        self.setMinimumHeight(50)
        self.node_items: dict[str, QtWidgets.QGraphicsEllipseItem] = {}

    def show_graph(self, graph: Any | None) -> None:
        import networkx as nx

        sc = self.scene()
        sc.clear()
        self.node_items = {}
        if graph is None or not graph.nodes:
            sc.addText("No actions defined")
            return
        g = nx.DiGraph()
        in_cycle = {n for c in graph.cycles for n in c}
        for n in graph.nodes:
            g.add_node(n.name, subset=n.stratum if n.stratum is not None else 0)
        for e in graph.edges:
            g.add_edge(e.head, e.body, negative=e.negative)
        pos = nx.multipartite_layout(g, subset_key="subset", align="vertical", scale=1.0) if graph.stratified \
            else nx.circular_layout(g)
        xs = [p[0] for p in pos.values()]
        spread = max(1e-6, max(xs) - min(xs)) if len(set(xs)) > 1 else 1.0
        k = 220.0 / spread if len(set(xs)) > 1 else 150.0
        pts = {n: QtCore.QPointF(p[0] * k, p[1] * 150.0) for n, p in pos.items()}
        r = 26.0
        for e in graph.edges:
            a, b = pts[e.head], pts[e.body]
            pen = QtGui.QPen(QtGui.QColor("#d1242f" if e.negative else "#57606a"), 1.6)
            if e.negative:
                pen.setStyle(QtCore.Qt.PenStyle.DashLine)
            line = QtCore.QLineF(a, b)
            if line.length() > 2 * r:
                line = QtCore.QLineF(line.pointAt(r / line.length()), line.pointAt(1 - r / line.length()))
            item = sc.addLine(line, pen)
            item.setToolTip(f"{e.head} uses {'Not(' if e.negative else ''}{e.body}{')' if e.negative else ''} "
                            f"in {e.clause}" + (f" (line {e.line})" if e.line else ""))
            back = line.angle() + 180.0      # Qt angles: degrees counter-clockwise, y down
            head = QtGui.QPolygonF([line.p2()] + [QtCore.QLineF.fromPolar(9, back + d).translated(line.p2()).p2()
                                                  for d in (25, -25)])
            sc.addPolygon(head, pen, QtGui.QBrush(pen.color()))
        for n in graph.nodes:
            p = pts[n.name]
            bad = n.name in in_cycle
            ell = sc.addEllipse(p.x() - r, p.y() - r * 0.7, 2 * r, 1.4 * r,
                                QtGui.QPen(QtGui.QColor("#d1242f" if bad else "#0550ae"), 2),
                                QtGui.QBrush(QtGui.QColor("#ffebe9" if bad else "#ddf4ff")))
            label = sc.addSimpleText(n.name)
            br = label.boundingRect()
            label.setPos(p.x() - br.width() / 2, p.y() - br.height() / 2)
            ell.setToolTip(f"{n.name}: {n.clauses} clause{'s' * (n.clauses != 1)}" +
                           (f", stratum {n.stratum}" if n.stratum is not None else ", in a cycle"))
            self.node_items[n.name] = ell
        self.fitInView(sc.itemsBoundingRect().adjusted(-20, -20, 20, 20), QtCore.Qt.AspectRatioMode.KeepAspectRatio)

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.scene().items():
            self.fitInView(self.scene().itemsBoundingRect().adjusted(-20, -20, 20, 20),
                           QtCore.Qt.AspectRatioMode.KeepAspectRatio)


class AnalysisPanel(QtWidgets.QWidget):
    """See the module docstring."""

    analyzeRequested = QtCore.Signal()
    cancelRequested = QtCore.Signal()
    lineActivated = QtCore.Signal(int)
    sceneRequested = QtCore.Signal(object, str)       # (rule section, core.sim.scene.Scene), a title

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("analysisPanel")
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        row = QtWidgets.QHBoxLayout()
        self.analyze_button = QtWidgets.QPushButton("Analyze (F7)")
        self.analyze_button.setToolTip("Strata, conflicts with unsat cores, dead clauses, the bounded deadlock search "
                                       "and coverage of the shown episode, off the GUI thread")
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.deadlock_k = QtWidgets.QComboBox()
        for k, text in ((2, "deadlocks ≤ 2"), (3, "deadlocks ≤ 3"), (0, "no deadlocks")):
            self.deadlock_k.addItem(text, k)
        self.deadlock_k.setToolTip("Largest number of agents the deadlock search places around the intersection")
        row.addWidget(self.analyze_button)
        row.addWidget(self.cancel_button)
        row.addWidget(self.deadlock_k)
        row.addStretch(1)
        lay.addLayout(row)
        row2 = QtWidgets.QHBoxLayout()      # two rows keep the panel as narrow as the Inspector it shares a column with
        self.status = QtWidgets.QLabel("Press F7 to analyse the rules.")
        self.status.setWordWrap(True)
        self.load_button = QtWidgets.QPushButton("Load as scene")
        row2.addWidget(self.status, 1)
        row2.addWidget(self.load_button)
        lay.addLayout(row2)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumHeight(8)
        self.progress.setTextVisible(False)
        self.progress.hide()
        lay.addWidget(self.progress)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setHeaderLabels(["Finding", "Line"])
        self.tree.setColumnWidth(0, 330)
        self.tree.setWordWrap(True)
        self.tree.setMinimumHeight(50)
        split.addWidget(self.tree)
        self.graph = DependencyGraphView()
        split.addWidget(self.graph)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        lay.addWidget(split, 1)
        self.load_button.setToolTip("Place the agents of the selected conflict witness or deadlock on the map "
                                    "(a new recording starting in that state); then step it")
        self.load_button.setEnabled(False)
        self.analyze_button.clicked.connect(self.analyzeRequested)
        self.cancel_button.clicked.connect(self.cancelRequested)
        self.tree.currentItemChanged.connect(self._on_current)
        self.tree.itemClicked.connect(self._on_clicked)
        self.tree.itemActivated.connect(self._on_clicked)
        self.load_button.clicked.connect(self.load_selected)
        self.analysis: Any = None

    # ---- state --------------------------------------------------------------------------------------------------
    def set_running(self, running: bool, text: str = "") -> None:
        self.analyze_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        if text:
            self.status.setText(text)

    # ---- results ------------------------------------------------------------------------------------------------
    def _item(self, parent: Any, text: str, line: int | None = None, scene: Any = None, title: str = "",
              colour: str | None = None) -> QtWidgets.QTreeWidgetItem:
        item = QtWidgets.QTreeWidgetItem(parent, [text, str(line) if line else ""])
        item.setToolTip(0, text)
        item.setData(0, _ROLE, {"line": line, "scene": scene, "title": title or text})
        if colour:
            item.setForeground(0, QtGui.QColor(colour))
        return item

    def show_analysis(self, analysis: Any, section: str | None = None) -> None:
        """Fill the tree from a RulesAnalysis; the graph shows ``section`` (default: the first analysed)."""
        self.analysis = analysis
        self.tree.clear()
        sections = list(analysis.sections)
        for sa in sections:
            top = self._item(self.tree, f"[{sa.section}] {sa.problems} finding{'s' * (sa.problems != 1)}")
            top.setExpanded(True)
            self._fill_section(top, sa)
        if analysis.coverage is not None:
            self._fill_coverage(analysis.coverage)
        for note in analysis.notes:
            self._item(self.tree, f"note: {note}", colour="#57606a")
        shown = next((s for s in sections if s.section == section), sections[0] if sections else None)
        self.graph.show_graph(shown.graph if shown is not None else None)
        self.load_button.setEnabled(False)

    def _fill_section(self, top: QtWidgets.QTreeWidgetItem, sa: Any) -> None:
        g = sa.graph
        strata = self._item(top, "Strata: " + (" | ".join(
            ", ".join(n.name for n in g.nodes if n.stratum == k)
            for k in sorted({n.stratum for n in g.nodes if n.stratum is not None})) or "-") if g.stratified
            else f"Not stratified: {len(g.cycles)} cycle{'s' * (len(g.cycles) != 1)}")
        for c in g.cycles:
            kind = "negation cycle" if c in g.negative_cycles else "cycle"
            lines = [e.line for e in g.edges if e.head in c and e.body in c and e.line]
            cyc = self._item(strata, f"{kind}: {' → '.join(c + (c[0],))}", min(lines) if lines else None,
                             colour="#d1242f")
            for e in g.edges:
                if e.head in c and e.body in c:
                    self._item(cyc, f"{e.head} uses {'Not ' if e.negative else ''}{e.body} in {e.clause}", e.line)
        conf = self._item(top, f"Conflicts: {sum(1 for c in sa.conflicts if c.result.conflict)} of "
                               f"{len(sa.conflicts)} action pairs can hold together")
        conf.setExpanded(True)
        for c in sa.conflicts:
            a, b = c.result.heads
            if c.result.unknown:
                self._item(conf, f"{a} + {b}: undecided (solver timeout)", colour="#bf8700")
            elif c.result.conflict:
                scene = (sa.section, c.scene.scene) if c.scene is not None else None
                where = ""
                if c.scene is not None:
                    where = f" — witness scene, {len(c.scene.agents)} agents" + \
                        ("" if c.scene.verified else " (not verified)")
                line = next((ln for _, ln in (c.scene.clauses if c.scene else ()) if ln), None)
                it = self._item(conf, f"CONFLICT {a} + {b}{where}", line, scene,
                                f"conflict witness {a} + {b}", "#d1242f")
                it.setExpanded(True)
                if c.scene is not None:
                    for label, ln in c.scene.clauses:
                        self._item(it, f"fires: {label}", ln, scene, f"conflict witness {a} + {b}")
                    for ag in c.scene.agents:
                        self._item(it, "agent " + ", ".join(f"{k}={v}" for k, v in ag.items()), None, scene,
                                   f"conflict witness {a} + {b}")
            else:
                it = self._item(conf, f"{a} + {b}: impossible (up to {c.result.max_entities} entities); "
                                      f"minimal unsat core:", colour="#116329")
                for m in c.core:
                    self._item(it, str(m.name), m.line)
        dead = self._item(top, f"Dead clauses: {len(sa.dead)}")
        dead.setExpanded(bool(sa.dead))
        for d in sa.dead:
            what = "fires only where a constraint is violated" if d.dead.only_with_violation else "never fires"
            it = self._item(dead, f"{d.dead.clause}: {what}", d.line, colour="#bf8700")
            for m in d.core:
                self._item(it, f"because of {m.name}", m.line)
        if sa.undefined:
            und = self._item(top, f"Undefined: {len(sa.undefined)}")
            for u in sa.undefined:
                self._item(und, f"{u['predicate']}: {u['reason']} (used in {', '.join(u['clauses'])})")
        dl = sa.deadlocks
        if dl is None:
            self._item(top, "Deadlock search: not run")
        else:
            node = self._item(top, f"Deadlocks: {len(dl.deadlocks)} pattern{'s' * (len(dl.deadlocks) != 1)} "
                                   f"({dl.configurations} configurations decided)")
            node.setExpanded(True)
            self._item(node, f"bound: {dl.bound()}", colour="#57606a")
            for i, d in enumerate(dl.deadlocks):
                title = f"deadlock {i + 1} of [{sa.section}]"
                first_line = next((a.line for a in d.agents if a.line), None)
                payload = (sa.section, d.scene)
                it = self._item(node, f"DEADLOCK {i + 1}: {len(d.agents)} agents, clauses {', '.join(d.clauses)}",
                                first_line, payload, title, "#d1242f")
                for a in d.agents:
                    self._item(it, f"{a.name} ({a.kind}{' ' + a.concept if a.concept else ''}) at {a.cell} heading "
                                   f"{a.heading}: stops by {a.clause}, waits on {', '.join(a.waits_on)}",
                               a.line, payload, title)
            if not dl.deadlocks:
                self._item(node, "no deadlock within the bound", colour="#116329")

    def _fill_coverage(self, cov: Any) -> None:
        since = f" from step {cov.first_step} (the rules applied there)" if cov.first_step else ""
        top = self._item(self.tree, f"Coverage of the episode: {cov.decisions} rule decisions over {cov.steps} "
                                    f"steps{since} ({cov.default} default Normal, {cov.forced} forced left out)")
        top.setExpanded(True)
        for c in cov.clauses:
            self._item(top, f"{c.label}: {c.count} ({100 * c.share:.1f} %)", c.line,
                       colour="#bf8700" if c.count == 0 else None)
        never = [c.label for c in cov.never_fired]
        self._item(top, "never fired: " + (", ".join(never) or "none"))

    # ---- interaction --------------------------------------------------------------------------------------------
    def _on_current(self, item: QtWidgets.QTreeWidgetItem | None, _prev: Any = None) -> None:
        data = item.data(0, _ROLE) if item is not None else None
        self.load_button.setEnabled(bool(data and data.get("scene") is not None))

    def _on_clicked(self, item: QtWidgets.QTreeWidgetItem, _col: int = 0) -> None:
        data = item.data(0, _ROLE) or {}
        self._on_current(item)
        if data.get("line"):
            self.lineActivated.emit(int(data["line"]))

    def load_selected(self) -> None:
        item = self.tree.currentItem()
        data = item.data(0, _ROLE) if item is not None else None
        if data and data.get("scene") is not None:
            self.sceneRequested.emit(data["scene"], data.get("title", "scene"))

    def items_with(self, prefix: str) -> list[QtWidgets.QTreeWidgetItem]:
        """Tree items whose text starts with ``prefix`` (tests and scripts)."""
        it = QtWidgets.QTreeWidgetItemIterator(self.tree)
        out = []
        while it.value() is not None:
            if it.value().text(0).startswith(prefix):
                out.append(it.value())
            it += 1
        return out
