"""The job runner (app/shell/jobs.py) with pytest-qt: results, progress, partial results, errors, cancel, generation
stamps that drop stale results, services, and shutdown with nothing left running."""
from __future__ import annotations

import threading
import time

import pytest
from PySide6 import QtCore

from app.shell import jobs as jobs_mod
from app.shell.jobs import CANCELLED, DONE, FAILED, JobError, JobRunner
from core.base.errors import LogiCityError

pytestmark = pytest.mark.gui
WAIT = 30_000


@pytest.fixture
def runner(qapp):
    r = JobRunner()
    yield r
    assert r.shutdown(10_000), "a job was left running"
    assert not r.active()


def finish(qtbot, handle):
    """The job's outcome, once its ``finished`` message has been delivered (it may already have been)."""
    seen = []
    handle.finished.connect(seen.append)
    qtbot.waitUntil(lambda: handle.outcome is not None, timeout=WAIT)
    assert seen in ([], [handle.outcome])
    return handle.outcome


def test_result_progress_status_and_partial_results_arrive_in_the_gui_thread(qtbot, runner):
    seen = []
    gui = threading.get_ident()

    def job(ctx):
        for i in range(3):
            ctx.progress(i + 1, 3)
            ctx.post(f"item{i}")
        ctx.status("almost")
        return threading.get_ident()

    h = runner.start(job, kind="test")
    for sig in ("progress", "posted", "status"):
        getattr(h, sig).connect(lambda v, sig=sig: seen.append((sig, v, threading.get_ident() == gui)))
    got = []
    h.succeeded.connect(got.append)
    out = finish(qtbot, h)
    assert out.status == DONE and out.ok and not out.stale
    assert out.result != gui and got == [out.result]              # the job ran in another thread
    assert [v for s, v, _ in seen if s == "progress"] == [(1, 3), (2, 3), (3, 3)]
    assert [v for s, v, _ in seen if s == "posted"] == ["item0", "item1", "item2"]
    assert ("status", "almost", True) in seen
    assert all(in_gui for _, _, in_gui in seen)                   # delivered in the GUI thread
    assert not h.is_running()


def test_a_failing_job_reports_its_error_and_the_gui_keeps_running(qtbot, runner):
    reported = []
    runner.failed.connect(reported.append)

    def boom(ctx):
        raise LogiCityError("the rules file is broken", "rules.txt", line=3)

    h = runner.start(boom, kind="analysis")
    out = finish(qtbot, h)
    assert out.status == FAILED and isinstance(out.error, JobError)
    assert out.error.kind == "analysis" and "rules.txt:3" in out.error.message and not out.error.details
    assert reported == [out.error]
    # an unexpected exception: named by type, traceback kept; report=False leaves the dialog to the owner
    h2 = runner.start(lambda ctx: {}["missing"], kind="scoring", report=False)
    out2 = finish(qtbot, h2)
    assert out2.status == FAILED and out2.error.message.startswith("KeyError") and "Traceback" in out2.error.details
    assert reported == [out.error]
    # and the runner still works
    assert finish(qtbot, runner.start(lambda ctx: 42, kind="analysis")).result == 42


def test_cancel_stops_a_running_job_cooperatively(qtbot, runner):
    started = threading.Event()

    def slow(ctx):
        started.set()
        for _ in range(1000):
            ctx.check_cancelled()
            time.sleep(0.01)
        return "never"

    h = runner.start(slow, kind="export")
    assert started.wait(10)
    h.cancel()
    out = finish(qtbot, h)
    assert out.status == CANCELLED and out.result is None

    def polite(ctx):   # a job may also look at ctx.cancelled and return what it has
        while not ctx.cancelled:
            time.sleep(0.005)
        return "partial"

    h2 = runner.start(polite, kind="export")
    h2.cancel()
    out2 = finish(qtbot, h2)
    assert out2.status == CANCELLED and out2.result == "partial"


def test_a_newer_job_of_the_same_key_drops_the_stale_result(qtbot, runner):
    gate = threading.Event()

    def old_job(ctx):
        gate.wait(10)
        ctx.progress("old")
        return "old"

    old = runner.start(old_job, kind="analysis", key="rules")
    new = runner.start(lambda ctx: "new", kind="analysis", key="rules")
    other = runner.start(lambda ctx: "other", kind="analysis", key="elsewhere")
    old_msgs = []
    old.succeeded.connect(old_msgs.append)
    old.progress.connect(old_msgs.append)
    assert finish(qtbot, new).result == "new"
    assert finish(qtbot, other).result == "other"      # other keys are not affected
    gate.set()
    out = finish(qtbot, old)
    assert out.stale and out.result == "old" and old_msgs == []   # finished arrives; its messages were dropped
    assert old.gen < new.gen and runner.generations.is_current("rules", new.gen)


