"""The Breakpoints panel: one checkable row per breakpoint (the check box enables or disables it), and Add…, Edit…,
Remove and Clear all.

A plain view: it shows ``(text, enabled[, tooltip])`` rows it is given and announces what the user asked for;
whoever owns the breakpoints (the studio's breakpoint controller, through undoable commands and the condition
builder, widgets/breakpoints/dialog.py) decides what happens. Entries wrap instead of being cut off, and each has
its full text as a tooltip, so a narrow dock still shows what a breakpoint does.
"""
from __future__ import annotations

from typing import Iterable

from PySide6 import QtCore, QtWidgets

#: the width (px) the panel asks for: a typical entry ("pause when Car_12 starts to Stop") on one line
PREFERRED_WIDTH = 300


class BreakpointList(QtWidgets.QWidget):
    toggled = QtCore.Signal(int, bool)       # row, enabled
    removeRequested = QtCore.Signal(int)     # row
    clearRequested = QtCore.Signal()
    addRequested = QtCore.Signal()
    editRequested = QtCore.Signal(int)       # row

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QtWidgets.QListWidget()
        self.list.setWordWrap(True)
        self.list.setTextElideMode(QtCore.Qt.TextElideMode.ElideNone)
        self.list.setResizeMode(QtWidgets.QListView.ResizeMode.Adjust)
        self.list.itemChanged.connect(self._on_item_changed)
        self.list.itemDoubleClicked.connect(lambda it: self.editRequested.emit(self.list.row(it)))
        self.list.currentRowChanged.connect(self._update_buttons)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.list)
        row = QtWidgets.QGridLayout()     # two by two: as narrow as the Legend it shares a dock area with
        self.add_btn = QtWidgets.QPushButton("Add…")
        self.add_btn.setToolTip("Add a breakpoint: pause when or while an agent, a type or a concept does something")
        self.add_btn.clicked.connect(self.addRequested.emit)
        self.edit_btn = QtWidgets.QPushButton("Edit…")
        self.edit_btn.setToolTip("Change the selected breakpoint (also: double-click it)")
        self.edit_btn.clicked.connect(lambda: self.editRequested.emit(self.list.currentRow()))
        self.remove_btn = QtWidgets.QPushButton("Remove")
        self.remove_btn.clicked.connect(lambda: self.removeRequested.emit(self.list.currentRow()))
        self.clear_btn = QtWidgets.QPushButton("Clear all")
        self.clear_btn.clicked.connect(self.clearRequested.emit)
        for i, b in enumerate((self.add_btn, self.edit_btn, self.remove_btn, self.clear_btn)):
            row.addWidget(b, i // 2, i % 2)
        row.setColumnStretch(2, 1)
        lay.addLayout(row)
        self._update_buttons()

    def sizeHint(self) -> QtCore.QSize:   # noqa: N802 (Qt)
        return QtCore.QSize(max(PREFERRED_WIDTH, super().sizeHint().width()), super().sizeHint().height())

    def set_rows(self, rows: Iterable[tuple]) -> None:
        """Show ``(text, enabled)`` or ``(text, enabled, tooltip)`` rows (no signals while filling); the current
        row stays where it was when it still exists."""
        current = self.list.currentRow()
        self.list.blockSignals(True)
        self.list.clear()
        for text, enabled, *tip in rows:
            it = QtWidgets.QListWidgetItem(text)
            it.setToolTip(tip[0] if tip else text)
            it.setFlags(it.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(QtCore.Qt.CheckState.Checked if enabled else QtCore.Qt.CheckState.Unchecked)
            self.list.addItem(it)
        if 0 <= current < self.list.count():
            self.list.setCurrentRow(current)
        self.list.blockSignals(False)
        self._update_buttons()

    def entry_width(self) -> int:
        """Pixels the widest entry needs on one line (check box and margins included)."""
        fm = self.list.fontMetrics()
        texts = [self.list.item(i).text() for i in range(self.list.count())]
        return max((fm.horizontalAdvance(t) for t in texts), default=0) + 48

    def _update_buttons(self, *_: object) -> None:
        has = 0 <= self.list.currentRow() < self.list.count()
        self.edit_btn.setEnabled(has)
        self.remove_btn.setEnabled(has)
        self.clear_btn.setEnabled(self.list.count() > 0)

    def _on_item_changed(self, item: QtWidgets.QListWidgetItem) -> None:
        self.toggled.emit(self.list.row(item), item.checkState() == QtCore.Qt.CheckState.Checked)
