"""One way to run core work off the GUI thread: :class:`JobRunner`.

Why one runner: the studio runs a simulation, generates icons, exports animations and datasets, trains, analyses
and scores studies in the background. Each with its own thread handling would mean as many ways to leak a running
thread at quit; here is the one contract they all follow.

Threading contract (why it is safe):

* A *job* is a plain function ``fn(ctx) -> result`` that runs in a thread of its own. It never touches a widget or
  GUI-owned state; it reads the inputs it was given (immutable, or copies) and talks to the GUI only through its
  :class:`JobContext`: ``ctx.progress(*values)``, ``ctx.status(text)``, ``ctx.post(value)`` (a partial result,
  e.g. an icon that is already saved) and ``ctx.cancelled`` / ``ctx.check_cancelled()``. These are queued
  signals: every message is delivered in the GUI thread, in order, through the :class:`JobHandle`.
* The end comes as one message, ``JobHandle.finished(JobOutcome)``: ``done`` with the function's return value,
  ``failed`` with a :class:`JobError` (the exception: a :class:`core.base.errors.LogiCityError` keeps its located text;
  anything else is named by type and its traceback printed), or ``cancelled``. ``succeeded(result)`` and
  ``failed(JobError)`` come just before it. A job started with ``report=True`` (the default) also reaches
  :attr:`JobRunner.failed`, which the window shows as an error dialog; the job's thread ends either way, the GUI
  stays alive and nothing the job was given is half-changed (jobs compute; the GUI applies results).
* Cancel is cooperative: :meth:`JobHandle.cancel` sets a ``threading.Event`` the job reads between units of work
  (a denoising step, a frame). It works while the job's thread is busy (a queued request would wait).
* Generation stamps: every job has a *key* (default: its kind). Starting a job bumps its key's generation; the
  messages of an older job of that key are dropped (a stale export or analysis never overwrites a newer one). Its
  ``finished`` still arrives, with ``outcome.stale`` set, so an owner can release what it held. Long-lived
  services (the simulation) draw their stamps from the same :class:`Generations`.
* Shutdown, nothing left running: :meth:`JobRunner.shutdown` cancels this runner's jobs, stops its services and
  waits. Process-wide, every job and service thread is held in a registry until it has ended (so a job may
  outlive the panel or window that started it: destroying a running ``QThread`` aborts the process), and
  ``QCoreApplication.aboutToQuit`` and ``atexit`` wait for all of them (:func:`wait_for_all`), saying once what
  they wait for when it takes more than a second (a model load cannot be interrupted).
* Services: a long-lived worker ``QObject`` with its own event loop and request queue (the simulation worker,
  see :mod:`app.shell.worker`) is started with :meth:`JobRunner.start_service`: it shares the registry, shutdown and
  error reporting (:meth:`JobRunner.report`) of jobs; its requests carry stamps from :attr:`JobRunner.generations`.

Usage::

    runner = JobRunner(parent)
    handle = runner.start(lambda ctx: export(frames, out, ctx), kind="export", key="export:gif")
    handle.progress.connect(lambda values: bar.setValue(values[0]))
    handle.finished.connect(on_finished)          # JobOutcome: status done | failed | cancelled
    ...
    runner.shutdown()                             # at close / in tests: cancel, wait, True when nothing runs
"""
from __future__ import annotations

import atexit
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, Signal, Slot

from core.base.errors import LogiCityError

#: Job outcomes (``JobOutcome.status``).
DONE, FAILED, CANCELLED = "done", "failed", "cancelled"


class Cancelled(Exception):
    """Raised by :meth:`JobContext.check_cancelled` inside a job; ends it as ``cancelled``."""


@dataclass(frozen=True)
class JobError:
    """Why a job (or a service request) failed, for a dialog: what ran, which part failed, the problem.

    ``component`` names the failing part where known (for the simulation: engine, grounding, planner …);
    ``details`` holds the traceback of an unexpected error (printed, not shown)."""

    kind: str
    message: str
    component: str = ""
    details: str = ""

    @property
    def text(self) -> str:
        return f"{self.component}: {self.message}" if self.component else self.message

    @classmethod
    def from_exception(cls, kind: str, exc: BaseException, component: str = "") -> "JobError":
        if isinstance(exc, LogiCityError):
            return cls(kind, str(exc), component)
        if isinstance(exc, MemoryError):
            return cls(kind, str(exc) or "out of memory", component)
        details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(kind, f"{type(exc).__name__}: {exc}", component, details)


