"""Exporting the map view: one PNG, or a step range as an animated GIF or a PNG image sequence.

Why it never freezes the GUI: frames are drawn one per timer tick by a hidden copy of the map view (same city,
colours, overlays and visible region as the user's view, so the export looks like what is on screen; Qt draws in
the GUI thread only) and the progress dialog stays live between ticks; the GIF's final encoding (pure Pillow) is a
job of the studio's :class:`app.shell.jobs.JobRunner` while the dialog waits. Cancel stops at the next tick and writes
nothing for a GIF, also while it is being encoded (frames already written for an image sequence stay). Failures (an
unwritable folder, a full disk) end in an error dialog.

:class:`ExportController` is what the window holds: it knows the session (what is recorded), the job runner, the
map view to copy the look of, and how to build the scene of a step; the window never hands itself to the export.

With ``caption=True`` every frame carries its step number in the top-left corner ("step 42") so a GIF or an image
shown on its own still says which state it is; the dialog's checkbox is ticked by default and remembered, the
programmatic default (``ExportController.start``) is off. The dialog proposes the folder of the last export (kept in
the settings), else the project's folder, else the home folder — never the folder the studio was launched from.

Every file is written atomically (core/io/fileio.py), so a killed export leaves no half-written image under its final
name; the temporary files a killed export leaves are removed when the next export writes into that folder.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from app.shell.features import FeatureController
from app.shell.jobs import CANCELLED, FAILED, JobHandle, JobOutcome, JobRunner
from app.shell.services import Shell
from core.io.fileio import atomic_write_bytes, clean_stale_temps
from core.studio.session import Session
from core.view.export import DEFAULT_PATTERN, GifBuilder, parse_range, sequence_paths
from widgets.choice_dialog import ok_cancel_buttons
from widgets.map_view import MapView


def save_view_png(view: MapView, path: str | Path, width: int | None = None) -> Path:
    """Save what the map view shows as a PNG (``width`` px wide, default: its on-screen size)."""
    path = Path(path)
    clean_stale_temps(path.parent)
    atomic_write_bytes(path, png_bytes(view.render_image(width)))
    return path


def png_bytes(img: QtGui.QImage) -> bytes:
    """``img`` encoded as PNG (to be written atomically)."""
    buf = QtCore.QBuffer()
    buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    if not img.save(buf, "PNG"):  # type: ignore[call-overload]  # PySide6's stub says bytes; it takes only a str
        raise OSError("Qt could not encode the image as PNG")
    return bytes(buf.data().data())


def draw_caption(img: QtGui.QImage, text: str) -> QtGui.QImage:
    """``img`` with ``text`` in a dark box in its top-left corner (font scaled with the image width)."""
    out = img.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    painter = QtGui.QPainter(out)
    font = painter.font()
    font.setPixelSize(max(11, out.width() // 36))
    font.setBold(True)
    painter.setFont(font)
    pad = max(3, font.pixelSize() // 3)
    box = painter.fontMetrics().boundingRect(text).adjusted(-pad, -pad, pad, pad)
    box.moveTopLeft(QtCore.QPoint(pad, pad))
    painter.fillRect(box, QtGui.QColor(0, 0, 0, 170))
    painter.setPen(QtGui.QColor(255, 255, 255))
    painter.drawText(box, QtCore.Qt.AlignmentFlag.AlignCenter, text)
    painter.end()
    return out


def caption_text(step: int) -> str:
    return f"step {step}"


def qimage_to_rgb(img: QtGui.QImage) -> np.ndarray:
    img = img.convertToFormat(QtGui.QImage.Format.Format_RGB888)
    w, h = img.width(), img.height()
    arr = np.frombuffer(img.constBits(), np.uint8, count=img.bytesPerLine() * h).reshape(h, img.bytesPerLine())
    return arr[:, : w * 3].reshape(h, w, 3).copy()


class FrameExporter(QtCore.QObject):
    """Draws the states ``steps`` one per timer tick (``scene_for(k)`` builds the scene of state k, drawn by a
    hidden copy of ``view``) and writes them; a GIF is encoded as a job of ``jobs``.

    ``kind`` is ``"gif"`` (``out`` = .gif file) or ``"images"`` (``out`` = folder, names from ``pattern``).
    Signals progress(done, total) and finished(ok, message).
    """

    progress = QtCore.Signal(int, int)
    finished = QtCore.Signal(bool, str)

    def __init__(self, view: MapView, scene_for: Callable[[int], Any], jobs: JobRunner, steps: list[int], kind: str,
                 out: str | Path, *, width: int = 720, fps: float = 10.0, pattern: str = DEFAULT_PATTERN,
                 caption: bool = False, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.scene_for = scene_for
        self.caption = caption
        self.jobs = jobs
        self.steps = list(steps)
        self.kind = kind
        self.out = Path(out)
        self.width = int(width)
        self.cancelled = False
        self.user_cancelled = False   # Cancel was pressed before the export finished
        self.done = 0
        self.paths = sequence_paths(self.out, pattern, self.steps) if kind == "images" else []
        self.gif = GifBuilder(fps, max_side=None) if kind == "gif" else None
        self.view = view.offscreen_copy()
        self._timer = QtCore.QTimer(self)
        self._timer.timeout.connect(self._tick)
        self.encode_job: JobHandle | None = None

    def start(self) -> None:
        if self.kind == "images":
            try:
                self.out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:   # read-only disk, a file in the way, no permission: report, never raise
                why = exc.strerror or str(exc)
                self._finish(False, f"cannot create the folder {self.out}: {why}")
                return
        clean_stale_temps(self.out if self.kind == "images" else self.out.parent)   # a killed export's leftovers
        self._timer.start(0)

    def cancel(self) -> None:
        self.cancelled = True
        if self.encode_job is not None:
            self.encode_job.cancel()

    def _tick(self) -> None:
        if self.cancelled:
            self._finish(False, "Export cancelled" + (f"; {self.done} images were written" if self.paths else ""))
            return
        if self.done >= len(self.steps):
            self._timer.stop()
            if self.gif is not None:
                self._encode_gif()
            else:
                self._finish(True, f"Wrote {len(self.paths)} images to {self.out}")
            return
        k = self.steps[self.done]
        try:
            self.view.show_scene(self.scene_for(k))
            img = self.view.render_image(self.width)
            if self.caption:
                img = draw_caption(img, caption_text(k))
            if self.gif is not None:
                self.gif.add(qimage_to_rgb(img))
            else:
                atomic_write_bytes(self.paths[self.done], png_bytes(img))
        except Exception as exc:  # noqa: BLE001
            self._finish(False, f"{type(exc).__name__}: {exc}")
            return
        self.done += 1
        self.progress.emit(self.done, len(self.steps))

    def _encode_gif(self) -> None:
        gif, out = self.gif, self.out
        assert gif is not None

        def encode(ctx) -> bool:   # in the job's thread; a Cancel while encoding is honoured right before the commit
            return gif.save(out, cancelled=lambda: ctx.cancelled) is not None

        self.encode_job = self.jobs.start(encode, kind="GIF export", key=f"export-{id(self)}", report=False,
                                          waiting_message="waiting for the GIF export to finish…")
        if self.cancelled:
            self.encode_job.cancel()
        self.encode_job.finished.connect(self._on_encoded)

    def _on_encoded(self, outcome: JobOutcome) -> None:
        written = bool(outcome.result)
        if outcome.status == FAILED:
            self._finish(False, outcome.error.message if outcome.error is not None else "the GIF was not written")
        elif outcome.status == CANCELLED and not written:
            self._finish(False, "Export cancelled; no GIF was written")
        elif outcome.status == CANCELLED:   # Cancel came after the file was committed: say so
            self._finish(True, f"Wrote {self.out} ({len(self.steps)} frames; Cancel came after it was written)")
        else:
            self._finish(True, f"Wrote {self.out} ({len(self.steps)} frames)")

    def _finish(self, ok: bool, msg: str) -> None:
        # decided before the signal: closing the progress dialog (a receiver) emits its canceled() as well
        self.user_cancelled = self.cancelled
        self._timer.stop()
        self.view.hide()
        self.view.deleteLater()
        self.finished.emit(ok, msg)


class ExportController(FeatureController):
    """Runs exports for the window: from the session's recording, looking like ``view``, on ``jobs``.

    ``scene_for(k)`` builds the scene of state k as the map shows it (colours, selection, paths, field of view);
    ``pause()`` stops playback first; errors and messages go through ``shell`` (``show_error``, ``status``)."""

    def __init__(self, shell: Shell, session: Session, jobs: JobRunner, view: MapView,
                 scene_for: Callable[[int], Any], pause: Callable[[], None]) -> None:
        super().__init__(shell.dialog_parent)
        self.shell = shell
        self.session = session
        self.jobs = jobs
        self.view = view
        self.scene_for = scene_for
        self.pause = pause
        self.current: FrameExporter | None = None
        self.progress_dialog: QtWidgets.QProgressDialog | None = None

    @property
    def num_steps(self) -> int:
        return self.session.num_steps

    def dialog(self) -> "ExportDialog":
        return ExportDialog(self, self.shell.dialog_parent)

    def export_png(self, path: str | None = None) -> bool:
        """File ▸ Export view as PNG: the map view as shown (``path`` None: asked for)."""
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self.shell.dialog_parent, "Export map view",
                                                            str(self.default_folder() / "map.png"),
                                                            "PNG image (*.png)")
            if not path:
                return False
        try:
            save_view_png(self.view, path)
        except Exception as exc:  # noqa: BLE001 - any failure to write is the user's to see, not a crash
            self.shell.show_error("Could not export the view", str(path), f"{type(exc).__name__}: {exc}")
            return False
        self.remember_folder(Path(path).parent)
        self.shell.status(f"Saved {path}")
        return True

    def export_animation(self) -> None:
        """File ▸ Export steps as GIF / images: the dialog (nothing to export before a recording exists)."""
        if self.session.history is not None:
            self.dialog().open()

    # ---- the remembered folder and caption choice (settings keys export/folder, export/caption) ---------------
    def default_folder(self) -> Path:
        """Where an export dialog starts: the last export's folder, else the project's, else the home folder."""
        last = self.shell.settings.value("export/folder", "")
        if last and Path(str(last)).is_dir():
            return Path(str(last))
        p = self.session.project
        if p is not None and p.root is not None and Path(p.root).is_dir():
            return Path(p.root)
        return Path.home()

    def remember_folder(self, folder: str | Path) -> None:
        self.shell.settings.setValue("export/folder", str(Path(folder).resolve()))

    @property
    def caption_default(self) -> bool:
        v = self.shell.settings.value("export/caption", True)
        return v if isinstance(v, bool) else str(v).lower() == "true"

    def start(self, steps: list[int], kind: str, out: str | Path, *, width: int = 720, fps: float = 10.0,
              pattern: str = DEFAULT_PATTERN, show_progress: bool = True, caption: bool = False) -> FrameExporter:
        """Start an export with a progress dialog (Cancel stops it); returns the running exporter. ``caption``
        writes each frame's step number into it."""
        self.pause()
        exp = FrameExporter(self.view, self.scene_for, self.jobs, steps, kind, out, width=width, fps=fps,
                            pattern=pattern, caption=caption, parent=self)
        self.remember_folder(Path(out).parent)
        self.current = exp
        if show_progress:
            dlg = QtWidgets.QProgressDialog("Exporting frames…", "Cancel", 0, len(steps), self.shell.dialog_parent)
            dlg.setWindowTitle("Export")
            dlg.setObjectName("exportProgress")
            dlg.setWindowModality(QtCore.Qt.WindowModality.WindowModal)
            dlg.setMinimumDuration(300)
            dlg.setAutoClose(False)
            dlg.setAutoReset(False)
            dlg.canceled.connect(exp.cancel)

            def on_progress(done: int, total: int) -> None:
                dlg.setValue(done)
                if done >= total and kind == "gif":
                    dlg.setLabelText("Encoding the GIF…")
                    dlg.setRange(0, 0)

            exp.progress.connect(on_progress)

            def on_done(ok: bool, msg: str) -> None:
                dlg.reset()
                dlg.close()

            exp.finished.connect(on_done)
            self.progress_dialog = dlg

        def on_finished(ok: bool, msg: str) -> None:
            self.shell.status(msg, 10000)
            if not ok and not exp.user_cancelled:  # a real failure (bad folder, disk full) deserves a dialog
                self.shell.show_error("Could not export the steps", str(out), msg)

        exp.finished.connect(on_finished)
        exp.start()
        return exp


