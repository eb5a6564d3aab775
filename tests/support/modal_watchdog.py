"""A guard for the Qt tests: a modal dialog or popup menu that nobody answers ends the test instead of the run.

Why: a modal event loop (a message box, a dialog, a pick menu) that a test did not expect waits for a click that
never comes; the test — and with it the whole CI run — hangs without a word until the CI's time limit. A timer in the
GUI thread still fires inside a nested modal loop, so this watchdog sees the widget, closes it after ``limit_s`` and
records its title and text; the fixture in tests/conftest.py then fails the test with that text.
"""
from __future__ import annotations

import time

from PySide6 import QtCore, QtWidgets


def _describe(w: QtWidgets.QWidget) -> str:
    text = w.text() if isinstance(w, QtWidgets.QMessageBox) else ""
    return f"{type(w).__name__} {w.objectName()!r} titled {w.windowTitle()!r}" + (f": {text}" if text else "")


class ModalWatchdog(QtCore.QObject):
    """Polls ``activeModalWidget``/``activePopupWidget`` every ``poll_ms``; closes one left open ``limit_s``."""

    def __init__(self, limit_s: float = 30.0, poll_ms: int = 250) -> None:
        super().__init__()
        self.limit_s = limit_s
        self.closed: list[str] = []
        self._seen: tuple[int, float] | None = None
        self._timer = QtCore.QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._check)
        self._timer.start()

    def _check(self) -> None:
        w = QtWidgets.QApplication.activeModalWidget() or QtWidgets.QApplication.activePopupWidget()
        if w is None or not w.isVisible():
            self._seen = None
            return
        now = time.monotonic()
        if self._seen is None or self._seen[0] != id(w):
            self._seen = (id(w), now)
            return
        if now - self._seen[1] < self.limit_s:
            return
        self.closed.append(_describe(w))
        self._seen = None
        if isinstance(w, QtWidgets.QDialog):
            w.reject()
        else:
            w.close()

    def stop(self) -> None:
        self._timer.stop()
