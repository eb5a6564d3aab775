"""The Compare panel: the selected agent and the agents added to the comparison (Ctrl+click in the Agents panel),
side by side at the shown step; the rows where they differ are bold. It formats
:class:`core.view.compare.CompareRow` tuples; a click on an agent's column header asks to select it."""
from __future__ import annotations

from typing import Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from core.view.compare import CompareRow

EMPTY_TEXT = "Ctrl+click agents in the Agents panel to compare them with the selected agent"


class AgentCompare(QtWidgets.QWidget):
    agentRequested = QtCore.Signal(int)     # a click on an agent's column header: select it
    clearRequested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        self.title = QtWidgets.QLabel(EMPTY_TEXT)
        self.title.setWordWrap(True)
        lay.addWidget(self.title)
        self.table = QtWidgets.QTableWidget(0, 0)
        self.table.setObjectName("compareTable")
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
        self.table.horizontalHeader().setSectionResizeMode(QtWidgets.QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.horizontalHeader().sectionClicked.connect(
            lambda col: self.agentRequested.emit(self.agents[col]) if 0 <= col < len(self.agents) else None)
        lay.addWidget(self.table)
        self.clear_btn = QtWidgets.QPushButton("Clear comparison")
        self.clear_btn.clicked.connect(self.clearRequested.emit)
        lay.addWidget(self.clear_btn, alignment=QtCore.Qt.AlignmentFlag.AlignRight)
        self.agents: tuple[int, ...] = ()
        self.rows: tuple[CompareRow, ...] = ()

    def set_comparison(self, agents: Sequence[int], names: Sequence[str], rows: Sequence[CompareRow],
                       step: int | None) -> None:
        """Columns = ``agents`` (named ``names``), rows = facts; fewer than two agents: the hint only."""
        self.agents, self.rows = tuple(agents), tuple(rows)
        t = self.table
        if len(self.agents) < 2:
            t.setRowCount(0)
            t.setColumnCount(0)
            self.title.setText(EMPTY_TEXT)
            self.clear_btn.setEnabled(bool(self.agents))
            return
        self.title.setText(f"{len(self.agents)} agents at step {step} — rows where they differ are bold")
        self.clear_btn.setEnabled(True)
        t.setColumnCount(len(self.agents))
        t.setHorizontalHeaderLabels(list(names))
        t.setRowCount(len(self.rows))
        t.setVerticalHeaderLabels([r.label for r in self.rows])
        bold = QtGui.QFont(t.font())
        bold.setBold(True)
        for i, row in enumerate(self.rows):
            for j, value in enumerate(row.values):
                item = QtWidgets.QTableWidgetItem(value)
                item.setToolTip(value)
                if row.differs:
                    item.setFont(bold)
                t.setItem(i, j, item)
        t.resizeRowsToContents()    # a long witness list wraps instead of being cut off

    def differing(self) -> list[str]:
        """Labels of the rows where the agents differ (what is bold)."""
        return [r.label for r in self.rows if r.differs] if len(self.agents) >= 2 else []
