"""The Agents panel: every agent at the shown step in a sortable, filterable table (name, type, concepts, action,
goals reached, path left). A click asks to select the agent, a double-click to select it and centre the map on it.

It formats :class:`core.view.agent_rows.AgentRow` tuples and emits requests; the app decides what they do
(app/controllers/agents.py). Rows are updated in place while the agents stay the same, so sorting, the filter,
the scroll position and the highlighted row survive every new step.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from core.view.agent_rows import COLUMNS, AgentRow, row_matches

SORT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1
AGENT_ROLE = QtCore.Qt.ItemDataRole.UserRole + 2
NUMERIC = {"goals_reached", "path_left"}


class AgentTableModel(QtCore.QAbstractTableModel):
    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: tuple[AgentRow, ...] = ()

    def set_rows(self, rows: Sequence[AgentRow]) -> None:
        rows = tuple(rows)
        if [r.name for r in rows] == [r.name for r in self.rows]:
            self.rows = rows
            if rows:
                self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, len(COLUMNS) - 1))
            return
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == QtCore.Qt.Orientation.Horizontal and role == QtCore.Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        if orientation == QtCore.Qt.Orientation.Horizontal and role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return {"goals_reached": "Goals reached so far", "path_left": "Cells left on the planned path to the "
                    "current goal", "action": "Action decided at the shown step ('forced': set by an override)"
                    }.get(COLUMNS[section][1])
        return None

    def data(self, index: QtCore.QModelIndex, role=QtCore.Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        attr = COLUMNS[index.column()][1]
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            value = getattr(row, attr)
            if attr == "action" and row.forced:
                return f"{value} (forced)"
            return value if attr in NUMERIC else str(value)
        if role == SORT_ROLE:
            return row.sort_key(attr)
        if role == AGENT_ROLE:
            return row.index
        if role == QtCore.Qt.ItemDataRole.ToolTipRole:
            return (f"{row.name}: {row.kind.lower()} ({row.detailed}) at {row.position}"
                    + (f", concepts {row.concepts}" if row.concepts else ""))
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and attr in NUMERIC:
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        if role == QtCore.Qt.ItemDataRole.ForegroundRole and attr == "action" and row.forced:
            return QtGui.QBrush(QtGui.QColor(200, 60, 200))
        return None


class AgentFilter(QtCore.QSortFilterProxyModel):
    """Sorts by each column's sort key and keeps the rows matching the filter text (core.view.agent_rows)."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.query = ""
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(True)

    def set_query(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):      # Qt >= 6.9 (invalidateFilter is deprecated there)
            self.beginFilterChange()
            self.query = text
            self.endFilterChange(QtCore.QSortFilterProxyModel.Direction.Rows)
        else:
            self.query = text
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: QtCore.QModelIndex) -> bool:  # noqa: N802
        model = self.sourceModel()
        return row_matches(model.rows[source_row], self.query)


class AgentsPanel(QtWidgets.QWidget):
    """See the module docstring."""

    agentClicked = QtCore.Signal(int)      # select this agent
    agentActivated = QtCore.Signal(int)    # select it and centre the map on it
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
        self.proxy = AgentFilter(self)
        self.proxy.setSourceModel(self.model)
        self.table = QtWidgets.QTableView()
        self.table.setObjectName("agentsTable")
        self.table.setModel(self.proxy)
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
        lay.addWidget(self.count)
        self.search.textChanged.connect(self._on_filter)
        self.table.clicked.connect(lambda ix: self.agentClicked.emit(self._agent_of(ix)))
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
        src = next((i for i, r in enumerate(self.model.rows) if r.index == agent), None) if agent is not None \
            else None
        ix = self.proxy.mapFromSource(self.model.index(src, 0)) if src is not None else QtCore.QModelIndex()
        if not ix.isValid():
            sel.clearSelection()
            return
        if sel.isRowSelected(ix.row(), QtCore.QModelIndex()):
            return
        sel.select(ix, QtCore.QItemSelectionModel.SelectionFlag.ClearAndSelect
                   | QtCore.QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(ix)

    def shown_agents(self) -> list[int]:
        """Agent indices of the rows shown, top to bottom (filtered and sorted)."""
        return [self.proxy.index(r, 0).data(AGENT_ROLE) for r in range(self.proxy.rowCount())]

    def row_rect(self, agent: int) -> QtCore.QRect:
        """Viewport rectangle of ``agent``'s row (its Name cell); tests click there."""
        src = next(i for i, r in enumerate(self.model.rows) if r.index == agent)
        ix = self.proxy.mapFromSource(self.model.index(src, 0))
        self.table.scrollTo(ix)
        return self.table.visualRect(ix)

    # ---- user ------------------------------------------------------------------------------------------------
    def _agent_of(self, ix: QtCore.QModelIndex) -> int:
        return int(self.proxy.index(ix.row(), 0).data(AGENT_ROLE))

    def _on_filter(self, text: str) -> None:
        self.proxy.set_query(text)
        self.set_selected(self._selected)
        self._update_count()

    def _update_count(self) -> None:
        total, shown = self.model.rowCount(), self.proxy.rowCount()
        where = f" at step {self._step}" if self._step is not None else ""
        self.count.setText(f"{shown} of {total} agents{where}" if shown != total else f"{total} agents{where}")
