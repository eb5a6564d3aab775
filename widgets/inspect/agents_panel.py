"""The Agents panel: every agent at the shown step in a sortable, filterable table (name, type, concepts, action,
goals reached, path left). A click asks to select the agent, a double-click to select it and centre the map on it, a Ctrl+click to add it to
(or remove it from) the comparison (the Compare panel).

It formats :class:`core.view.agent_rows.AgentRow` tuples and emits requests; the app decides what they do
(app/features/inspect/agents.py). Rows are updated in place while the agents stay the same, so sorting, the filter,
the scroll position and the highlighted row survive every new step.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from core.view.agent_rows import COLUMNS, AgentRow, row_matches
from widgets.layout_fence import fenced

AGENT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 2
NUMERIC = {"goals_reached", "path_left"}
#: the invalid index a table's rows hang from; Qt passes it explicitly, Python callers may leave it out
_ROOT = QtCore.QModelIndex()


class AgentTableModel(QtCore.QAbstractTableModel):
    """The rows shown, filtered and sorted here in Python (``visible``: indices into ``rows``, top to bottom).

    Why not a QSortFilterProxyModel: re-sorting 200 rows through it calls back into Python for every comparison
    (bench/agents.py times the refresh at 200 agents); sorting precomputed keys with ``sorted`` does not."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: tuple[AgentRow, ...] = ()
        self.visible: list[int] = []
        self.compare: tuple[int, ...] = ()     # agents marked for comparison (tinted rows)
        self.query = ""
        self.sort_column = 0
        self.sort_order = QtCore.Qt.SortOrder.AscendingOrder

    def _arrange(self) -> list[int]:
        attr = COLUMNS[self.sort_column][1]
        keep = [i for i, r in enumerate(self.rows) if row_matches(r, self.query)] if self.query.strip() \
            else list(range(len(self.rows)))
        keep.sort(key=lambda i: (self.rows[i].sort_key(attr), self.rows[i].index),
                  reverse=self.sort_order == QtCore.Qt.SortOrder.DescendingOrder)
        return keep

    def _rearrange(self) -> None:
        """Rows, filter or order changed: repaint in place when the same rows stay in the same places, else
        reset (the panel re-selects the selected agent afterwards)."""
        visible = self._arrange()
        if visible == self.visible:
            if visible:
                self.dataChanged.emit(self.index(0, 0), self.index(len(visible) - 1, len(COLUMNS) - 1))
            return
        self.beginResetModel()
        self.visible = visible
        self.endResetModel()

    def set_rows(self, rows: Sequence[AgentRow]) -> None:
        rows = tuple(rows)
        if rows == self.rows:
            return
        self.rows = rows
        self._rearrange()

    def set_query(self, text: str) -> None:
        self.query = text
        self._rearrange()

    def sort(self, column: int, order=QtCore.Qt.SortOrder.AscendingOrder) -> None:
        """Called by the table when a header is clicked."""
        self.sort_column, self.sort_order = column, order
        self._rearrange()

    def row_of(self, agent: int) -> int | None:
        """The shown row of ``agent`` (None: filtered out or unknown)."""
        for r, i in enumerate(self.visible):
            if self.rows[i].index == agent:
                return r
        return None

    def rowCount(self, parent: QtCore.QModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.visible)

    def columnCount(self, parent: QtCore.QModelIndex = _ROOT) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == QtCore.Qt.Orientation.Horizontal and role == QtCore.Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        if orientation == QtCore.Qt.Orientation.Horizontal and role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return {"goals_reached": "Goals reached so far", "path_left": "Cells left on the planned path to the "
                    "current goal", "action": "Action decided at the shown step ('forced': set by an override; "
                    "'last step': at the newest step, whose own action is not decided yet)"
                    }.get(COLUMNS[section][1])
        return None

    def data(self, index: QtCore.QModelIndex, role=QtCore.Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.visible):
            return None
        row = self.rows[self.visible[index.row()]]
        attr = COLUMNS[index.column()][1]
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            value = getattr(row, attr)
            if attr == "action":
                return value + (" (forced)" if row.forced else "") + (" (last step)" if row.pending else "")
            return value if attr in NUMERIC else str(value)
        if role == AGENT_ROLE:
            return row.index
        if role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return (f"{row.name}: {row.kind.lower()} ({row.detailed}) at {row.position}"
                    + (f", concepts {row.concepts}" if row.concepts else ""))
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and attr in NUMERIC:
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        if role == QtCore.Qt.ItemDataRole.BackgroundRole and row.index in self.compare:
            return QtGui.QBrush(QtGui.QColor(0, 229, 255, 60))
        if role == QtCore.Qt.ItemDataRole.ForegroundRole and attr == "action" and row.forced:
            return QtGui.QBrush(QtGui.QColor(200, 60, 200))
        return None