def test_shutdown_cancels_and_waits_so_nothing_is_left_running(qtbot, qapp):
    r = JobRunner()
    started = threading.Event()

    def busy(ctx):
        started.set()
        while not ctx.cancelled:
            time.sleep(0.01)

    h = r.start(busy, kind="training")
    assert started.wait(10)
    assert h in jobs_mod.running()
    assert r.shutdown(10_000)
    assert not h.is_running() and h not in jobs_mod.running() and not r.active()


def test_shutdown_says_what_it_waits_for_and_times_out_on_a_job_that_cannot_stop(qtbot, qapp):
    r = JobRunner()
    release = threading.Event()
    h = r.start(lambda ctx: release.wait(30), kind="model load", waiting_message="waiting for the model load…")
    said = []
    assert r.shutdown(1300, say=said.append) is False        # cannot be interrupted: still running
    assert said == ["waiting for the model load…"]
    release.set()
    assert r.shutdown(10_000) and not h.is_running()


class _Echo(QtCore.QObject):
    """A tiny service: answers requests in its own thread, stamped with the request's generation."""

    answered = QtCore.Signal(int, object)
    stoppedIn = QtCore.Signal(object)

    @QtCore.Slot(int, object)
    def ask(self, gen, value):
        self.answered.emit(gen, (value, threading.get_ident()))

    @QtCore.Slot()
    def stop(self):
        self.stoppedIn.emit(threading.get_ident())


class _EchoClient(QtCore.QObject):
    ask = QtCore.Signal(int, object)
    stop = QtCore.Signal()


def test_a_service_shares_the_generations_registry_and_shutdown(qtbot, runner):
    worker, client = _Echo(), _EchoClient()
    client.ask.connect(worker.ask)
    client.stop.connect(worker.stop)
    stops = []
    worker.stoppedIn.connect(stops.append, QtCore.Qt.ConnectionType.DirectConnection)
    svc = runner.start_service(worker, kind="echo", on_stop=client.stop.emit)
    assert svc in runner.active() and svc.is_running()
    answers = []
    worker.answered.connect(lambda g, v: answers.append((g, v)))
    g1 = runner.generations.next("echo")
    client.ask.emit(g1, "a")
    g2 = runner.generations.next("echo")
    client.ask.emit(g2, "b")
    qtbot.waitUntil(lambda: len(answers) == 2, timeout=WAIT)
    current = [v for g, (v, _t) in answers if runner.generations.is_current("echo", g)]
    assert current == ["b"] and answers[0][1][1] != threading.get_ident()
    assert runner.shutdown(10_000)
    assert not svc.is_running() and len(stops) == 1 and svc not in jobs_mod.running()


def test_a_job_outlives_its_runner_and_quitting_waits_for_it(qtbot, qapp):
    """The registry holds the job's thread after its runner (a window) is gone; wait_for_all ends it."""
    parent = QtCore.QObject()
    r = JobRunner(parent)
    started = threading.Event()

    def busy(ctx):
        started.set()
        while not ctx.cancelled:
            time.sleep(0.01)
        return "stopped"

    h = r.start(busy, kind="export")
    assert started.wait(10)
    parent.deleteLater()
    qtbot.wait(20)
    assert h in jobs_mod.running()
    assert jobs_mod.wait_for_all(10_000)
    assert not h.is_running() and not jobs_mod.running()


def test_a_failing_job_in_the_studio_shows_its_error_and_the_session_stays_consistent(studio, qtbot):
    import numpy as np
    from PySide6 import QtWidgets

    from tests.support.studio import WAIT as STUDIO_WAIT
    from tests.support.studio import simulate

    simulate(qtbot, studio, 5)
    studio.set_cursor(3)
    before = (studio.num_steps, studio.cursor, studio.dirty, np.array(studio.history.array("positions")))
    studio.last_error = None

    def analysis(ctx):
        ctx.progress(1, 2)
        raise ValueError("the solver gave up")

    h = studio.jobs.start(analysis, kind="analysis")
    qtbot.waitUntil(lambda: studio.last_error is not None, timeout=STUDIO_WAIT)
    assert studio.last_error == ("The analysis failed", "analysis", "ValueError: the solver gave up")
    box = studio.window.findChild(QtWidgets.QMessageBox, "errorDialog")
    assert box is not None and box.isVisible() and "the solver gave up" in box.informativeText()
    assert h.outcome.status == FAILED and not h.is_running()
    after = (studio.num_steps, studio.cursor, studio.dirty, np.array(studio.history.array("positions")))
    assert after[:3] == before[:3] and np.array_equal(after[3], before[3])   # the session is as it was
    box.close()
    studio.set_cursor(studio.num_steps)                                     # and the studio keeps working
    studio.simulate_step()
    qtbot.waitUntil(lambda: studio.num_steps == before[0] + 1, timeout=STUDIO_WAIT)
    assert studio.window.isVisible()
