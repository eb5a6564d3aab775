"""File ▸ Export dataset…: the dataset exporters of core/export in a dialog, run as a job with progress and cancel.

Why a dialog built from the registry: every exporter declares its options (core/export/registry.py), so one form
serves all of them — and an exporter added later (VAP, study banks) appears here without GUI code. The export runs
through the studio's :class:`app.shell.jobs.JobRunner` (``run_export`` in the job's thread; the local backend's worker
processes or Ray tasks do the work), reports shard progress to the dialog's bar, and Cancel stops it between
shards: finished shards stay recorded, so exporting again into the same folder resumes (docs/export.md). Errors
(a bad option, a folder holding another export) end in the studio's error dialog and the dialog's status line.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from PySide6 import QtCore, QtWidgets

from app.shell.features import FeatureController, FeatureHost
from app.shell.jobs import CANCELLED, DONE, JobHandle, JobOutcome
from app.shell.menus import ActionSpec

_W = TypeVar("_W", bound=QtWidgets.QWidget)

SETTINGS_FOLDER = "export/dataset_folder"


class _PathField(QtWidgets.QWidget):
    """A path option: its text (``line``) plus a file chooser."""

    def __init__(self, line: QtWidgets.QLineEdit, pick: QtWidgets.QToolButton) -> None:
        super().__init__()
        self.line = line
        row = QtWidgets.QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(line, 1)
        row.addWidget(pick)


def _named(widget: _W, name: str) -> _W:
    """``widget`` with its object name (the tests and scripts find the form's fields by it)."""
    widget.setObjectName(name)
    return widget


class ExportDialog(QtWidgets.QDialog):
    """The form: exporter, its options, output folder, backend; Export / Cancel; progress."""

    def __init__(self, controller: "DatasetExportController", parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        from core.export.backends import BACKENDS
        from core.export.registry import exporters

        self.controller = controller
        self.setObjectName("datasetExportDialog")
        self.setWindowTitle("Export dataset")
        self.specs = {s.name: s for s in exporters()}
        self.kind = _named(QtWidgets.QComboBox(), "exportKind")
        for s in self.specs.values():
            self.kind.addItem(s.title, s.name)
        self.description = _named(QtWidgets.QLabel(), "exportDescription")
        self.description.setWordWrap(True)
        self.options_box = QtWidgets.QGroupBox("Options")
        self.form = QtWidgets.QFormLayout(self.options_box)
        self.fields: dict[str, QtWidgets.QWidget] = {}
        self.folder = _named(QtWidgets.QLineEdit(), "exportFolder")
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        self.backend = _named(QtWidgets.QComboBox(), "exportBackend")
        labels = {"local": "Local process pool", "inline": "This process (one worker)", "ray": "Ray cluster"}
        for b in ("local", *[b for b in BACKENDS if b != "local"]):
            self.backend.addItem(labels.get(b, b), b)
        self.workers = _named(QtWidgets.QSpinBox(), "exportWorkers")
        self.workers.setRange(0, 4096)
        self.workers.setSpecialValueText("all CPUs")
        self.ray_address = _named(QtWidgets.QLineEdit(), "exportRayAddress")
        self.ray_address.setPlaceholderText("local (or auto, ray://head:10001)")
        run_box = QtWidgets.QGroupBox("Output and backend")
        run_form = QtWidgets.QFormLayout(run_box)
        run_form.addRow("Output folder", row)
        run_form.addRow("Backend", self.backend)
        run_form.addRow("Workers", self.workers)
        run_form.addRow("Ray address", self.ray_address)
        self.progress = _named(QtWidgets.QProgressBar(), "exportProgress")
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status = _named(QtWidgets.QLabel("Ready."), "exportStatus")
        self.status.setWordWrap(True)
        self.buttons = QtWidgets.QDialogButtonBox()
        self.export_button = self.buttons.addButton("Export", QtWidgets.QDialogButtonBox.ButtonRole.AcceptRole)
        self.export_button.setObjectName("exportStart")
        self.cancel_button = self.buttons.addButton("Close", QtWidgets.QDialogButtonBox.ButtonRole.RejectRole)
        self.cancel_button.setObjectName("exportCancel")
        self.export_button.clicked.connect(self._start)
        self.cancel_button.clicked.connect(self._cancel_or_close)
        layout = QtWidgets.QVBoxLayout(self)
        top = QtWidgets.QFormLayout()
        top.addRow("Export", self.kind)
        layout.addLayout(top)
        layout.addWidget(self.description)
        layout.addWidget(self.options_box)
        layout.addWidget(run_box)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self.backend.currentIndexChanged.connect(self._backend_changed)
        self._kind_changed()
        self._backend_changed()
        self.resize(560, self.sizeHint().height())

    # ---- form ---------------------------------------------------------------------------------------------------
    @property
    def spec(self):
        return self.specs[self.kind.currentData()]

    def _kind_changed(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields.clear()
        spec = self.spec
        self.description.setText(spec.description)
        for opt in spec.options:
            w = self._field(opt)
            w.setObjectName(f"opt_{opt.name}")
            w.setToolTip(opt.help)
            self.fields[opt.name] = w
            self.form.addRow(opt.name.replace("_", " ").capitalize(), w)
        for name, value in self.controller.prefill(spec).items():
            self.set_option(name, value)
        self.folder.setText(str(self.controller.default_folder(spec.name)))

    def _field(self, opt) -> QtWidgets.QWidget:
        if opt.kind == "int":
            spin = QtWidgets.QSpinBox()
            spin.setRange(int(opt.minimum if opt.minimum is not None else -2**31 + 1),
                          int(min(opt.maximum if opt.maximum is not None else 2**31 - 1, 2**31 - 1)))
            spin.setValue(int(opt.default))
            return spin
        if opt.kind == "float":
            real = QtWidgets.QDoubleSpinBox()
            real.setDecimals(4)
            real.setRange(opt.minimum if opt.minimum is not None else -1e9,
                          opt.maximum if opt.maximum is not None else 1e9)
            real.setValue(float(opt.default))
            return real
        if opt.kind == "bool":
            check = QtWidgets.QCheckBox()
            check.setChecked(bool(opt.default))
            return check
        if opt.kind == "choice":
            combo = QtWidgets.QComboBox()
            for c in opt.choices:
                combo.addItem(c or "(default)", c)
            combo.setCurrentIndex(max(0, list(opt.choices).index(opt.default)) if opt.default in opt.choices else 0)
            return combo
        line = QtWidgets.QLineEdit(str(opt.default))
        if opt.kind != "path":
            return line
        pick = QtWidgets.QToolButton()
        pick.setText("…")
        pick.setToolTip(f"Choose the {opt.name.replace('_', ' ')} file")
        pick.clicked.connect(lambda _=False, line=line: self._pick_file(line))
        return _PathField(line, pick)

    def _pick_file(self, line: QtWidgets.QLineEdit) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Choose a file", line.text())
        if path:
            line.setText(path)

    @staticmethod
    def _line(w: QtWidgets.QWidget) -> QtWidgets.QLineEdit:
        """The text of a path or text option."""
        if isinstance(w, _PathField):
            return w.line
        assert isinstance(w, QtWidgets.QLineEdit), w
        return w

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, w in self.fields.items():
            if isinstance(w, (QtWidgets.QSpinBox, QtWidgets.QDoubleSpinBox)):
                out[name] = w.value()
            elif isinstance(w, QtWidgets.QCheckBox):
                out[name] = w.isChecked()
            elif isinstance(w, QtWidgets.QComboBox):
                out[name] = w.currentData()
            else:
                out[name] = self._line(w).text()
        return out

    def set_option(self, name: str, value: Any) -> None:
        """Set one option's field (scripts and tests)."""
        w = self.fields[name]
        if isinstance(w, (QtWidgets.QSpinBox, QtWidgets.QDoubleSpinBox)):
            w.setValue(value)
        elif isinstance(w, QtWidgets.QCheckBox):
            w.setChecked(bool(value))
        elif isinstance(w, QtWidgets.QComboBox):
            w.setCurrentIndex(w.findData(value))
        else:
            self._line(w).setText(str(value))

    def _backend_changed(self) -> None:
        b = self.backend.currentData()
        self.ray_address.setEnabled(b == "ray")
        self.workers.setEnabled(b != "inline")

    def _browse(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Export into folder (new, empty, or an unfinished "
                                                                  "export to resume)", self.folder.text())
        if folder:
            self.folder.setText(folder)

    # ---- running ------------------------------------------------------------------------------------------------
    def set_running(self, running: bool) -> None:
        self.export_button.setEnabled(not running)
        self.kind.setEnabled(not running)
        self.options_box.setEnabled(not running)
        self.cancel_button.setText("Cancel" if running else "Close")

    def _start(self) -> None:
        if not self.folder.text().strip():
            self.status.setText("Choose an output folder.")
            return
        self.controller.start(self.spec.name, self.values(), Path(self.folder.text().strip()),
                              self.backend.currentData(), self.workers.value() or None,
                              self.ray_address.text().strip() or None)

    def _cancel_or_close(self) -> None:
        if self.controller.running:
            self.controller.cancel()
        else:
            self.close()

    def on_progress(self, done: int, total: int, text: str) -> None:
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)
        self.status.setText(f"{done} of {total} shards — {text}")


class DatasetExportController(FeatureController):
    """Owns the dialog and the running export job (one at a time)."""

    finished = QtCore.Signal(object)   # JobOutcome

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.host = host
        self.shell = host.shell
        self.dialog: ExportDialog | None = None
        self.handle: JobHandle | None = None
        self.last_report = None
        self.action = host.add(ActionSpec("Export &dataset…", self.open_dialog, "Ctrl+Alt+X",
                                          "Export episodes, SPF demonstrations (Minari), Parquet, videos or PDDL, "
                                          "resumably", menu="file", section="export", name="exportDatasetAction"))

    @property
    def running(self) -> bool:
        return self.handle is not None and self.handle.is_running()

    def default_folder(self, kind: str) -> Path:
        last = self.shell.settings.value(SETTINGS_FOLDER, "")
        base = Path(str(last)) if last else Path.home() / "LogiCity exports"
        return base / kind

    def prefill(self, spec) -> dict[str, Any]:
        """Options taken from what the studio shows: the open mode file, the replayed episode file."""
        out: dict[str, Any] = {}
        kinds = {o.name: o.kind for o in spec.options}
        session = self.host.session
        source = session.project.config.source if session.project is not None else None
        if kinds.get("mode") == "path" and source and str(source).endswith((".yaml", ".yml")) and Path(source).is_file():
            out["mode"] = str(source)
        shown = session.read_only
        if kinds.get("episode") == "path" and shown is not None and Path(shown).suffix == ".npz":
            out["episode"] = str(shown)
        return out

    def open_dialog(self) -> ExportDialog:
        if self.dialog is None:
            self.dialog = ExportDialog(self, self.shell.dialog_parent)
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def start(self, kind: str, options: dict, out: Path, backend: str, workers: int | None,
              ray_address: str | None) -> None:
        if self.running:
            return
        from core.export.runner import Cancelled, run_export

        def job(ctx):
            try:
                return run_export(kind, options, out, backend=backend, workers=workers, ray_address=ray_address,
                                  progress=lambda d, t, text: ctx.progress(d, t, text),
                                  cancelled=lambda: ctx.cancelled)
            except Cancelled:
                return None

        dlg = self.dialog
        self.handle = self.host.jobs.start(job, kind="dataset-export", key="dataset-export")
        if dlg is not None:
            dlg.set_running(True)
            dlg.status.setText(f"Exporting {kind} into {out} ({backend})…")
            self.handle.progress.connect(lambda v: dlg.on_progress(*v))
        self.handle.finished.connect(lambda outcome: self._finished(outcome, out))
        self.shell.settings.setValue(SETTINGS_FOLDER, str(out.parent))

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            if self.dialog is not None:
                self.dialog.status.setText("Cancelling after the running shard(s)…")

    def _finished(self, outcome: JobOutcome, out: Path) -> None:
        dlg = self.dialog
        self.handle = None
        if outcome.status == DONE and outcome.result is not None:
            rep = self.last_report = outcome.result
            c = rep.manifest["counts"]
            text = (f"Done: {c.get('shards', 0)} shards, {c.get('files', 0)} files, {c.get('bytes', 0) / 1e6:.2f} MB in "
                    f"{out} ({len(rep.ran)} run, {len(rep.skipped)} already done, {rep.seconds:.1f} s)")
            if rep.failures:
                text += f"; {len(rep.failures)} failed attempt(s) retried"
            self.shell.status(text)
        elif outcome.status in (CANCELLED, DONE):
            text = f"Cancelled; finished shards are kept — export again into {out} to resume."
            self.shell.status(text)
        else:
            err = outcome.error
            text = f"Failed: {err.text if err is not None else 'unknown error'}"
        if dlg is not None:
            dlg.set_running(False)
            dlg.status.setText(text)
            if outcome.status == DONE and outcome.result is not None:
                dlg.progress.setValue(dlg.progress.maximum())
        self.finished.emit(outcome)

    def shutdown(self, wait_ms: int) -> bool:
        if self.handle is not None and self.handle.is_running():
            self.handle.cancel()
            return bool(self.handle.wait(wait_ms))
        return True

