"""Study results view: the Table 4 layout, Fleiss' kappa, a rater's confusion matrix and response-time plots.

Shows a :class:`core.study.report.StudyReport` (plain data); choosing a row of the table shows that rater's
confusion matrix and response times. Export buttons emit :attr:`StudyResultsView.export_requested`; the
controller asks for the file and writes it.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from core.study.report import StudyReport
from core.study.source import ACTION_LETTERS, ACTION_WORDS


class StudyResultsView(QtWidgets.QWidget):
    export_requested = QtCore.Signal(str)     # "csv" or "jsonl"
    refresh_requested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.report: StudyReport | None = None
        self.table = QtWidgets.QTableWidget()
        self.table.setObjectName("results_table")
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.SingleSelection)
        self.table.itemSelectionChanged.connect(self._rater_changed)
        self.kappa = QtWidgets.QLabel()
        self.kappa.setObjectName("kappa_label")
        self.confusion = QtWidgets.QTableWidget(4, 5)
        self.confusion.setObjectName("confusion_table")
        self.confusion.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.confusion.setHorizontalHeaderLabels([f"{l} {w}" for l, w in zip(ACTION_LETTERS, ACTION_WORDS)] + ["none"])
        self.confusion.setVerticalHeaderLabels(list(ACTION_WORDS))
        self.rt_hist = pg.PlotWidget(title="Response times")
        self.rt_hist.setLabel("bottom", "seconds")
        self.rt_hist.setLabel("left", "answers")
        self.rt_by_action = pg.PlotWidget(title="Mean response time by true action")
        self.rt_by_action.getAxis("bottom").setTicks([list(enumerate(ACTION_WORDS))])
        self.rt_by_action.setLabel("left", "seconds")
        for w in (self.rt_hist, self.rt_by_action):
            w.setBackground("w")
            w.setMinimumHeight(180)
        buttons = QtWidgets.QHBoxLayout()
        for text, kind in (("Export CSV…", "csv"), ("Export JSONL…", "jsonl")):
            b = QtWidgets.QPushButton(text)
            b.setObjectName(f"export_{kind}")
            b.clicked.connect(lambda _=False, k=kind: self.export_requested.emit(k))
            buttons.addWidget(b)
        b = QtWidgets.QPushButton("Refresh")
        b.setObjectName("refresh")
        b.clicked.connect(self.refresh_requested.emit)
        buttons.addWidget(b)
        buttons.addStretch(1)
        lay = QtWidgets.QVBoxLayout(self)
        lay.addWidget(self.table, 2)
        lay.addWidget(self.kappa)
        row = QtWidgets.QHBoxLayout()
        self.confusion_title = QtWidgets.QLabel("Confusion matrix (rows: truth, columns: answer)")
        box = QtWidgets.QVBoxLayout()
        box.addWidget(self.confusion_title)
        box.addWidget(self.confusion)
        row.addLayout(box, 1)
        row.addWidget(self.rt_hist, 1)
        row.addWidget(self.rt_by_action, 1)
        lay.addLayout(row, 2)
        lay.addLayout(buttons)

    def set_report(self, report: StudyReport) -> None:
        self.report = report
        rows = report.table_rows()
        self.table.clear()
        self.table.setColumnCount(len(rows[0]))
        self.table.setRowCount(len(rows) - 1)
        self.table.setHorizontalHeaderLabels(rows[0])
        for r, row in enumerate(rows[1:]):
            for c, text in enumerate(row):
                item = QtWidgets.QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
                if report.scores[r].kind == "pooled":
                    f = item.font()
                    f.setBold(True)
                    item.setFont(f)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        k = report.kappa
        self.kappa.setText("Fleiss' kappa (humans): " + ("n/a (needs two or more human raters with common "
                           "answers)" if math.isnan(k) else f"{k:.3f} — {report.kappa_raters} raters who finished, "
                           f"{report.kappa_items} common questions"))
        if report.scores:
            self.table.selectRow(len(report.scores) - 1 if report.scores[-1].kind == "pooled" else 0)
        else:
            self._show_rater(None)

    def _rater_changed(self) -> None:
        rows = self.table.selectionModel().selectedRows() if self.table.selectionModel() else []
        self._show_rater(rows[0].row() if rows else None)

    def _show_rater(self, row: int | None) -> None:
        self.rt_hist.clear()
        self.rt_by_action.clear()
        rep = self.report
        if rep is None or row is None or row >= len(rep.scores):
            for r in range(4):
                for c in range(5):
                    self.confusion.setItem(r, c, QtWidgets.QTableWidgetItem(""))
            return
        s = rep.scores[row]
        self.confusion_title.setText(f"Confusion matrix of {s.name} (rows: truth, columns: answer)")
        self.confusion.resizeColumnsToContents()
        top = max(1, int(s.confusion.max()))
        for r in range(4):
            for c in range(5):
                v = int(s.confusion[r, c])
                item = QtWidgets.QTableWidgetItem(str(v))
                item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
                shade = int(255 - 140 * v / top)
                item.setBackground(QtGui.QColor(shade, 255 if r == c else shade, shade))
                self.confusion.setItem(r, c, item)
        names = {x.name for x in rep.raters} if s.kind != "pooled" else {x.name for x in rep.raters
                                                                          if x.kind == "human"}
        if s.kind != "pooled":
            names = {s.name}
        rows = [x for x in rep.long_rows() if x["participant"] in names and x["rt_ms"] != ""]
        if not rows:
            return
        secs = np.array([float(x["rt_ms"]) / 1000 for x in rows])
        hi = max(1.0, float(secs.max()))
        counts, edges = np.histogram(secs, bins=min(30, max(5, len(secs) // 4)), range=(0, hi))
        self.rt_hist.plot(edges, counts, stepMode="center", fillLevel=0, brush=(60, 120, 200, 150))
        means = []
        for letter in ACTION_LETTERS:
            v = [float(x["rt_ms"]) / 1000 for x in rows if x["truth"] == letter]
            means.append(float(np.mean(v)) if v else 0.0)
        self.rt_by_action.addItem(pg.BarGraphItem(x=np.arange(4), height=means, width=0.6,
                                                  brush=(200, 120, 60, 200)))
