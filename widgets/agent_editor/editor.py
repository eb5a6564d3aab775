"""The agent editor dock: a table of the project's agents with tabs per agent set (train/val/test for SPF/VAP
modes), row operations, a multi-select edit row, start/goal picking and Apply.

Why a plain view: it shows rows it is given (:meth:`AgentEditor.show_set`) and says what the user asked for through
signals; the controller (app/features/agent_editor/controller.py) turns each request into an undoable command on the
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
from core.base.codes import Kind
from widgets.choice_dialog import ok_cancel_buttons

Qt = QtCore.Qt
_ERROR_BG = QtGui.QColor(255, 205, 210)
_WARN_BG = QtGui.QColor(255, 236, 179)
FIXED = ("#", "Name", "Type", "Priority")
# item flags computed once (an enum OR per cell made a 1000-agent refresh spend a third of its time in enum code)
_RO = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_RW = _RO | Qt.ItemFlag.ItemIsEditable
_CHECKABLE = _RO | Qt.ItemFlag.ItemIsUserCheckable
_OFF = Qt.ItemFlag.ItemIsSelectable
_ON, _UNSET = Qt.CheckState.Checked, Qt.CheckState.Unchecked
_DRAG = Qt.ItemFlag.ItemIsDragEnabled
#: what a dragged selection of rows carries: the model it came from and the rows ("<model id>:0,3,4")
ROWS_MIME = "application/x-logicity-agent-rows"
#: the invalid index a table's rows hang from; Qt passes it explicitly, Python callers may leave it out
_ROOT = QtCore.QModelIndex()


def cell_text(cell: tuple[int, int] | None) -> str:
    return "random" if cell is None else f"({cell[0]}, {cell[1]})"


class AgentEditor(QtWidgets.QWidget):
    """See the module docstring. Rows in signals are table rows = positions in the agent set."""

    tabChanged = QtCore.Signal(str)
    addRequested = QtCore.Signal(object)                 # Kind
    duplicateRequested = QtCore.Signal(list)
    deleteRequested = QtCore.Signal(list)
    moveRequested = QtCore.Signal(list, int)             # rows, delta
    dropRequested = QtCore.Signal(list, int)             # rows dragged, the row they are dropped before
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
        self._headers: list[str] = []
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

        self.model = AgentTableModel(self)
        self.model.edited.connect(self._on_edit, Qt.ConnectionType.QueuedConnection)
        self.table = QtWidgets.QTableView()
        self.table.setModel(self.model)
        self.table.setObjectName("agentTable")
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.DoubleClicked
                                   | QtWidgets.QAbstractItemView.EditTrigger.EditKeyPressed
                                   | QtWidgets.QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.table.selectionModel().selectionChanged.connect(lambda *a: self._on_selection())
        # drag rows to reorder them (like the ▲/▼ buttons): the model turns a drop into dropRequested, queued so
        # the set is replaced after the view's drop handling has returned
        self.table.setDragEnabled(True)
        self.table.setAcceptDrops(True)
        self.table.setDropIndicatorShown(True)
        self.table.setDragDropOverwriteMode(False)
        # DragDrop, not InternalMove: the mime data names this model (a drop from elsewhere is refused by it), and
        # InternalMove would refuse every drop event Qt did not start itself (tests deliver drops as events)
        self.table.setDragDropMode(QtWidgets.QAbstractItemView.DragDropMode.DragDrop)
        self.table.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.model.rowsDropped.connect(lambda rows, before: self.dropRequested.emit(rows, before),
                                       Qt.ConnectionType.QueuedConnection)
        self._eat_release = False
        self.table.viewport().installEventFilter(self)   # check boxes of a multi-selection (see eventFilter)
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
        headers = list(FIXED) + list(self.concepts) + ["Start", "Goal"]
        self._filling = True
        try:
            self.model.set_rows(self.agents, self.concepts, self.valid, issues or {})
            if headers != self._headers:     # measuring every cell costs more than the fill for big sets
                self._headers = headers
                self.table.resizeColumnsToContents()
                fm = self.table.fontMetrics()
                self.table.setColumnWidth(1, max(self.table.columnWidth(1), fm.horizontalAdvance("Pedestrian_000") + 12))
                for col in (len(headers) - 2, len(headers) - 1):     # Start, Goal: room for "(000, 000)"
                    self.table.setColumnWidth(col, max(self.table.columnWidth(col),
                                                       fm.horizontalAdvance("(000, 000)") + 12))
        finally:
            self._filling = False
        self.select_rows([r for r in keep if 0 <= r < len(self.agents)])
        self._update_buttons()

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
        sm.blockSignals(True)
        try:
            sm.clearSelection()
            for r in rows:
                sm.select(self.model.index(r, 0), QtCore.QItemSelectionModel.SelectionFlag.Select
                          | QtCore.QItemSelectionModel.SelectionFlag.Rows)
            if rows:
                sm.setCurrentIndex(self.model.index(rows[-1], 1), QtCore.QItemSelectionModel.SelectionFlag.NoUpdate)
        finally:
            sm.blockSignals(False)
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

    def _on_edit(self, r: int, col: int, value: object) -> None:
        """An edit the model received (queued: the table is refilled by the command it leads to, never inside the
        view's own commit)."""
        if not 0 <= r < len(self.agents):
            return
        a = self.agents[r]
        if col == 1:
            if str(value).strip() != a.name:
                self.nameEdited.emit(r, str(value))
        elif col == 3:
            try:
                number = int(str(value).strip())
            except ValueError:
                return
            if number != a.priority:
                self.priorityEdited.emit(self._rows_for(r), number)
        elif len(FIXED) <= col < len(FIXED) + len(self.concepts):
            concept = self.concepts[col - len(FIXED)]
            on = bool(value)
            if on != (concept in a.concepts):
                self.conceptEdited.emit(self._rows_for(r), concept, on)

    def check_rect(self, row: int, col: int) -> QtCore.QRect:
        """Where the style draws the check box of a cell (viewport coordinates)."""
        view = self.table
        index = self.model.index(row, col)
        opt = QtWidgets.QStyleOptionViewItem()
        view.initViewItemOption(opt)
        opt.rect = view.visualRect(index)
        opt.features |= QtWidgets.QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
        return view.style().subElementRect(QtWidgets.QStyle.SubElement.SE_ItemViewItemCheckIndicator, opt, view)

    def eventFilter(self, obj: QtCore.QObject, ev: QtCore.QEvent) -> bool:  # noqa: N802 (Qt name)
        """A click on a concept check box ticks it on every selected row when its row is selected (the plain
        item-view click would first reduce the selection to that row), else on that row only."""
        table = getattr(self, "table", None)   # gone while a closed editor is garbage-collected (Qt still calls)
        if table is not None and obj is table.viewport():
            kind = ev.type()
            if kind in (QtCore.QEvent.Type.MouseButtonPress, QtCore.QEvent.Type.MouseButtonDblClick) and \
                    ev.button() == Qt.MouseButton.LeftButton:
                pos = ev.position().toPoint()
                index = self.table.indexAt(pos)
                concept = self.model._concept(index.column()) if index.isValid() else None
                if concept is not None and self.model.flags(index) & Qt.ItemFlag.ItemIsUserCheckable and \
                        self.check_rect(index.row(), index.column()).contains(pos):
                    self._eat_release = True
                    if kind == QtCore.QEvent.Type.MouseButtonPress:
                        a = self.agents[index.row()]
                        self.conceptEdited.emit(self._rows_for(index.row()), concept, concept not in a.concepts)
                    return True
            elif kind == QtCore.QEvent.Type.MouseButtonRelease and self._eat_release:
                self._eat_release = False
                return True
        return super().eventFilter(obj, ev)

    def _on_priority_box(self) -> None:
        rows = self.selected_rows()
        if self.priority.value() < 0:
            return
        if rows and any(self.agents[r].priority != self.priority.value() for r in rows if r < len(self.agents)):
            self.priorityEdited.emit(rows, self.priority.value())

    def _on_tab(self, index: int) -> None:
        if not self._filling and index >= 0:
            self.tabChanged.emit(self.current_tab())


class AgentTableModel(QtCore.QAbstractTableModel):
    """The table's rows as a model: cells are computed when the view paints them, so a refill of a 1000-agent set
    costs a model reset, not 13,000 items. ``edited(row, column, value)``: a name, priority or check box the user
    changed (the data itself changes only when the controller shows the edited set)."""

    edited = QtCore.Signal(int, int, object)
    rowsDropped = QtCore.Signal(list, int)     # rows dragged, the row they are dropped before

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.agents: tuple[AgentSpec, ...] = ()
        self.concepts: tuple[str, ...] = ()
        self.valid: dict[Kind, tuple[str, ...]] = {}
        self.issues: dict[int, list[tuple[str, str]]] = {}

    def set_rows(self, agents: Sequence[AgentSpec], concepts: Sequence[str], valid: dict[Kind, tuple[str, ...]],
                 issues: dict[int, list[tuple[str, str]]]) -> None:
        self.beginResetModel()
        self.agents, self.concepts, self.valid, self.issues = tuple(agents), tuple(concepts), dict(valid), issues
        self.endResetModel()

    def rowCount(self, parent: QtCore.QModelIndex = _ROOT) -> int:  # noqa: N802 (Qt name)
        return 0 if parent.isValid() else len(self.agents)

    def columnCount(self, parent: QtCore.QModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(FIXED) + len(self.concepts) + 2

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            names = list(FIXED) + list(self.concepts) + ["Start", "Goal"]
            return names[section] if 0 <= section < len(names) else None
        return None

    def _concept(self, col: int) -> str | None:
        j = col - len(FIXED)
        return self.concepts[j] if 0 <= j < len(self.concepts) else None

    def _checkable(self, a: AgentSpec, concept: str) -> bool:
        # an invalid concept that is set stays visible (and is an error) so it can be unticked
        return concept in self.valid.get(a.kind, ()) or concept in a.concepts

    def flags(self, index: QtCore.QModelIndex):
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled   # rows are dropped between rows (never onto one)
        a, col = self.agents[index.row()], index.column()
        concept = self._concept(col)
        if concept is not None:
            return (_CHECKABLE if self._checkable(a, concept) else _OFF) | _DRAG
        if col == 1 or (col == 3 and a.kind is Kind.CAR):
            return _RW | _DRAG
        return _RO | _DRAG

    # ---- drag and drop: rows are reordered by the controller's command, never by the model itself ---------------
    def supportedDropActions(self):  # noqa: N802 (Qt name)
        return Qt.DropAction.MoveAction

    def supportedDragActions(self):  # noqa: N802 (Qt name)
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:  # noqa: N802 (Qt name)
        return [ROWS_MIME]

    def mimeData(self, indexes) -> QtCore.QMimeData:  # noqa: N802 (Qt name)
        data = QtCore.QMimeData()
        rows = sorted({i.row() for i in indexes if i.isValid()})
        data.setData(ROWS_MIME, QtCore.QByteArray(f"{id(self)}:{','.join(map(str, rows))}".encode()))
        return data

    def dropMimeData(self, data, action, row: int, column: int, parent) -> bool:  # noqa: N802 (Qt name)
        """A drop between rows (``row``) or onto one (``parent``, dropped before it): ``rowsDropped`` asks the
        controller for the move; False, so the view removes nothing itself."""
        if action != Qt.DropAction.MoveAction or not data.hasFormat(ROWS_MIME):
            return False
        try:
            source, _, text = bytes(data.data(ROWS_MIME).data()).decode().partition(":")
            rows = [int(r) for r in text.split(",") if r]
        except ValueError:
            return False
        if source != str(id(self)):      # rows of another table (another window, another program)
            return False
        rows = [r for r in rows if 0 <= r < len(self.agents)]
        before = row if row >= 0 else (parent.row() if parent.isValid() else len(self.agents))
        if rows:
            self.rowsDropped.emit(rows, before)
        return False

    def data(self, index: QtCore.QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r, col = index.row(), index.column()
        a = self.agents[r]
        concept = self._concept(col)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if concept is not None:
                return None
            n = len(FIXED) + len(self.concepts)
            return {0: str(r + 1), 1: a.name, 2: a.kind.label, 3: str(a.priority), n: cell_text(a.start),
                    n + 1: cell_text(a.goal)}.get(col)
        if role == Qt.ItemDataRole.CheckStateRole and concept is not None and self._checkable(a, concept):
            return _ON if concept in a.concepts else _UNSET
        issues = self.issues.get(r)
        if role == Qt.ItemDataRole.BackgroundRole and issues:
            return _ERROR_BG if any(s == "error" for s, _ in issues) else _WARN_BG
        if role == Qt.ItemDataRole.ToolTipRole:
            if issues and col in (0, 1):
                return "\n".join(f"{s}: {m}" for s, m in issues)
            if concept is not None and not self._checkable(a, concept):
                return f"{concept!r} is not a concept of {a.kind.label.lower()}s"
        return None

    def setData(self, index: QtCore.QModelIndex, value, role: int = Qt.ItemDataRole.EditRole) -> bool:  # noqa: N802
        if not index.isValid():
            return False
        if role == Qt.ItemDataRole.CheckStateRole and self._concept(index.column()) is not None:
            state = value.value if hasattr(value, "value") else value
            self.edited.emit(index.row(), index.column(), int(state) == int(_ON.value))
            return True
        if role == Qt.ItemDataRole.EditRole and index.column() in (1, 3):
            self.edited.emit(index.row(), index.column(), value)
            return True
        return False


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
        buttons = ok_cancel_buttons(self)
        lay.addRow(buttons)

    def counts(self) -> dict[Kind, dict[str, int]]:
        out: dict[Kind, dict[str, int]] = {}
        for (kind, concept), sb in self.spins.items():
            if sb.value():
                out.setdefault(kind, {})[concept] = sb.value()
        return out
