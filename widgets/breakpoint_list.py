"""The Breakpoints panel: one checkable row per breakpoint, Remove and Clear all.

A plain view: it shows ``(text, enabled)`` rows it is given and announces what the user asked for; whoever owns the
breakpoints (the studio's breakpoint controller, through undoable commands) decides what happens.
"""
from __future__ import annotations

from typing import Iterable

from PySide6 import QtCore, QtWidgets


class BreakpointList(QtWidgets.QWidget):
    toggled = QtCore.Signal(int, bool)       # row, enabled
    removeRequested = QtCore.Signal(int)     # row
    clearRequested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QtWidgets.QListWidget()
        self.list.itemChanged.connect(self._on_item_changed)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.list)
        row = QtWidgets.QHBoxLayout()
        self.remove_btn = QtWidgets.QPushButton("Remove")
        self.remove_btn.clicked.connect(lambda: self.removeRequested.emit(self.list.currentRow()))
        self.clear_btn = QtWidgets.QPushButton("Clear all")
        self.clear_btn.clicked.connect(self.clearRequested.emit)
        row.addWidget(self.remove_btn)
        row.addWidget(self.clear_btn)
        row.addStretch(1)
        lay.addLayout(row)

    def set_rows(self, rows: Iterable[tuple[str, bool]]) -> None:
        """Show ``(text, enabled)`` rows (no signals while filling)."""
        self.list.blockSignals(True)
        self.list.clear()
        for text, enabled in rows:
            it = QtWidgets.QListWidgetItem(text)
            it.setToolTip(text)
            it.setFlags(it.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(QtCore.Qt.CheckState.Checked if enabled else QtCore.Qt.CheckState.Unchecked)
            self.list.addItem(it)
        self.list.blockSignals(False)

    def _on_item_changed(self, item: QtWidgets.QListWidgetItem) -> None:
        self.toggled.emit(self.list.row(item), item.checkState() == QtCore.Qt.CheckState.Checked)
