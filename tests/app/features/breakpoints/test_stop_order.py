"""A breakpoint hit while the worker runs ahead in a burst: the GUI learns *why* playback stops (the hit, which
shows the breakpoint's state) before it learns *that* it stopped, so nothing waiting for "not playing" ever sees the
newest state of the burst instead (the race behind a flaky test_breakpoint_builder test, made deterministic here:
the whole run is one burst, and the worker thread is held up right after it says "not playing")."""
from __future__ import annotations

import time

import numpy as np
import pytest

from tests.support.studio import WAIT, default_config, run_sim

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402


def test_a_breakpoint_in_a_burst_is_shown_before_playback_reports_it_stopped(studio, qtbot, monkeypatch):
    import app.shell.worker as worker
    from core.base.codes import ACTION_INDEX
    from core.sim.breakpoints import Breakpoint

    win = studio
    stop = ACTION_INDEX["Stop"]
    dec = np.asarray(run_sim(default_config(), seed=win.project.seed, steps=80).buffer.array("decided"))
    names = win.history.agents.names
    first = {a: next((k for k in range(1, len(dec)) if dec[k, a] == stop and dec[k - 1, a] != stop), None)
             for a in range(len(names)) if dec[0, a] != stop}
    a, k = next((a, k) for a, k in first.items() if k is not None and 20 <= k)   # far enough for a long burst
    monkeypatch.setattr(worker, "BURST", 30.0)        # run ahead as far as the back-pressure allows
    monkeypatch.setattr(worker, "MAX_BACKLOG", 1000)
    held = []

    def hold_worker_thread(_gen: int, on: bool) -> None:   # runs in the worker thread, inside the emit
        if not on:
            held.append(True)
            time.sleep(0.4)

    win.simulation.worker.playingChanged.connect(hold_worker_thread, QtCore.Qt.ConnectionType.DirectConnection)
    win.add_breakpoint(Breakpoint("action", agent=names[a], action="Stop", mode="when"))
    win.set_speed(0)
    win.play()
    qtbot.waitUntil(lambda: not win.playing, timeout=WAIT)
    # read at once, while the worker thread may still be held: the state shown is the breakpoint's, not the burst's
    # newest one (k + 1), and the status line says why
    assert win.cursor == k and f"at step {k}" in win.last_message, (k, win.cursor, win.num_steps, win.last_message)
    assert win.num_steps == k + 1
    qtbot.waitUntil(lambda: bool(held), timeout=WAIT)
