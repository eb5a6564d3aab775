"""Dialog for a language-model run on a study: back-end, model, endpoint, key variable, shots, rate limit.

It only collects choices (:meth:`StudyLLMDialog.options`); the controller runs the model as a background job with
the same functions as ``python main.py study llm`` (every reply journalled, a rerun resumes).
"""
from __future__ import annotations

from PySide6 import QtWidgets

from widgets.choice_dialog import ok_cancel_buttons

BACKENDS = (("openai", "OpenAI-compatible endpoint"), ("transformers", "Local transformers model folder"),
            ("jsonl-import", "Import batch results (JSONL)"))


class StudyLLMDialog(QtWidgets.QDialog):
    def __init__(self, n_training: int, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Evaluate a language model")
        f = QtWidgets.QFormLayout(self)
        self.backend = QtWidgets.QComboBox()
        for key, text in BACKENDS:
            self.backend.addItem(text, key)
        self.model = QtWidgets.QLineEdit()
        self.model.setPlaceholderText("model name, or the model folder / result file")
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.model, 1)
        row.addWidget(browse)
        self.base_url = QtWidgets.QLineEdit("https://api.openai.com/v1")
        self.key_env = QtWidgets.QLineEdit("OPENAI_API_KEY")
        self.rpm = QtWidgets.QDoubleSpinBox()
        self.rpm.setRange(0, 100000)
        self.rpm.setValue(60)
        self.rpm.setSpecialValueText("no limit")
        self.k = QtWidgets.QSpinBox()
        self.k.setRange(0, n_training)
        self.k.setValue(min(5, n_training))
        self.mode = QtWidgets.QComboBox()
        self.mode.addItems(["generate", "logits"])
        self.name = QtWidgets.QLineEdit()
        self.name.setPlaceholderText("run name (default: model-kshot)")
        f.addRow("Back-end", self.backend)
        f.addRow("Model", row)
        f.addRow("Base URL", self.base_url)
        f.addRow("API key variable", self.key_env)
        f.addRow("Requests per minute", self.rpm)
        f.addRow("Demonstrations (k)", self.k)
        f.addRow("Local model answers by", self.mode)
        f.addRow("Run name", self.name)
        self.buttons = ok_cancel_buttons(self)
        f.addRow(self.buttons)
        self.backend.currentIndexChanged.connect(self._changed)
        self.model.textChanged.connect(self._changed)
        self._changed()

    def _browse(self) -> None:
        if self.backend.currentData() == "transformers":
            path = QtWidgets.QFileDialog.getExistingDirectory(self, "Model folder")
        else:
            path = QtWidgets.QFileDialog.getOpenFileName(self, "Batch results", "", "JSONL (*.jsonl)")[0]
        if path:
            self.model.setText(path)

    def _changed(self) -> None:
        b = self.backend.currentData()
        for w in (self.base_url, self.key_env, self.rpm):
            w.setEnabled(b == "openai")
        self.mode.setEnabled(b == "transformers")
        self.k.setEnabled(b != "jsonl-import")
        self.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).setEnabled(bool(self.model.text().strip()))

    def options(self) -> dict:
        return {"backend": self.backend.currentData(), "model": self.model.text().strip(),
                "base_url": self.base_url.text().strip(), "key_env": self.key_env.text().strip(),
                "rpm": self.rpm.value(), "k": self.k.value(), "mode": self.mode.currentText(),
                "name": self.name.text().strip()}
