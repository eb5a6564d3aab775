"""Study designer dialog: the fields of a :class:`core.study.design.StudySpec` plus the new study's folder.

Defaults are the paper's mini-test recipe (117 questions on tiro/reckless cars, hard VAP mode, 5 training
documents, 4 practice questions). OK is enabled only for a spec the core accepts and an empty or new folder; the
controller then makes the study as a background job.
"""
from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtWidgets

from core.base.errors import ConfigError
from core.base.world import KNOWN_CONCEPTS
from core.study.design import MODALITIES, StudySpec, parse_seeds
from core.study.source import SimulatedSource
from widgets.choice_dialog import ok_cancel_buttons


class StudyDesignerDialog(QtWidgets.QDialog):
    def __init__(self, modes: list[str], parent: QtWidgets.QWidget | None = None,
                 folder: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("New study")
        d = StudySpec()
        f = QtWidgets.QFormLayout(self)
        self.name = QtWidgets.QLineEdit(d.name)
        self.source_kind = QtWidgets.QComboBox()
        self.source_kind.addItem("Simulated episodes of a mode", "simulated")
        self.source_kind.addItem("A VAP dataset (main.py vap generate)", "vap")
        self.dataset = QtWidgets.QLineEdit()
        self.dataset.setPlaceholderText("VAP dataset folder (holds dataset_info.json)")
        dbrowse = QtWidgets.QPushButton("Browse…")
        dbrowse.clicked.connect(lambda: self._browse_into(self.dataset, "VAP dataset folder"))
        drow = QtWidgets.QHBoxLayout()
        drow.addWidget(self.dataset, 1)
        drow.addWidget(dbrowse)
        self.mode = QtWidgets.QComboBox()
        self.mode.setEditable(True)
        self.mode.addItems(modes)
        self.mode.setCurrentText(d.source.mode)
        self.split = QtWidgets.QComboBox()
        self.split.addItems(["test", "val", "train"])
        self.seeds = QtWidgets.QLineEdit("0-4")
        self.steps = self._spin(1, 100000, d.source.steps)
        self.min_step = self._spin(0, 100000, d.source.min_step)
        self.questions = self._spin(1, 100000, d.questions)
        self.concepts = QtWidgets.QListWidget()
        self.concepts.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
        for c in KNOWN_CONCEPTS:   # check boxes: every choice visible at once
            item = QtWidgets.QListWidgetItem(c)
            item.setFlags(item.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(QtCore.Qt.CheckState.Checked if c in d.concepts else QtCore.Qt.CheckState.Unchecked)
            self.concepts.addItem(item)
        self.concepts.setFixedHeight(self.concepts.sizeHintForRow(0) * len(KNOWN_CONCEPTS) + 6)
        self.cars_only = QtWidgets.QCheckBox("cars only")
        self.cars_only.setChecked(True)
        self.modality = QtWidgets.QComboBox()
        self.modality.addItems(list(MODALITIES))
        self.training = self._spin(0, 100, d.training)
        self.practice = self._spin(0, 100, d.practice)
        self.sample_seed = self._spin(0, 2 ** 31 - 1, 0)
        self.order_seed = self._spin(0, 2 ** 31 - 1, 0)
        self.per_participant = QtWidgets.QCheckBox("different order for each participant")
        self.per_participant.setChecked(True)
        self.time_limit = QtWidgets.QDoubleSpinBox()
        self.time_limit.setRange(0, 3600)
        self.time_limit.setSpecialValueText("none")
        self.time_limit.setSuffix(" s")
        self.folder = QtWidgets.QLineEdit(folder)
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        frow = QtWidgets.QHBoxLayout()
        frow.addWidget(self.folder, 1)
        frow.addWidget(browse)
        f.addRow("Name", self.name)
        f.addRow("Question source", self.source_kind)
        f.addRow("Dataset", drow)
        for label, w in (("Mode", self.mode), ("Agent split / dataset stage", self.split),
                         ("Worlds (seeds)", self.seeds), ("Steps per world", self.steps),
                         ("First step asked", self.min_step), ("Test questions", self.questions),
                         ("Agents with concept (none = all)", self.concepts), ("", self.cars_only),
                         ("Modality", self.modality), ("Training documents", self.training),
                         ("Practice questions", self.practice), ("Sampling seed", self.sample_seed),
                         ("Order seed", self.order_seed), ("", self.per_participant),
                         ("Time limit per question", self.time_limit)):
            f.addRow(label, w)
        f.addRow("Study folder", frow)
        self.problem = QtWidgets.QLabel()
        self.problem.setStyleSheet("color: #b00020;")
        self.problem.setWordWrap(True)
        f.addRow(self.problem)
        self.buttons = ok_cancel_buttons(self)
        f.addRow(self.buttons)
        for w in (self.name, self.seeds, self.folder, self.dataset):
            w.textChanged.connect(self._validate)
        self.concepts.itemChanged.connect(self._validate)
        self.source_kind.currentIndexChanged.connect(self._source_changed)
        self._source_changed()
        for w in (self.questions, self.training, self.practice, self.steps):
            w.valueChanged.connect(self._validate)
        self._validate()

    def _spin(self, lo: int, hi: int, value: int) -> QtWidgets.QSpinBox:
        s = QtWidgets.QSpinBox()
        s.setRange(lo, hi)
        s.setValue(value)
        return s

    def _browse(self) -> None:
        self._browse_into(self.folder, "Study folder (new or empty)")

    def _browse_into(self, edit: QtWidgets.QLineEdit, title: str) -> None:
        path = QtWidgets.QFileDialog.getExistingDirectory(self, title)
        if path:
            edit.setText(path)

    def _source_changed(self) -> None:
        sim = self.source_kind.currentData() == "simulated"
        for w in (self.mode, self.seeds, self.steps):
            w.setEnabled(sim)
        self.dataset.setEnabled(not sim)
        self._validate()

    def spec(self) -> StudySpec:
        """The spec as entered (raises ConfigError / ValueError when something is wrong)."""
        concepts = tuple(self.concepts.item(i).text() for i in range(self.concepts.count())
                         if self.concepts.item(i).checkState() == QtCore.Qt.CheckState.Checked)
        tl = self.time_limit.value()
        if self.source_kind.currentData() == "vap":
            from core.study.source_vap import VapDatasetSource

            if not self.dataset.text().strip():
                raise ConfigError("choose the VAP dataset folder")
            source = VapDatasetSource(self.dataset.text().strip(), self.split.currentText(), self.min_step.value())
            source.manifest()   # a clear error now rather than in the job
        else:
            try:
                seeds = parse_seeds(self.seeds.text())
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
            source = SimulatedSource(self.mode.currentText(), self.split.currentText(), seeds, self.steps.value(),
                                     self.min_step.value())
        spec = StudySpec(self.name.text().strip() or "study", source,
                         self.questions.value(), concepts, self.cars_only.isChecked(), self.sample_seed.value(),
                         self.modality.currentText(), self.training.value(), self.practice.value(),
                         self.order_seed.value(), self.per_participant.isChecked(), tl if tl > 0 else None)
        spec.check()
        return spec

    def target(self) -> Path:
        return Path(self.folder.text().strip())

    def _validate(self) -> None:
        problem = ""
        try:
            self.spec()
        except (ConfigError, ValueError) as exc:
            problem = str(exc)
        t = self.folder.text().strip()
        if not problem and not t:
            problem = "choose a folder for the study"
        elif not problem and Path(t).exists() and (not Path(t).is_dir() or any(Path(t).iterdir())):
            problem = "the study folder must be new or empty"
        self.problem.setText(problem)
        self.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).setEnabled(not problem)
