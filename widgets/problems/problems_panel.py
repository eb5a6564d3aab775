"""The Problems panel: what is wrong with the city, the agents or the rules, errors first, each entry leading to the
cells, agent or file line involved (double-click or Enter; a single click also shows cells on the map).

Why a plain list of :class:`core.studio.problems.Problem`: the checkers (city validation, agent checks, rule
diagnostics) are separate; this widget only shows their common shape and says which one the user picked. Who
collects them and where "showing" leads (centring the map, selecting an agent) is the app's business.
"""
from __future__ import annotations

from typing import Sequence

from PySide6 import QtCore, QtGui, QtWidgets

from core.studio.problems import Problem

_ERROR_RGB = (229, 57, 53)
_WARNING_RGB = (251, 140, 0)


class ProblemsPanel(QtWidgets.QWidget):
    """``activated(Problem)``: the user picked an entry; ``refreshRequested``: the Re-check button."""

    activated = QtCore.Signal(object)
    refreshRequested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.problems: list[Problem] = []
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        top = QtWidgets.QHBoxLayout()
        self.summary = QtWidgets.QLabel("No problems")
        self.summary.setObjectName("problemsSummary")
        top.addWidget(self.summary, 1)
        self.recheck = QtWidgets.QToolButton()
        self.recheck.setText("Re-check")
        self.recheck.setToolTip("Run every check again now")
        self.recheck.clicked.connect(self.refreshRequested.emit)
        top.addWidget(self.recheck)
        lay.addLayout(top)
        self.tree = QtWidgets.QTreeWidget()
        self.tree.setObjectName("problemsList")
        self.tree.setHeaderLabels(["", "Problem", "Where", "Source"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setWordWrap(False)
        self.tree.setAlternatingRowColors(True)
        hdr = self.tree.header()
        hdr.setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        hdr.setSectionResizeMode(1, QtWidgets.QHeaderView.ResizeMode.Stretch)
        hdr.setSectionResizeMode(2, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        hdr.setSectionResizeMode(3, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        hdr.setStretchLastSection(False)
        self.tree.itemActivated.connect(self._on_item)
        self.tree.itemClicked.connect(self._on_item)
        lay.addWidget(self.tree, 1)
        self._icons = {True: self._dot(_ERROR_RGB), False: self._dot(_WARNING_RGB)}

    @staticmethod
    def _dot(rgb) -> QtGui.QIcon:
        pix = QtGui.QPixmap(12, 12)
        pix.fill(QtCore.Qt.GlobalColor.transparent)
        p = QtGui.QPainter(pix)
        p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        p.setBrush(QtGui.QColor(*rgb))
        p.setPen(QtCore.Qt.PenStyle.NoPen)
        p.drawEllipse(1, 1, 10, 10)
        p.end()
        return QtGui.QIcon(pix)

    # ---- content ------------------------------------------------------------------------------------------------
    def set_problems(self, problems: Sequence[Problem]) -> None:
        """Show ``problems`` (already sorted: errors first)."""
        self.problems = list(problems)
        self.tree.clear()
        items = []
        for i, p in enumerate(self.problems):
            item = QtWidgets.QTreeWidgetItem(["", p.message, p.location(), p.source])
            item.setIcon(0, self._icons[p.is_error])
            item.setData(0, QtCore.Qt.ItemDataRole.UserRole, i)
            item.setToolTip(1, p.message)
            item.setToolTip(0, ("error: blocks simulating" if getattr(p, "blocks", True) else
                                "error (not applied yet: does not block simulating)") if p.is_error else "warning")
            items.append(item)
        self.tree.addTopLevelItems(items)
        errors = sum(p.is_error for p in self.problems)
        warnings = len(self.problems) - errors
        if not self.problems:
            self.summary.setText("No problems")
        else:
            parts = []
            if errors:
                parts.append(f"{errors} error{'s' if errors != 1 else ''}")
            if warnings:
                parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
            blocking = any(p.is_error and getattr(p, "blocks", True) for p in self.problems)
            self.summary.setText(", ".join(parts) + (" — simulating is blocked" if blocking else ""))

    def row_texts(self) -> list[tuple[str, str, str]]:
        """(message, where, source) of every row, as shown."""
        out = []
        for i in range(self.tree.topLevelItemCount()):
            it = self.tree.topLevelItem(i)
            out.append((it.text(1), it.text(2), it.text(3)))
        return out

    def activate_row(self, i: int) -> None:
        """Pick row ``i`` as a click would."""
        item = self.tree.topLevelItem(i)
        self.tree.setCurrentItem(item)
        self._on_item(item)

    def _on_item(self, item: QtWidgets.QTreeWidgetItem, column: int = 0) -> None:
        i = item.data(0, QtCore.Qt.ItemDataRole.UserRole)
        if isinstance(i, int) and 0 <= i < len(self.problems):
            self.activated.emit(self.problems[i])
