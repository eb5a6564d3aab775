"""The shared modal question: the clicked button's key comes back; closing the box means cancel."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from widgets.choice_dialog import ask_choice  # noqa: E402

CHOICES = [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")]


def _answer_with(label: str | None) -> None:
    def act() -> None:
        box = next(w for w in QtWidgets.QApplication.topLevelWidgets()
                   if isinstance(w, QtWidgets.QMessageBox) and w.isVisible())
        assert box.defaultButton().text() == "Save"
        if label is None:
            box.reject()
        else:
            next(b for b in box.buttons() if b.text() == label).click()
    QtCore.QTimer.singleShot(50, act)


@pytest.mark.parametrize("label, key", [("Discard", "discard"), ("Save", "save"), (None, "cancel")])
def test_ask_choice_returns_the_clicked_key(qtbot, label, key):
    parent = QtWidgets.QWidget()
    qtbot.addWidget(parent)
    _answer_with(label)
    assert ask_choice(parent, "Unsaved changes", "Save?", CHOICES, "save") == key
