"""One modal question with named choices (Save / Discard / Cancel and the like), shared by the studio's windows."""
from __future__ import annotations

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
