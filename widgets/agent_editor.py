"""The agent editor dock: a table of the project's agents with tabs per agent set (train/val/test for SPF/VAP
modes), row operations, a multi-select edit row, start/goal picking and Apply.

Why a plain view: it shows rows it is given (:meth:`AgentEditor.show_set`) and says what the user asked for through
signals; the controller (app/controllers/agent_editor.py) turns each request into an undoable command on the
session. So the table never changes the data itself: an edit comes back as the next ``show_set`` — after undo too.

Table columns: #, Name (editable: ``Car_3``), Type, Priority (editable), one check-box column per concept the
ontology tests (only the concepts valid for the row's type can be ticked; the others are blank and disabled),
Start, Goal (a cell or "random"). Editing a cell of a selected row edits every selected row (multi-select edit),
like a spreadsheet's fill; the form under the table does the same for type, priority and concepts.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from core.agents.spec import AgentSpec
from core.codes import Kind

Qt = QtCore.Qt
_ERROR_BG = QtGui.QColor(255, 205, 210)
_WARN_BG = QtGui.QColor(255, 236, 179)
FIXED = ("#", "Name", "Type", "Priority")


def cell_text(cell: tuple[int, int] | None) -> str:
    return "random" if cell is None else f"({cell[0]}, {cell[1]})"


class AgentEditor(QtWidgets.QWidget):
    """See the module docstring. Rows in signals are table rows = positions in the agent set."""

    tabChanged = QtCore.Signal(str)
    addRequested = QtCore.Signal(object)                 # Kind
    duplicateRequested = QtCore.Signal(list)
    deleteRequested = QtCore.Signal(list)
    moveRequested = QtCore.Signal(list, int)             # rows, delta
    nameEdited = QtCore.Signal(int, str)
    priorityEdited = QtCore.Signal(list, int)
    kindEdited = QtCore.Signal(list, object)             # rows, Kind
    conceptEdited = QtCore.Signal(list, str, bool)       # rows, concept, ticked
    pickRequested = QtCore.Signal(str)                   # "start" or "goal"
    randomRequested = QtCore.Signal(list, str)           # rows, "start" / "goal" / "both"
    generateRequested = QtCore.Signal()
    importRequested = QtCore.Signal()
    exportRequested = QtCore.Signal()
    activateRequested = QtCore.Signal(str)               # simulate this tab's set
    applyRequested = QtCore.Signal(str)                  # "restart" or "branch"
    selectionChanged = QtCore.Signal(list)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.agents: tuple[AgentSpec, ...] = ()
        self.concepts: tuple[str, ...] = ()
        self.valid: dict[Kind, tuple[str, ...]] = {}
        self._filling = False
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)

        top = QtWidgets.QHBoxLayout()
        self.tabs = QtWidgets.QTabBar()
        self.tabs.setObjectName("agentSetTabs")
        self.tabs.setExpanding(False)
        self.tabs.currentChanged.connect(self._on_tab)
        top.addWidget(self.tabs, 1)
        self.activate = QtWidgets.QToolButton()
        self.activate.setText("Simulate this set")
        self.activate.setToolTip("Apply simulates this tab's agent set (the split SPF/VAP use for it is unchanged)")
        self.activate.clicked.connect(lambda: self.activateRequested.emit(self.current_tab()))
        top.addWidget(self.activate)
        lay.addLayout(top)

        bar = QtWidgets.QHBoxLayout()
        bar.setSpacing(2)

        def button(text: str, tip: str, slot) -> QtWidgets.QToolButton:
            b = QtWidgets.QToolButton()
            b.setText(text)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            bar.addWidget(b)
            return b

        self.add_car = button("+ Car", "Add a car (next free id)", lambda: self.addRequested.emit(Kind.CAR))
        self.add_ped = button("+ Pedestrian", "Add a pedestrian", lambda: self.addRequested.emit(Kind.PEDESTRIAN))
        self.dup = button("Duplicate", "Duplicate the selected agents (Ctrl+D)",
                          lambda: self.duplicateRequested.emit(self.selected_rows()))
        self.delete = button("Delete", "Delete the selected agents (Del)",
                             lambda: self.deleteRequested.emit(self.selected_rows()))
        self.up = button("▲", "Move the selected agents up (Alt+Up; order decides ties and the SPF ego)",
                         lambda: self.moveRequested.emit(self.selected_rows(), -1))
        self.down = button("▼", "Move the selected agents down (Alt+Down)",
                           lambda: self.moveRequested.emit(self.selected_rows(), 1))
        bar.addStretch(1)
        self.generate = button("Generate…", "Replace this set by a composition: counts per type and concept, seed",
                               self.generateRequested.emit)
        self.import_ = button("Import…", "Replace this set by an agent-set YAML (ours or the reference's)",
                              self.importRequested.emit)
        self.export = button("Export…", "Save this set as an agent-set YAML", self.exportRequested.emit)
        lay.addLayout(bar)

        self.table = QtWidgets.QTableWidget(0, 0)
        self.table.setObjectName("agentTable")
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.DoubleClicked
                                   | QtWidgets.QAbstractItemView.EditTrigger.EditKeyPressed
                                   | QtWidgets.QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.table.itemChanged.connect(self._on_item)
        self.table.itemSelectionChanged.connect(self._on_selection)
        lay.addWidget(self.table, 1)
        for key, slot in ((QtGui.QKeySequence.StandardKey.Delete,
                           lambda: self.deleteRequested.emit(self.selected_rows())),
                          ("Ctrl+D", lambda: self.duplicateRequested.emit(self.selected_rows())),
                          ("Alt+Up", lambda: self.moveRequested.emit(self.selected_rows(), -1)),
                          ("Alt+Down", lambda: self.moveRequested.emit(self.selected_rows(), 1))):
            sc = QtGui.QShortcut(QtGui.QKeySequence(key), self.table)
            sc.setContext(Qt.ShortcutContext.WidgetShortcut)
            sc.activated.connect(lambda slot=slot: self.selected_rows() and slot())

        form = QtWidgets.QHBoxLayout()
        form.setSpacing(4)
        self.kind_box = QtWidgets.QComboBox()
        self.kind_box.addItems(["Car", "Pedestrian"])
        self.kind_box.setToolTip("Type of the selected agents (a new type gets a new id; invalid concepts drop)")
        self.kind_box.activated.connect(lambda i: self.kindEdited.emit(
            self.selected_rows(), Kind.CAR if i == 0 else Kind.PEDESTRIAN))
        form.addWidget(self.kind_box)
        form.addWidget(QtWidgets.QLabel("Priority"))
        self.priority = QtWidgets.QSpinBox()
        self.priority.setRange(-1, 1_000_000)
        self.priority.setSpecialValueText("mixed")      # -1: the selected agents differ
        self.priority.setToolTip("Priority of the selected cars (smaller = higher; pedestrians are always 0)")
        self.priority.editingFinished.connect(self._on_priority_box)
        form.addWidget(self.priority)
        self.pick_start = QtWidgets.QPushButton("Start on map")
        self.pick_start.setToolTip("Click a cell on the map for the selected agent's start, then one for its goal "
                                   "(Esc: stop)")
        self.pick_start.clicked.connect(lambda: self.pickRequested.emit("start"))
        self.pick_goal = QtWidgets.QPushButton("Goal on map")
        self.pick_goal.setToolTip("Click a cell on the map for the selected agent's goal (Esc: stop)")
        self.pick_goal.clicked.connect(lambda: self.pickRequested.emit("goal"))
        self.random = QtWidgets.QPushButton("Random")
        self.random.setToolTip("Draw the selected agents' start and goal at random again (like the simulator)")
        self.random.clicked.connect(lambda: self.randomRequested.emit(self.selected_rows(), "both"))
        for w in (self.pick_start, self.pick_goal, self.random):
            form.addWidget(w)
        form.addStretch(1)
        lay.addLayout(form)

        self.provenance = QtWidgets.QLabel("")
        self.provenance.setObjectName("agentProvenance")
        self.provenance.setWordWrap(True)
        self.provenance.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.provenance)
        self.refusal = QtWidgets.QLabel("")
        self.refusal.setObjectName("agentApplyRefusal")
        self.refusal.setWordWrap(True)
        self.refusal.setStyleSheet("color: #c62828")
        self.refusal.setVisible(False)
        lay.addWidget(self.refusal)
        apply = QtWidgets.QHBoxLayout()
        self.apply_restart = QtWidgets.QPushButton("Apply from step 0")
        self.apply_restart.setObjectName("applyRestart")
        self.apply_restart.setToolTip("Re-simulate from step 0 with the edited city and agents (Ctrl+Return)")
        self.apply_restart.clicked.connect(lambda: self.applyRequested.emit("restart"))
        self.apply_branch = QtWidgets.QPushButton("Apply: branch here")
        self.apply_branch.setObjectName("applyBranch")
        self.apply_branch.setToolTip("Start a new recording from the shown step with the edited agents: recorded "
                                     "agents continue from where they are (Ctrl+Shift+Return)")
        self.apply_branch.clicked.connect(lambda: self.applyRequested.emit("branch"))
        apply.addWidget(self.apply_restart)
        apply.addWidget(self.apply_branch)
        lay.addLayout(apply)
        self._update_buttons()

    # ---- what the controller shows ----------------------------------------------------------------------------------
    def set_tabs(self, names: Sequence[str], current: str, active: str) -> None:
        """The tabs (agent sets); ``active`` (the simulated set) is marked ●."""
        self._filling = True
        try:
            while self.tabs.count() > len(names):
                self.tabs.removeTab(self.tabs.count() - 1)
            for i, name in enumerate(names):
                text = f"{name} ●" if name == active and len(names) > 1 else name
                if i < self.tabs.count():
                    self.tabs.setTabText(i, text)
                else:
                    self.tabs.addTab(text)
                self.tabs.setTabData(i, name)
                self.tabs.setTabToolTip(i, f"{name}: the set simulated by Apply" if name == active else name)
            if current in names:
                self.tabs.setCurrentIndex(list(names).index(current))
        finally:
            self._filling = False
        self.tabs.setVisible(len(names) > 1)
        self.activate.setVisible(len(names) > 1)
        self.activate.setEnabled(current != active)

    def current_tab(self) -> str:
        return str(self.tabs.tabData(self.tabs.currentIndex()) or "agents")

    def show_set(self, agents: Iterable[AgentSpec], concepts: Sequence[str], valid: dict[Kind, tuple[str, ...]],
                 issues: dict[int, list[tuple[str, str]]] | None = None, select: Sequence[int] | None = None) -> None:
        """Fill the table: ``concepts`` are the check-box columns, ``valid[kind]`` those a kind may tick, ``issues``
        row → [(severity, message)] (coloured, in the tooltip), ``select`` the rows to select (None: keep)."""
        keep = self.selected_rows() if select is None else list(select)
        self.agents = tuple(agents)
        self.concepts = tuple(concepts)
        self.valid = dict(valid)
        issues = issues or {}
        headers = list(FIXED) + list(self.concepts) + ["Start", "Goal"]
        t = self.table
        self._filling = True
        try:
            t.blockSignals(True)
            t.clearContents()
            t.setColumnCount(len(headers))
            t.setHorizontalHeaderLabels(headers)
            t.setRowCount(len(self.agents))
            for r, a in enumerate(self.agents):
                row_issues = issues.get(r, [])
                bg = (_ERROR_BG if any(s == "error" for s, _ in row_issues) else _WARN_BG if row_issues else None)
                tip = "\n".join(f"{s}: {m}" for s, m in row_issues)
                items = [self._item(str(r + 1), False), self._item(a.name, True), self._item(a.kind.label, False),
                         self._item(str(a.priority), a.kind is Kind.CAR)]
                for c in self.concepts:
                    ok = c in self.valid.get(a.kind, ())
                    it = QtWidgets.QTableWidgetItem()
                    if ok or c in a.concepts:     # an invalid concept that is set stays visible (and is an error)
                        it.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                                    | Qt.ItemFlag.ItemIsUserCheckable)
                        it.setCheckState(Qt.CheckState.Checked if c in a.concepts else Qt.CheckState.Unchecked)
                    else:
                        it.setFlags(Qt.ItemFlag.ItemIsSelectable)
                        it.setToolTip(f"{c!r} is not a concept of {a.kind.label.lower()}s")
                    items.append(it)
                items += [self._item(cell_text(a.start), False), self._item(cell_text(a.goal), False)]
                for col, it in enumerate(items):
                    if bg is not None:
                        it.setBackground(bg)
                    if tip and col in (0, 1):
                        it.setToolTip(tip)
                    t.setItem(r, col, it)
            t.resizeColumnsToContents()
        finally:
            t.blockSignals(False)
            self._filling = False
        self.select_rows([r for r in keep if 0 <= r < len(self.agents)])
        self._update_buttons()

    @staticmethod
    def _item(text: str, editable: bool) -> QtWidgets.QTableWidgetItem:
        it = QtWidgets.QTableWidgetItem(text)
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if editable:
            flags |= Qt.ItemFlag.ItemIsEditable
        it.setFlags(flags)
        return it

    def set_provenance(self, text: str, pending: bool) -> None:
        self.provenance.setText(text)
        self.provenance.setStyleSheet("color: #e65100" if pending else "")

    def set_refusal(self, text: str | None) -> None:
        self.refusal.setText(f"Cannot apply: {text}" if text else "")
        self.refusal.setVisible(bool(text))

    # ---- selection ------------------------------------------------------------------------------------------------
    def selected_rows(self) -> list[int]:
        return sorted({i.row() for i in self.table.selectionModel().selectedRows()})

    def select_rows(self, rows: Sequence[int]) -> None:
        t = self.table
        sm = t.selectionModel()
        t.blockSignals(True)
        sm.blockSignals(True)
        try:
            sm.clearSelection()
            for r in rows:
                sm.select(t.model().index(r, 0), QtCore.QItemSelectionModel.SelectionFlag.Select
                          | QtCore.QItemSelectionModel.SelectionFlag.Rows)
            if rows:
                sm.setCurrentIndex(t.model().index(rows[-1], 1), QtCore.QItemSelectionModel.SelectionFlag.NoUpdate)
        finally:
            sm.blockSignals(False)
            t.blockSignals(False)
        t.viewport().update()
        self._on_selection()

    def _on_selection(self) -> None:
        if self._filling:
            return
        rows = self.selected_rows()
        self._update_buttons()
        if rows:
            kinds = {self.agents[r].kind for r in rows if r < len(self.agents)}
            self.kind_box.blockSignals(True)
            self.kind_box.setCurrentIndex(0 if kinds == {Kind.CAR} else 1 if kinds == {Kind.PEDESTRIAN} else -1)
            self.kind_box.blockSignals(False)
            prios = {self.agents[r].priority for r in rows if r < len(self.agents)}
            self.priority.blockSignals(True)
            self.priority.setValue(prios.pop() if len(prios) == 1 else -1)
            self.priority.blockSignals(False)
        self.selectionChanged.emit(rows)

    def _update_buttons(self) -> None:
        rows = self.selected_rows()
        one = len(rows) == 1
        for w in (self.dup, self.delete, self.up, self.down, self.kind_box, self.priority, self.random):
            w.setEnabled(bool(rows))
        self.pick_start.setEnabled(one)
        self.pick_goal.setEnabled(one)

    # ---- edits in the table ----------------------------------------------------------------------------------------
    def _rows_for(self, row: int) -> list[int]:
        """An edit of a selected row applies to every selected row; of another row, to that row only."""
        rows = self.selected_rows()
        return rows if row in rows else [row]

    def _on_item(self, it: QtWidgets.QTableWidgetItem) -> None:
        if self._filling:
            return
        r, col = it.row(), it.column()
        if not 0 <= r < len(self.agents):
            return
        a = self.agents[r]
        if col == 1:
            if it.text() != a.name:
                self.nameEdited.emit(r, it.text())
        elif col == 3:
            try:
                value = int(it.text())
            except ValueError:
                value = None
            if value is None or value == a.priority:
                self._restore(it, str(a.priority))
            else:
                self.priorityEdited.emit(self._rows_for(r), value)
        elif len(FIXED) <= col < len(FIXED) + len(self.concepts):
            concept = self.concepts[col - len(FIXED)]
            on = it.checkState() == Qt.CheckState.Checked
            if on != (concept in a.concepts):
                self.conceptEdited.emit(self._rows_for(r), concept, on)

    def _restore(self, it: QtWidgets.QTableWidgetItem, text: str) -> None:
        self._filling = True
        try:
            it.setText(text)
        finally:
            self._filling = False

    def _on_priority_box(self) -> None:
        rows = self.selected_rows()
        if self.priority.value() < 0:
            return
        if rows and any(self.agents[r].priority != self.priority.value() for r in rows if r < len(self.agents)):
            self.priorityEdited.emit(rows, self.priority.value())

    def _on_tab(self, index: int) -> None:
        if not self._filling and index >= 0:
            self.tabChanged.emit(self.current_tab())


class GenerateDialog(QtWidgets.QDialog):
    """Counts per type and concept (``normal`` = no concept) and a seed for the composition generator."""

    def __init__(self, valid: dict[Kind, tuple[str, ...]], current: dict[Kind, dict[str, int]], seed: int = 0,
                 parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Generate agents")
        lay = QtWidgets.QFormLayout(self)
        self.spins: dict[tuple[Kind, str], QtWidgets.QSpinBox] = {}
        for kind in (Kind.CAR, Kind.PEDESTRIAN):
            for concept in ("normal", *valid.get(kind, ())):
                sb = QtWidgets.QSpinBox()
                sb.setRange(0, 1000)
                sb.setValue(int(current.get(kind, {}).get(concept, 0)))
                lay.addRow(f"{kind.label} — {concept}", sb)
                self.spins[(kind, concept)] = sb
        self.seed = QtWidgets.QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setValue(int(seed))
        lay.addRow("Seed (order, car priorities)", self.seed)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addRow(buttons)

    def counts(self) -> dict[Kind, dict[str, int]]:
        out: dict[Kind, dict[str, int]] = {}
        for (kind, concept), sb in self.spins.items():
            if sb.value():
                out.setdefault(kind, {})[concept] = sb.value()
        return out