class AgentsPanel(QtWidgets.QWidget):
    """See the module docstring."""

    agentClicked = QtCore.Signal(int)      # select this agent
    agentActivated = QtCore.Signal(int)    # select it and centre the map on it
    compareChanged = QtCore.Signal(tuple)  # Ctrl+click added or removed an agent: the agents to compare
    shown = QtCore.Signal()                # became visible (rows are not refreshed while hidden)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        self.search = QtWidgets.QLineEdit()
        self.search.setObjectName("agentsFilter")
        self.search.setPlaceholderText("Filter: name, type, concept, action (e.g. car stop)")
        self.search.setClearButtonEnabled(True)
        lay.addWidget(self.search)
        self.model = AgentTableModel(self)
        self.table = QtWidgets.QTableView()
        self.table.setObjectName("agentsTable")
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, QtCore.Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for col, width in enumerate((84, 72, 84, 58, 44, 50)):
            self.table.setColumnWidth(col, width)
        lay.addWidget(self.table)
        self.count = QtWidgets.QLabel("")
        lay.addWidget(fenced(self.count))   # "… agents at step k" changes every step: no main-window re-layout
        self.search.textChanged.connect(self._on_filter)
        self.model.modelReset.connect(self._on_reset)   # re-sorted or re-filtered: the highlight follows the agent
        self.table.clicked.connect(self._on_clicked)
        self.table.viewport().installEventFilter(self)
        self._press_modifiers = QtCore.Qt.KeyboardModifier.NoModifier
        self.table.doubleClicked.connect(lambda ix: self.agentActivated.emit(self._agent_of(ix)))
        self._selected: int | None = None
        self._step: int | None = None

    def showEvent(self, ev: QtGui.QShowEvent) -> None:  # noqa: N802 (Qt name)
        super().showEvent(ev)
        self.shown.emit()

    # ---- content --------------------------------------------------------------------------------------------
    def set_rows(self, rows: Sequence[AgentRow], step: int | None = None) -> None:
        """Show these rows (the agents at state ``step``); the highlighted row follows the selection."""
        self._step = step
        self.model.set_rows(rows)
        self.set_selected(self._selected)
        self._update_count()

    def clear(self) -> None:
        self.set_rows((), None)

    def set_selected(self, agent: int | None) -> None:
        """Highlight ``agent``'s row (None: no row) and scroll to it; emits nothing."""
        self._selected = agent
        sel = self.table.selectionModel()
        row = self.model.row_of(agent) if agent is not None else None
        if row is None:
            sel.clearSelection()
            return
        if sel.isRowSelected(row, QtCore.QModelIndex()):
            return
        ix = self.model.index(row, 0)
        sel.select(ix, QtCore.QItemSelectionModel.SelectionFlag.ClearAndSelect
                   | QtCore.QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(ix)

    def shown_agents(self) -> list[int]:
        """Agent indices of the rows shown, top to bottom (filtered and sorted)."""
        return [self.model.rows[i].index for i in self.model.visible]

    def row_rect(self, agent: int) -> QtCore.QRect:
        """Viewport rectangle of ``agent``'s row (its Name cell); tests click there."""
        ix = self.model.index(self.model.row_of(agent), 0)
        self.table.scrollTo(ix)
        return self.table.visualRect(ix)

    # ---- user ------------------------------------------------------------------------------------------------
    def _agent_of(self, ix: QtCore.QModelIndex) -> int:
        return int(self.model.index(ix.row(), 0).data(AGENT_ROLE))

    def eventFilter(self, obj: QtCore.QObject, ev: QtCore.QEvent) -> bool:  # noqa: N802 (Qt name)
        if ev.type() == QtCore.QEvent.Type.MouseButtonPress:
            self._press_modifiers = ev.modifiers()
        return False

    def _on_clicked(self, ix: QtCore.QModelIndex) -> None:
        """A click selects; Ctrl+click adds the agent to (or removes it from) the comparison instead."""
        agent = self._agent_of(ix)
        if not self._press_modifiers & QtCore.Qt.KeyboardModifier.ControlModifier:
            self.agentClicked.emit(agent)
            return
        compare = [a for a in self.model.compare if a != agent]
        if len(compare) == len(self.model.compare):
            compare.append(agent)
        self.set_compare(compare)
        self._on_reset()                 # the highlighted row stays the selected agent's
        self.compareChanged.emit(tuple(compare))

    def set_compare(self, agents: Sequence[int]) -> None:
        """The agents marked for comparison (their rows are tinted); emits nothing."""
        self.model.compare = tuple(agents)
        if self.model.rowCount():
            self.model.dataChanged.emit(self.model.index(0, 0),
                                        self.model.index(self.model.rowCount() - 1, len(COLUMNS) - 1))

    def _on_filter(self, text: str) -> None:
        self.model.set_query(text)
        self.set_selected(self._selected)
        self._update_count()

    def _on_reset(self) -> None:
        sel = self._selected
        self._selected = None      # set_selected re-selects even if the same row number is still selected
        self.set_selected(sel)

    def _update_count(self) -> None:
        total, shown = len(self.model.rows), self.model.rowCount()
        where = f" at step {self._step}" if self._step is not None else ""
        self.count.setText(f"{shown} of {total} agents{where}" if shown != total else f"{total} agents{where}")