@dataclass(frozen=True)
class JobOutcome:
    """How a job ended: ``status`` (done / failed / cancelled), its result or error, and whether a newer job of
    the same key had started by then (``stale``: its messages were dropped)."""

    status: str
    result: Any = None
    error: JobError | None = None
    stale: bool = False
    key: str = ""
    gen: int = 0

    @property
    def ok(self) -> bool:
        return self.status == DONE


class Generations:
    """Generation stamps per key (plain ints; written and read in the GUI thread)."""

    def __init__(self) -> None:
        self._gens: dict[str, int] = {}

    def next(self, key: str) -> int:
        self._gens[key] = self._gens.get(key, 0) + 1
        return self._gens[key]

    def current(self, key: str) -> int:
        return self._gens.get(key, 0)

    def is_current(self, key: str, gen: int) -> bool:
        return self._gens.get(key, 0) == gen


class JobContext:
    """What a running job may use (from its own thread): messages to the GUI and the cancel flag."""

    def __init__(self, thread: "_JobThread", cancel: threading.Event, gen: int) -> None:
        self._thread = thread
        self._cancel = cancel
        self.gen = gen

    def progress(self, *values: Any) -> None:
        """Report progress (any values the owner understands, e.g. ``done, total``)."""
        self._thread.sigProgress.emit(tuple(values))

    def status(self, text: str) -> None:
        """A line of text for the owner's status display."""
        self._thread.sigStatus.emit(str(text))

    def post(self, value: Any) -> None:
        """A partial result, delivered before the job ends (e.g. the id of an image already saved)."""
        self._thread.sigPosted.emit(value)

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check_cancelled(self) -> None:
        """Raise :class:`Cancelled` when the job was asked to stop."""
        if self._cancel.is_set():
            raise Cancelled()


class _JobThread(QThread):
    """Runs one job function; its signals are emitted from the job's thread and queued to the handle."""

    sigProgress = Signal(object)
    sigStatus = Signal(str)
    sigPosted = Signal(object)
    sigDone = Signal(object)     # (status, result, error)

    def __init__(self, fn: Callable[[JobContext], Any], kind: str, cancel: threading.Event, gen: int) -> None:
        super().__init__()
        self.fn: Callable[[JobContext], Any] | None = fn
        self.kind = kind
        self.cancel_event = cancel
        self.gen = gen
        self.setObjectName(f"job:{kind}")

    def run(self) -> None:  # the job's thread
        ctx = JobContext(self, self.cancel_event, self.gen)
        msg: tuple[str, Any, JobError | None]
        try:
            assert self.fn is not None, "a job thread runs its function once"
            result = self.fn(ctx)
            msg = (CANCELLED if self.cancel_event.is_set() else DONE, result, None)
        except Cancelled:
            msg = (CANCELLED, None, None)
        except BaseException as exc:  # noqa: BLE001 - a job reports, it never dies silently
            err = JobError.from_exception(self.kind, exc)
            if err.details:
                print(f"job {self.kind!r} failed:\n{err.details}", file=sys.stderr, flush=True)
            msg = (FAILED, None, err)
        finally:
            self.fn = None   # drop what the job held as soon as it is done
        self.sigDone.emit(msg)


