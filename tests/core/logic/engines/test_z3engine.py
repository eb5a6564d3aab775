"""The z3 engine keeps its per-thread solver templates inside a Qt worker thread.

Why: ``threading.local`` storage does not survive between queued calls into a QThread (PySide enters Python with a
fresh thread state each time), so templates kept there would be rebuilt at every studio step.
"""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.logic.engines import z3engine  # noqa: E402
from core.sim.config import load_mode  # noqa: E402
from core.sim.simulation import Simulation  # noqa: E402
from tests.support.paths import ROOT


class _Stepper(QtCore.QObject):
    done = QtCore.Signal()

    def __init__(self) -> None:
        super().__init__()
        self.sim: Simulation | None = None

    @QtCore.Slot()
    def step(self) -> None:
        if self.sim is None:
            self.sim = Simulation(load_mode(ROOT / "configs" / "modes" / "sim_easy.yaml"), seed=1, engine="z3")
        self.sim.step()
        self.done.emit()


def test_templates_survive_queued_calls(qtbot, monkeypatch):
    built = []
    orig = z3engine._Template.__init__

    def counting(self, program, k, ctx, timeout_ms):
        built.append(k)
        orig(self, program, k, ctx, timeout_ms)

    monkeypatch.setattr(z3engine._Template, "__init__", counting)
    thread = QtCore.QThread()
    worker = _Stepper()
    worker.moveToThread(thread)
    thread.start()
    try:
        for _ in range(12):  # each step is a separate queued call into the worker thread
            with qtbot.waitSignal(worker.done, timeout=30_000):
                QtCore.QMetaObject.invokeMethod(worker, "step", QtCore.Qt.ConnectionType.QueuedConnection)
        assert len(built) == len(set(built)), f"templates rebuilt: {built}"
    finally:
        thread.quit()
        thread.wait(10_000)