class ExportDialog(QtWidgets.QDialog):
    """Choose a step range, stride, format, size and output; starts the export through an :class:`ExportController`."""

    def __init__(self, controller: ExportController, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setWindowTitle("Export steps")
        self.setObjectName("exportDialog")
        t = controller.num_steps
        form = QtWidgets.QFormLayout(self)
        self.range_edit = QtWidgets.QLineEdit(f"0-{t}")
        self.range_edit.setToolTip("e.g. 10-50, 10-, -50 or all")
        form.addRow("Steps:", self.range_edit)
        self.stride = QtWidgets.QSpinBox()
        self.stride.setRange(1, 1000)
        form.addRow("Every n-th step:", self.stride)
        self.kind = QtWidgets.QComboBox()
        self.kind.addItem("Animated GIF", "gif")
        self.kind.addItem("PNG image sequence (folder)", "images")
        form.addRow("Format:", self.kind)
        self.width_spin = QtWidgets.QSpinBox()
        self.width_spin.setRange(64, 4096)
        self.width_spin.setValue(720)
        self.width_spin.setSuffix(" px")
        form.addRow("Width:", self.width_spin)
        self.fps = QtWidgets.QDoubleSpinBox()
        self.fps.setRange(0.5, 50)
        self.fps.setValue(10)
        form.addRow("GIF frames per second:", self.fps)
        out_row = QtWidgets.QHBoxLayout()
        self.out_edit = QtWidgets.QLineEdit(str(controller.default_folder() / "episode.gif"))
        browse = QtWidgets.QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        out_row.addWidget(self.out_edit)
        out_row.addWidget(browse)
        form.addRow("Save to:", out_row)
        self.caption = QtWidgets.QCheckBox("Caption each frame with its step number")
        self.caption.setChecked(controller.caption_default)
        form.addRow("", self.caption)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        bb = ok_cancel_buttons(self, self._start)
        form.addRow(bb)

    def _kind_changed(self) -> None:
        p = Path(self.out_edit.text())
        if self.kind.currentData() == "gif":
            self.out_edit.setText(str(p.with_suffix(".gif") if p.suffix else p / "episode.gif"))
        else:
            self.out_edit.setText(str(p.with_suffix("") if p.suffix else p))

    def _browse(self) -> None:
        if self.kind.currentData() == "gif":
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Save GIF", self.out_edit.text(), "GIF (*.gif)")
        else:
            path = QtWidgets.QFileDialog.getExistingDirectory(self, "Folder for the images", self.out_edit.text())
        if path:
            self.out_edit.setText(path)

    def _start(self) -> None:
        try:
            rng = parse_range(self.range_edit.text(), self.controller.num_steps, self.stride.value())
        except ValueError as exc:
            QtWidgets.QMessageBox.warning(self, "Export steps", str(exc))
            return
        self.accept()
        self.controller.shell.settings.setValue("export/caption", self.caption.isChecked())
        self.controller.start(rng.steps(), self.kind.currentData(), self.out_edit.text(),
                              width=self.width_spin.value(), fps=self.fps.value(), caption=self.caption.isChecked())