class JobHandle(QObject):
    """The GUI-thread side of one job: its messages as signals, cancel and wait.

    Not parented: it may outlive whatever started it; the registry keeps it until its thread has ended."""

    #: the job's thread; the name hides ``QObject.thread()``, which a handle never needs (it lives in the GUI thread)
    thread: _JobThread  # type: ignore[assignment]

    progress = Signal(object)      # tuple of the values given to ctx.progress
    status = Signal(str)
    posted = Signal(object)
    succeeded = Signal(object)     # the result
    failed = Signal(object)        # JobError
    finished = Signal(object)      # JobOutcome (always last)

    def __init__(self, fn: Callable[[JobContext], Any], *, kind: str, key: str, gen: int, gens: Generations,
                 report: Callable[[JobError], None] | None, waiting_message: str) -> None:
        super().__init__()
        self.kind = kind
        self.key = key
        self.gen = gen
        self.waiting_message = waiting_message
        self.outcome: JobOutcome | None = None
        self._gens = gens
        self._report = report
        self._cancel = threading.Event()
        self.thread = _JobThread(fn, kind, self._cancel, gen)
        q = Qt.ConnectionType.QueuedConnection
        self.thread.sigProgress.connect(self._on_progress, q)
        self.thread.sigStatus.connect(self._on_status, q)
        self.thread.sigPosted.connect(self._on_posted, q)
        self.thread.sigDone.connect(self._on_done, q)

    # ---- control (GUI thread) -------------------------------------------------------------------------------
    def cancel(self) -> None:
        """Ask the job to stop at its next check (thread-safe)."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    @property
    def stale(self) -> bool:
        return not self._gens.is_current(self.key, self.gen)

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def wait(self, ms: int | None = 60_000) -> bool:
        """Wait for the job's thread to end (``None``: as long as it takes). Its ``finished`` message is
        delivered later by the event loop (or at once by :meth:`deliver`)."""
        return self.thread.wait() if ms is None else self.thread.wait(max(0, int(ms)))

    # ---- messages (queued to the GUI thread) ----------------------------------------------------------------
    @Slot(object)
    def _on_progress(self, values) -> None:
        if not self.stale:
            self.progress.emit(values)

    @Slot(str)
    def _on_status(self, text: str) -> None:
        if not self.stale:
            self.status.emit(text)

    @Slot(object)
    def _on_posted(self, value) -> None:
        if not self.stale:
            self.posted.emit(value)

    @Slot(object)
    def _on_done(self, msg) -> None:
        if self.outcome is not None:
            return
        status, result, error = msg
        self.thread.wait(10_000)   # run() has returned: this is immediate
        stale = self.stale
        self.outcome = JobOutcome(status, result, error, stale, self.key, self.gen)
        _forget(self)
        if not stale:
            if status == DONE:
                self.succeeded.emit(result)
            elif status == FAILED:
                self.failed.emit(error)
                if self._report is not None:
                    self._report(error)
        self.finished.emit(self.outcome)


class ServiceHandle(QObject):
    """A long-lived worker object in its own thread with an event loop (see :meth:`JobRunner.start_service`)."""

    #: the service's thread; the name hides ``QObject.thread()``, as :attr:`JobHandle.thread` does
    thread: QThread  # type: ignore[assignment]

    def __init__(self, worker: QObject, kind: str, on_stop: Callable[[], None] | None,
                 waiting_message: str) -> None:
        super().__init__()
        self.kind = kind
        self.worker = worker
        self.waiting_message = waiting_message
        self._on_stop = on_stop
        self.stopped = False
        self.thread = QThread()
        self.thread.setObjectName(kind)
        worker.moveToThread(self.thread)
        self.thread.finished.connect(worker.deleteLater)

    def cancel(self) -> None:
        """Ask the service to stop: its stop request is queued, then its event loop ends (the request that is
        running finishes first)."""
        if not self.stopped:
            self.stopped = True
            if self._on_stop is not None:
                try:
                    self._on_stop()
                except RuntimeError:   # the object that queues the stop request is gone: just end the loop
                    pass
            self.thread.quit()

    def is_running(self) -> bool:
        return self.thread.isRunning()

    def wait(self, ms: int | None = 10_000) -> bool:
        ok = self.thread.wait() if ms is None else self.thread.wait(max(0, int(ms)))
        if ok:
            _forget(self)
        return bool(ok)

    def stop(self, timeout_ms: int | None = 10_000) -> bool:
        """Stop the service and wait for its thread; True when it has ended."""
        self.cancel()
        return self.wait(timeout_ms)


# ---- the process-wide registry of running threads -----------------------------------------------------------
#: what the registry holds: a job's or a service's GUI-thread side
Handle = JobHandle | ServiceHandle

_LIVE: dict[Handle, QThread] = {}
_LIVE_LOCK = threading.Lock()
_HOOKED_APPS: set[int] = set()
_ATEXIT_HOOKED = False


def _register(handle: Handle, thread: QThread) -> None:
    global _ATEXIT_HOOKED
    with _LIVE_LOCK:
        _LIVE[handle] = thread
    app = QCoreApplication.instance()
    if app is not None and id(app) not in _HOOKED_APPS:
        _HOOKED_APPS.add(id(app))
        app.aboutToQuit.connect(lambda: wait_for_all())
    if not _ATEXIT_HOOKED:
        _ATEXIT_HOOKED = True
        atexit.register(wait_for_all)


def _forget(handle: Handle) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(handle, None)


def running() -> list[Handle]:
    """Job and service handles whose thread has not ended yet (started by any runner)."""
    with _LIVE_LOCK:
        for h, thread in list(_LIVE.items()):
            try:
                if thread.isFinished():
                    del _LIVE[h]
            except RuntimeError:   # the C++ thread object is gone: nothing runs
                del _LIVE[h]
        return list(_LIVE)


def wait_for(handles: list[Handle], timeout_ms: int | None = None,
             say: Callable[[str], None] | None = None) -> bool:
    """Cancel ``handles`` and wait for their threads (``None``: as long as it takes). ``say`` (default: stderr)
    hears each one's waiting message once when it takes more than a second. True when none is left running."""
    for h in handles:
        try:
            h.cancel()
        except RuntimeError:
            pass
    deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
    t_start = time.monotonic()
    told: set[str] = set()
    for h in handles:
        try:
            thread = h.thread
            while True:
                left = 200 if deadline is None else int((deadline - time.monotonic()) * 1000)
                if thread.wait(max(0, min(200, left))):
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                msg = getattr(h, "waiting_message", "")
                if msg and msg not in told and time.monotonic() - t_start >= 1.0:
                    told.add(msg)
                    (say or (lambda m: print(m, file=sys.stderr, flush=True)))(msg)
        except RuntimeError:   # the thread object is already gone
            pass
    running()
    return True


