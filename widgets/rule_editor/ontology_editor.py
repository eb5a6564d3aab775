"""The ontology editor: the project's predicates with arity, kind, grounding function and its parameters.

Parameters are edited in place (``min: 10, max: 20``) and validated by the registry's checks before anything
changes; a concept predicate (a unary semantic one such as ``IsAmbulance``) can be added with one of the registry's
concept groundings, and any non-action predicate removed. The widget only asks (``paramsEdited``,
``addRequested``, ``removeRequested``); the controller turns each request into an undoable command and answers with
:meth:`OntologyEditor.set_ontology` or :meth:`OntologyEditor.show_error`. Never imports ``app``.
"""
from __future__ import annotations

from typing import Any, Sequence

from PySide6 import QtCore, QtGui, QtWidgets

__all__ = ["OntologyEditor", "format_params"]

COLUMNS = ("Name", "Arity", "Kind", "Grounding", "Parameters")      # the description is the row's tooltip
GROUNDING_COL = 3
PARAMS_COL = 4


def _fmt(v: Any) -> str:
    if isinstance(v, dict) or hasattr(v, "items"):
        return "{" + ", ".join(f"{k}: {_fmt(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return repr(v) if isinstance(v, str) else str(v)


def format_params(params: Any) -> str:
    """``min: 12, max: 20`` (a YAML flow mapping without its braces: what the Parameters cell shows and reads)."""
    return ", ".join(f"{k}: {_fmt(v)}" for k, v in params.items())


class OntologyEditor(QtWidgets.QWidget):
    paramsEdited = QtCore.Signal(str, str)        # predicate, the typed parameter text
    groundingChosen = QtCore.Signal(str, str)     # predicate, registry function ("" = not grounded)
    addRequested = QtCore.Signal(str, str)        # name, grounding
    removeRequested = QtCore.Signal(str)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ontologyEditor")
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(2, 2, 2, 2)
        self.title = QtWidgets.QLabel("No ontology")
        lay.addWidget(self.title)
        self.table = QtWidgets.QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setStretchLastSection(True)
        lay.addWidget(self.table, 1)
        row = QtWidgets.QHBoxLayout()
        self.new_name = QtWidgets.QLineEdit(placeholderText="New concept predicate, e.g. IsElderly")
        self.new_grounding = QtWidgets.QComboBox()
        self.add_button = QtWidgets.QPushButton("Add concept")
        self.remove_button = QtWidgets.QPushButton("Remove selected")
        row.addWidget(self.new_name, 2)
        row.addWidget(self.new_grounding, 1)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        lay.addLayout(row)
        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.add_button.clicked.connect(self._add)
        self.new_name.returnPressed.connect(self._add)
        self.remove_button.clicked.connect(self._remove)
        self.table.itemChanged.connect(self._on_item_changed)
        self._filling = False
        self._by_arity: dict[int, list[str]] = {}

    def set_groundings(self, names: Sequence[str], docs: dict[str, str] | None = None) -> None:
        self.new_grounding.clear()
        for n in names:
            self.new_grounding.addItem(n)
            if docs and n in docs:
                self.new_grounding.setItemData(self.new_grounding.count() - 1, docs[n], QtCore.Qt.ItemDataRole.ToolTipRole)

    def set_registry(self, by_arity: dict[int, Sequence[str]]) -> None:
        """The grounding functions a predicate of each arity may choose (the Grounding column's choices)."""
        self._by_arity = {k: list(v) for k, v in by_arity.items()}

    def set_ontology(self, ontology: Any, tips: dict[str, str] | None = None) -> None:
        """Show every predicate; ``tips`` (name → text) documents the grounding and its parameters."""
        self._filling = True
        try:
            self.title.setText(f"Ontology '{ontology.name}': {len(ontology.predicates)} predicates "
                               f"(observation of 5 entities: {ontology.observation_size()} values)")
            self.table.setRowCount(len(ontology.predicates))
            for r, p in enumerate(ontology.predicates):
                values = (p.name, str(p.arity), p.kind, p.grounding or ("—" if p.is_action else "null"),
                          format_params(p.params) if p.params else "")
                for c, v in enumerate(values):
                    item = QtWidgets.QTableWidgetItem(v)
                    editable = c == PARAMS_COL and bool(p.params)
                    flags = QtCore.Qt.ItemFlag.ItemIsSelectable | QtCore.Qt.ItemFlag.ItemIsEnabled
                    if editable:
                        flags |= QtCore.Qt.ItemFlag.ItemIsEditable
                        item.setBackground(QtGui.QColor("#fff8c5"))
                    item.setFlags(flags)
                    tip = "\n".join(t for t in (p.description, (tips or {}).get(p.name, "")) if t)
                    if tip:
                        item.setToolTip(tip)
                    self.table.setItem(r, c, item)
                if not p.is_action and self._by_arity.get(p.arity):
                    self.table.setCellWidget(r, GROUNDING_COL, self._grounding_combo(p))
            self.table.resizeColumnsToContents()
        finally:
            self._filling = False

    def _grounding_combo(self, p: Any) -> QtWidgets.QComboBox:
        combo = QtWidgets.QComboBox()
        combo.addItem("(not grounded)", "")
        for name in self._by_arity.get(p.arity, []):
            combo.addItem(name, name)
        combo.setCurrentIndex(max(0, combo.findData(p.grounding or "")))
        combo.setToolTip("The registry function that grounds this predicate (its parameters reset to the defaults)")
        combo.currentIndexChanged.connect(lambda _i, name=p.name, c=combo: self.groundingChosen.emit(name, c.currentData()))
        return combo

    def grounding_combo(self, name: str) -> QtWidgets.QComboBox | None:
        row = self.row_of(name)
        w = self.table.cellWidget(row, GROUNDING_COL) if row >= 0 else None
        return w if isinstance(w, QtWidgets.QComboBox) else None

    def show_error(self, text: str) -> None:
        self.status.setStyleSheet("color: #d1242f")
        self.status.setText(text)

    def show_info(self, text: str) -> None:
        self.status.setStyleSheet("")
        self.status.setText(text)

    def selected_name(self) -> str | None:
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        return item.text() if item is not None else None

    def row_of(self, name: str) -> int:
        for r in range(self.table.rowCount()):
            if self.table.item(r, 0).text() == name:
                return r
        return -1

    def _add(self) -> None:
        name = self.new_name.text().strip()
        if name:
            self.addRequested.emit(name, self.new_grounding.currentText())

    def _remove(self) -> None:
        name = self.selected_name()
        if name:
            self.removeRequested.emit(name)

    def _on_item_changed(self, item: QtWidgets.QTableWidgetItem) -> None:
        if self._filling or item.column() != PARAMS_COL:
            return
        self.paramsEdited.emit(self.table.item(item.row(), 0).text(), item.text())
