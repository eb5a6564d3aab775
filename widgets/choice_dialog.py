"""Dialog pieces shared by the studio's windows: one modal question with named choices (Save / Discard / Cancel and
the like) and the OK / Cancel button row of a dialog."""
from __future__ import annotations

from typing import Callable

from PySide6 import QtWidgets

_ROLES = {"cancel": QtWidgets.QMessageBox.ButtonRole.RejectRole,
          "discard": QtWidgets.QMessageBox.ButtonRole.DestructiveRole}


def ask_choice(parent: QtWidgets.QWidget, title: str, text: str, choices: list[tuple[str, str]],
               default: str) -> str:
    """Show the question; returns the key of the chosen ``(key, label)`` — "cancel" when the box is closed."""
    box = QtWidgets.QMessageBox(parent)
    box.setWindowTitle(title)
    box.setText(text)
    box.setIcon(QtWidgets.QMessageBox.Icon.Question)
    buttons = {}
    for key, label in choices:
        b = box.addButton(label, _ROLES.get(key, QtWidgets.QMessageBox.ButtonRole.AcceptRole))
        buttons[b] = key
        if key == default:
            box.setDefaultButton(b)
    box.exec()
    return buttons.get(box.clickedButton(), "cancel")


def ok_cancel_buttons(dialog: QtWidgets.QDialog,
                      on_ok: Callable[[], object] | None = None) -> QtWidgets.QDialogButtonBox:
    """An OK / Cancel button box for ``dialog``: Cancel rejects it, OK calls ``on_ok`` (default: accepts it)."""
    buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                         | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
    buttons.accepted.connect(on_ok if on_ok is not None else dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons
