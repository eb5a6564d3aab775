"""The test-run guard itself: an unanswered modal box is closed and reported, an answered one is left alone."""
import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from tests.support.modal_watchdog import ModalWatchdog  # noqa: E402


def test_an_unanswered_message_box_is_closed_and_named(qtbot):
    dog = ModalWatchdog(limit_s=0.3, poll_ms=20)
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Question, "Unsaved changes", "Save before closing?")
    box.exec()                                   # would wait for ever without the watchdog
    dog.stop()
    assert len(dog.closed) == 1 and "Unsaved changes" in dog.closed[0] and "Save before closing?" in dog.closed[0]


def test_a_box_answered_in_time_is_not_reported(qtbot):
    dog = ModalWatchdog(limit_s=5.0, poll_ms=20)
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Question, "Quick", "Answered at once")
    ok = box.addButton("OK", QtWidgets.QMessageBox.ButtonRole.AcceptRole)
    QtCore.QTimer.singleShot(100, ok.click)
    box.exec()
    dog.stop()
    assert box.clickedButton() is ok and dog.closed == []
