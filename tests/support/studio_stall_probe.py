"""Measure the studio's GUI event-loop gaps while the simulation plays as fast as possible (run as a script).

Used by tests/app/shell/test_window.py in a fresh interpreter, so threads other tests leave behind (torch's OpenMP
pool, icon-generation workers) cannot compete for the CPU during the measurement. Prints one JSON line.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LOGICITY_DATA_DIR", tempfile.mkdtemp(prefix="logicity-probe-"))


def main(seconds: float = 3.0) -> int:
    from PySide6 import QtCore, QtWidgets

    _app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])   # held: the application outlives the window
    from app.shell.settings import make_settings
    from app.shell.window import MainWindow
    from tests.support.driver import ScriptedDialogs, StudioDriver
    from tests.support.paths import DEFAULT_MODE

    def run(ms: int) -> None:
        loop = QtCore.QEventLoop()
        QtCore.QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def wait_until(pred, timeout: float = 120.0) -> None:
        end = time.time() + timeout
        while not pred():
            if time.time() > end:
                raise TimeoutError("probe timed out")
            run(10)

    dialogs = ScriptedDialogs()
    win = StudioDriver(MainWindow(make_settings(Path(tempfile.mkdtemp()) / "s.ini"), dialogs=dialogs), dialogs)
    win.window.resize(1280, 820)
    win.window.show()
    win.open_path(DEFAULT_MODE)
    wait_until(lambda: win.history is not None)
    win.select_agent(0)          # inspector and statistics refresh too: the heaviest GUI load
    win.set_speed(0)
    win.play()
    wait_until(lambda: win.num_steps >= 20)   # warm-up: first paints, caches
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QtCore.QTimer()
    timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
    timer.timeout.connect(tick)
    start_steps = win.num_steps
    last[0] = time.perf_counter()
    timer.start(5)
    run(int(seconds * 1000))
    timer.stop()
    played = win.num_steps - start_steps
    win.pause()
    win.answers["unsaved"] = "discard"
    win.window.close()
    gaps_ms = sorted((g * 1000 for g in gaps), reverse=True)
    print(json.dumps({"worst_ms": gaps_ms[0] if gaps_ms else None, "top_ms": gaps_ms[:5], "ticks": len(gaps),
                      "played": played, "seconds": seconds, "loadavg": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0))