def wait_for_all(timeout_ms: int | None = None, say: Callable[[str], None] | None = None) -> bool:
    """Cancel every job, stop every service and wait for all their threads (quit, atexit and tests)."""
    return wait_for(running(), timeout_ms, say)


class JobRunner(QObject):
    """Starts jobs and services, stamps them, reports their errors and shuts them down (see the module docstring).

    ``failed(JobError)``: a job started with ``report=True`` or a service (via :meth:`report`) failed."""

    failed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.generations = Generations()
        self._mine: list[Handle] = []
        self.last_error: JobError | None = None

    def start(self, fn: Callable[[JobContext], Any], *, kind: str, key: str | None = None, report: bool = True,
              waiting_message: str | None = None) -> JobHandle:
        """Run ``fn(ctx)`` in a new thread; returns its handle (connect to its signals right away: messages are
        delivered by the event loop, never before this returns)."""
        key = key or kind
        gen = self.generations.next(key)
        handle = JobHandle(fn, kind=kind, key=key, gen=gen, gens=self.generations,
                           report=self._report_from_job if report else None,
                           waiting_message=waiting_message or f"waiting for the {kind} job to stop…")
        self._track(handle)
        _register(handle, handle.thread)
        handle.thread.start()
        return handle

    def start_service(self, worker: QObject, *, kind: str, on_stop: Callable[[], None] | None = None,
                      waiting_message: str | None = None) -> ServiceHandle:
        """Move ``worker`` into a new thread with an event loop and start it. ``on_stop`` (GUI thread) queues the
        worker's own stop request before the loop ends; the service lives until :meth:`ServiceHandle.stop`,
        :meth:`shutdown` or the application quits."""
        handle = ServiceHandle(worker, kind, on_stop, waiting_message or f"waiting for the {kind} to stop…")
        self._track(handle)
        _register(handle, handle.thread)
        handle.thread.start()
        return handle

    def report(self, error: JobError) -> None:
        """Report a failure (of a service request, or of a job the owner handled) through :attr:`failed`."""
        self.last_error = error
        self.failed.emit(error)

    def _report_from_job(self, error: JobError) -> None:
        try:
            self.report(error)
        except RuntimeError:   # the runner (its window) is gone; the job's own signals still carried it
            pass

    def _track(self, handle: Handle) -> None:
        live = set(running())
        self._mine = [h for h in self._mine if h in live]
        self._mine.append(handle)

    def active(self) -> list[Handle]:
        """This runner's jobs and services that are still running."""
        live = set(running())
        self._mine = [h for h in self._mine if h in live]
        return list(self._mine)

    def cancel_all(self) -> None:
        for h in self.active():
            if isinstance(h, JobHandle):
                h.cancel()

    def shutdown(self, timeout_ms: int | None = 10_000, say: Callable[[str], None] | None = None) -> bool:
        """Cancel this runner's jobs, stop its services and wait; True when none is left running."""
        return wait_for(self.active(), timeout_ms, say)
