"""Background icon generation for the studio: a QObject worker living in a QThread.

Why a worker object (not a QThread subclass): the generator's callbacks run in the worker thread and only emit
signals, which Qt queues to the GUI thread; the GUI never touches torch objects. Cancelling sets a
``threading.Event`` read after every denoising step, so it works while the worker thread is busy inside
diffusers (a queued slot call would wait until generation ended). Each image is written to the library before
its signal is emitted, so cancelling or closing the studio never loses a finished image.
"""
from __future__ import annotations

import threading
import traceback
from pathlib import Path

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.errors import LogiCityError
from core.icongen.generator import GenerationRequest
from core.render.library import IconLibrary


class IconGenWorker(QObject):
    """Runs one :class:`GenerationRequest`; create, move to a thread, connect, start (see :class:`IconGenJob`)."""

    #: images_done, images_total, step, steps, first image index of the batch being denoised (-1 between)
    progress = Signal(int, int, int, int, int)
    status = Signal(str)
    #: library id of a newly saved icon
    imageReady = Signal(str)
    #: error text a user can act on (no model, bad path, out of memory …); ``finished`` still follows
    failed = Signal(str)
    #: number of images saved, whether the run was cancelled
    finished = Signal(int, bool)

    def __init__(self, model: str | Path | None, request: GenerationRequest, library: IconLibrary,
                 device: str = "auto", dtype: str | None = None, status: str = "pending") -> None:
        super().__init__()
        self.model = model
        self.request = request
        self.library = library
        self.device = device
        self.dtype = dtype
        self.save_status = status
        self._cancel = threading.Event()
        self.saved: list[str] = []

    def cancel(self) -> None:
        """Thread-safe: ask the run to stop after the current denoising step."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    @Slot()
    def run(self) -> None:
        cancelled = False
        try:
            from core.icongen.generator import IconGenerator, save_to_library

            gen = IconGenerator(self.model, device=self.device, dtype=self.dtype)

            def on_progress(p) -> None:
                self.progress.emit(p.images_done, p.images_total, p.step, p.steps, p.batch[0] if p.batch else -1)

            def on_image(icon) -> None:
                rec = save_to_library(self.library, icon, self.request.semantic, self.save_status)
                self.saved.append(rec.id)
                self.imageReady.emit(rec.id)

            res = gen.generate(self.request, on_progress=on_progress, on_image=on_image,
                               should_cancel=self._cancel.is_set, status=self.status.emit)
            cancelled = res.cancelled
        except LogiCityError as exc:
            self.failed.emit(str(exc))
        except MemoryError:
            self.failed.emit("out of memory: try a smaller batch or size, or a GPU")
        except Exception as exc:  # noqa: BLE001 - a worker must report, never die silently
            traceback.print_exc()
            self.failed.emit(f"unexpected error during generation: {exc!r}")
        finally:
            self.finished.emit(len(self.saved), cancelled or self._cancel.is_set())


class IconGenJob(QObject):
    """A worker plus its thread, with clean start/cancel/wait. Signals are the worker's, re-emitted."""

    progress = Signal(int, int, int, int, int)
    status = Signal(str)
    imageReady = Signal(str)
    failed = Signal(str)
    finished = Signal(int, bool)

    def __init__(self, worker: IconGenWorker, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName("icongen")
        worker.moveToThread(self.thread)
        self.thread.started.connect(worker.run)
        worker.progress.connect(self.progress)
        worker.status.connect(self.status)
        worker.imageReady.connect(self.imageReady)
        worker.failed.connect(self.failed)
        worker.finished.connect(self._on_finished)

    def start(self) -> None:
        self.thread.start()

    def cancel(self) -> None:
        self.worker.cancel()

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def wait(self, ms: int = 60_000) -> bool:
        return self.thread.wait(ms)

    def _on_finished(self, n: int, cancelled: bool) -> None:
        self.thread.quit()
        self.thread.wait(10_000)
        self.finished.emit(n, cancelled)
