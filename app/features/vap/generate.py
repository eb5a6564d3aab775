"""The VAP panel's "Generate dataset…" dialog: the settings of ``python main.py vap make`` (docs/vap.md
"Dataset") in a form, so a researcher generating from the studio chooses mode, agents, worlds, direction and
seed instead of getting the defaults. Settings are checked by :class:`core.tasks.vap.VapDataConfig` itself; a bad
value is shown in the dialog, which stays open."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import QtWidgets

from widgets.choice_dialog import ok_cancel_buttons

if TYPE_CHECKING:   # the VAP task package is imported when the dialog is accepted
    from core.tasks.vap import VapDataConfig


class GenerateDialog(QtWidgets.QDialog):
    """Settings for a VAP dataset; read ``folder()`` and ``config()`` once the dialog was accepted."""

    def __init__(self, parent: QtWidgets.QWidget | None = None, folder: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Generate a VAP dataset")
        self.setObjectName("vap_generate_dialog")
        form = QtWidgets.QFormLayout(self)
        row = QtWidgets.QHBoxLayout()
        self.out = QtWidgets.QLineEdit(folder)
        self.out.setPlaceholderText("dataset folder (an existing one is resumed)")
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row.addWidget(self.out, 1)
        row.addWidget(browse)
        form.addRow("Folder", row)
        self.mode = QtWidgets.QComboBox()
        self.mode.addItems(["easy", "hard"])
        self.agents = QtWidgets.QComboBox()
        self.agents.addItems(["fixed", "random"])
        self.agents.setToolTip("fixed: the mode's agent file per stage; random: a seeded composition per world")
        self.worlds = QtWidgets.QLineEdit("100/20/20")
        self.worlds.setToolTip("TRAIN/VAL/TEST world counts")
        self.steps = QtWidgets.QSpinBox()
        self.steps.setRange(2, 100_000)
        self.steps.setValue(100)
        self.direction = QtWidgets.QComboBox()
        self.direction.addItems(["next", "own"])
        self.direction.setToolTip("next: the move to the next state (the reference's; leaks the next motion)\n"
                                  "own: the agent's current heading (leak-free)")
        self.seed = QtWidgets.QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.workers = QtWidgets.QSpinBox()
        self.workers.setRange(1, 64)
        self.workers.setValue(1)
        self.workers.setToolTip("processes making worlds in parallel (the files do not depend on it)")
        for label, w in (("Mode", self.mode), ("Agents", self.agents), ("Worlds", self.worlds),
                         ("Steps per world", self.steps), ("Direction", self.direction), ("Seed", self.seed),
                         ("Workers", self.workers)):
            form.addRow(label, w)
        self.error = QtWidgets.QLabel("")
        self.error.setStyleSheet("color: #b00020")
        self.error.setWordWrap(True)
        form.addRow(self.error)
        buttons = ok_cancel_buttons(self, self._accept)
        buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).setText("Generate")
        form.addRow(buttons)
        self._config: VapDataConfig | None = None

    def _browse(self) -> None:
        d = QtWidgets.QFileDialog.getExistingDirectory(self, "Folder for the new (or resumed) VAP dataset")
        if d:
            self.out.setText(d)

    def _accept(self) -> None:
        from core.base.errors import ConfigError
        from core.tasks.vap import VapDataConfig, parse_worlds

        if not self.out.text().strip():
            self.error.setText("choose a dataset folder")
            return
        try:
            self._config = VapDataConfig(mode=self.mode.currentText(), agents=self.agents.currentText(),
                                         worlds=parse_worlds(self.worlds.text()), steps=self.steps.value(),
                                         direction=self.direction.currentText(), seed=self.seed.value(),
                                         workers=self.workers.value())
        except ConfigError as exc:
            self.error.setText(str(exc))
            return
        self.accept()

    def folder(self) -> Path:
        return Path(self.out.text().strip()).expanduser()

    def config(self):
        return self._config
