"""Cyclic garbage is collected in the GUI thread only (app/shell/gui_gc.py): a job thread that allocates never runs the
collector, even when it makes the unreachable Qt objects the collector would destroy."""
from __future__ import annotations

import gc
import threading

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from app.shell import gui_gc  # noqa: E402


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _collections_by_thread():
    seen: list[str] = []

    def cb(phase, info):
        if phase == "start":
            seen.append(threading.current_thread().name)
    gc.callbacks.append(cb)
    return seen, cb


def test_a_job_thread_never_collects_and_the_gui_thread_does(qtbot):
    assert gui_gc.installed() and not gc.isenabled()     # every Qt test runs as the studio does
    seen, cb = _collections_by_thread()
    try:
        timers = [QtCore.QTimer() for _ in range(50)]      # GUI-thread Qt objects that become cyclic garbage
        for t in timers:
            t.setProperty("owner", 0)
            t.keep = t                                      # a cycle through the wrapper
        del timers, t

        def allocate() -> None:                            # far past the threshold that triggers a collection
            for _ in range(20 * gc.get_threshold()[0]):
                _Cycle()
        worker = threading.Thread(target=allocate, name="job")
        worker.start()
        worker.join()
        assert "job" not in seen
        qtbot.waitUntil(lambda: threading.main_thread().name in seen, timeout=5_000)
    finally:
        gc.callbacks.remove(cb)


def test_uninstall_turns_the_automatic_collector_back_on(qtbot):
    gui_gc.uninstall()
    try:
        assert gc.isenabled() and not gui_gc.installed()
        seen, cb = _collections_by_thread()
        try:
            worker = threading.Thread(target=lambda: [_Cycle() for _ in range(5 * gc.get_threshold()[0])],
                                      name="job")
            worker.start()
            worker.join()
        finally:
            gc.callbacks.remove(cb)
        assert "job" in seen                                # what the GUI-thread collector prevents
    finally:
        gui_gc.install()


def test_the_studio_entry_installs_it(tmp_path):
    """In its own interpreter: the studio's entry leaves its QApplication (and this process) quit."""
    import os
    import subprocess
    import sys

    from tests.support.paths import ROOT

    out = tmp_path / "shot.png"
    probe = ("import sys; from app.shell import gui_gc, studio; "
             f"rc = studio.run_studio(['--screenshot', {str(out)!r}, '--steps', '1']); "
             "print('installed' if gui_gc.installed() else 'not installed', rc)")
    r = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=240,
                       env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split()[-2:] == ["installed", "0"] and out.exists(), (r.stdout, r.stderr[-2000:])


def _collectable(objects) -> list:
    """The ``objects`` still in a generation the collector walks (a frozen object is in none of them). The frozen
    count alone can drop while objects stay frozen: a frozen object that another test's leftovers referred to is
    freed by its reference count."""
    walked = {id(o) for o in gc.get_objects()}
    return [o for o in objects if id(o) in walked]


def test_a_full_collection_freezes_its_survivors_and_a_new_project_releases_them(qtbot, monkeypatch):
    """A full collection walks every object of a long recording once every ten younger collections; the survivors
    of a long one are frozen, so the next ones skip them, and released when a project is replaced."""
    monkeypatch.setattr(gui_gc, "FREEZE_AFTER_S", 0.0)     # this test's heap is small: every full pass counts
    gc.unfreeze()
    gc.collect()
    keep = [_Cycle() for _ in range(2000)]                  # long-lived objects
    gen = gc.get_threshold()
    passes = 0
    while gc.get_freeze_count() < len(keep) and passes < 4 * gen[1] * gen[2]:
        garbage = [_Cycle() for _ in range(gen[0] + 1)]      # enough for a collection at every timer tick
        del garbage
        gui_gc._collector.check()                            # what the GUI-thread timer calls
        passes += 1
    assert gc.get_freeze_count() >= len(keep), passes      # the first full pass froze its survivors
    assert not _collectable(keep)
    for _ in range(gen[1]):                                 # younger collections leave the frozen alone
        garbage = [_Cycle() for _ in range(gen[0] + 1)]
        del garbage
        gui_gc._collector.check()
    assert not _collectable(keep)
    del keep
    gui_gc.release_long_lived()                             # what the project controller calls on install
    assert gc.get_freeze_count() == 0
    gc.collect()


def test_a_full_collection_quicker_than_the_limit_freezes_nothing(qtbot, monkeypatch):
    monkeypatch.setattr(gui_gc, "FREEZE_AFTER_S", 60.0)    # every full pass of this test is quicker than that
    gc.unfreeze()
    gen = gc.get_threshold()
    for _ in range(4 * gen[1] * gen[2]):                    # several full passes over this small heap
        garbage = [_Cycle() for _ in range(gen[0] + 1)]
        del garbage
        gui_gc._collector.check()
    assert gc.get_freeze_count() == 0


def test_opening_a_project_releases_the_frozen_objects(studio, qtbot):
    from core.project.model import new_project
    from tests.support.studio import default_config

    gc.freeze()
    assert gc.get_freeze_count() > 0
    studio.feature("project").install(new_project(default_config()), None)
    assert gc.get_freeze_count() == 0
