"""Background icon generation for the studio: a QObject worker living in a QThread.

Why a worker object (not a QThread subclass): the generator's callbacks run in the worker thread and only emit
signals, which Qt queues to the GUI thread; the GUI never touches torch objects. Cancelling sets a
``threading.Event`` read after every denoising step, so it works while the worker thread is busy inside
diffusers (a queued slot call would wait until generation ended). Each image is written to the library before
its signal is emitted, so cancelling or closing the studio never loses a finished image.
"""
from __future__ import annotations

import atexit
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Signal, Slot

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


WAITING_MESSAGE = "waiting for the icon generator to stop… (a model that is loading cannot be interrupted; " \
                  "finished images are saved)"

#: Threads of the jobs that may still run, by job. Holding them here (not only in the dock that started them) keeps
#: each QThread object alive until its thread has ended, whatever happens to the dock or the window: destroying a
#: running QThread aborts the process ("QThread: Destroyed while thread … is still running").
_LIVE: dict["IconGenJob", QThread] = {}
_LIVE_LOCK = threading.Lock()
_HOOKED_APPS: set[int] = set()
_ATEXIT_HOOKED = False


def running_jobs() -> list["IconGenJob"]:
    """Jobs whose thread has not ended yet (started by any dock)."""
    with _LIVE_LOCK:
        for job, thread in list(_LIVE.items()):
            if thread.isFinished():
                del _LIVE[job]
        return list(_LIVE)


def wait_for_jobs(timeout_ms: int | None = None, say: Callable[[str], None] | None = None) -> bool:
    """Cancel every running job and wait for its thread to end (``timeout_ms=None``: as long as it takes).

    Model loading cannot be interrupted, so this can last as long as the rest of a load; ``say`` (default: print
    to stderr) hears :data:`WAITING_MESSAGE` once when it takes more than a second. Finished images are already
    saved by then. Returns True when no job is left running.
    """
    with _LIVE_LOCK:
        threads = list(_LIVE.items())
    for job, _thread in threads:
        job.worker.cancel()
    deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
    told = False
    for _job, thread in threads:
        while True:
            left = 1000 if deadline is None else int((deadline - time.monotonic()) * 1000)
            if thread.wait(max(0, min(1000, left))):
                break
            if deadline is not None and time.monotonic() >= deadline:
                return False
            if not told:
                told = True
                (say or (lambda m: print(m, file=sys.stderr, flush=True)))(WAITING_MESSAGE)
    running_jobs()  # forget the finished ones
    return True


def _install_exit_hooks() -> None:
    """Make the application (and, as a last resort, the interpreter) wait for running jobs before tearing down."""
    global _ATEXIT_HOOKED
    app = QCoreApplication.instance()
    if app is not None and id(app) not in _HOOKED_APPS:
        _HOOKED_APPS.add(id(app))
        app.aboutToQuit.connect(lambda: wait_for_jobs())
    if not _ATEXIT_HOOKED:
        _ATEXIT_HOOKED = True
        atexit.register(wait_for_jobs)


class IconGenJob(QObject):
    """A worker plus its thread, with clean start/cancel/wait. Signals are the worker's, re-emitted.

    The thread ends by itself when the worker is done (it does not need the GUI's event loop for that), and the
    job is kept alive in a module-level set until then, so a dock or window may go away while it runs; the
    application waits for it when quitting (see :func:`wait_for_jobs`).
    """

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
        # quit the thread's event loop from the worker thread itself: a queued quit would never run when the GUI
        # thread is blocked waiting for this thread, or when its event loop has already ended
        worker.finished.connect(self.thread.quit, Qt.ConnectionType.DirectConnection)
        worker.finished.connect(self._on_finished)

    def start(self) -> None:
        with _LIVE_LOCK:
            _LIVE[self] = self.thread
        _install_exit_hooks()
        self.thread.start()

    def cancel(self) -> None:
        self.worker.cancel()

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def wait(self, ms: int = 60_000) -> bool:
        return self.thread.wait(ms)

    def _on_finished(self, n: int, cancelled: bool) -> None:
        self.thread.wait(10_000)  # the worker asked the thread to quit: this returns at once
        self.finished.emit(n, cancelled)
