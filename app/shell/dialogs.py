"""How the shell asks the user and reports an error: a :class:`Dialogs` object given to the window.

Why an object of its own: the studio runs with a person at the screen (real dialogs), unattended (``--screenshot``:
no dialog may wait for an answer, so unsaved changes are discarded and everything else cancelled) and under a
script that answers by question key. The window takes one :class:`Dialogs` and never branches on which it is.
"""
from __future__ import annotations

import html
from typing import Protocol

from PySide6 import QtCore, QtWidgets

from widgets.choice_dialog import ask_choice

__all__ = ["Dialogs", "QtDialogs", "UnattendedDialogs", "error_box", "warning_box"]


class Dialogs(Protocol):
    """Questions and error reports of the shell."""

    def ask(self, parent: QtWidgets.QWidget, key: str, title: str, text: str, choices: list[tuple[str, str]],
            default: str) -> str:
        """The key of the chosen answer; ``key`` names the question."""
        ...

    def show_error(self, parent: QtWidgets.QWidget, title: str, file: str, problem: str, label: str) -> None:
        """Report an error without blocking the studio."""
        ...

    def warn(self, parent: QtWidgets.QWidget, title: str, text: str) -> None:
        """A warning that does not block (a run that cannot be saved, a model that cannot drive)."""
        ...

    def save_file_name(self, parent: QtWidgets.QWidget, key: str, title: str, default: str, filters: str) -> str:
        """The file to write (``""``: cancelled); ``key`` names the choice."""
        ...


def error_box(parent: QtWidgets.QWidget, title: str, file: str, problem: str, label: str) -> QtWidgets.QMessageBox:
    """The studio's non-blocking error dialog (object name ``errorDialog``), open and deleted when closed."""
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Critical, title, f"<b>{html.escape(title)}</b>",
                                QtWidgets.QMessageBox.StandardButton.Ok, parent)
    box.setInformativeText(f"<p><b>{html.escape(label)}:</b> {html.escape(file)}</p><p><b>Problem:</b> "
                           f"{html.escape(problem)}</p>")
    box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    box.setObjectName("errorDialog")
    box.open()
    return box


def warning_box(parent: QtWidgets.QWidget, title: str, text: str) -> QtWidgets.QMessageBox:
    """A non-blocking warning dialog (object name ``warningDialog``), open and deleted when closed."""
    box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Warning, title, text,
                                QtWidgets.QMessageBox.StandardButton.Ok, parent)
    box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    box.setObjectName("warningDialog")
    box.open()
    return box


class QtDialogs:
    """A person at the screen: modal questions, non-blocking error dialogs."""

    def ask(self, parent: QtWidgets.QWidget, key: str, title: str, text: str, choices: list[tuple[str, str]],
            default: str) -> str:
        return ask_choice(parent, title, text, choices, default)

    def show_error(self, parent: QtWidgets.QWidget, title: str, file: str, problem: str, label: str) -> None:
        error_box(parent, title, file, problem, label)

    def warn(self, parent: QtWidgets.QWidget, title: str, text: str) -> None:
        warning_box(parent, title, text)

    def save_file_name(self, parent: QtWidgets.QWidget, key: str, title: str, default: str, filters: str) -> str:
        return QtWidgets.QFileDialog.getSaveFileName(parent, title, default, filters)[0]


class UnattendedDialogs(QtDialogs):
    """Nobody answers (``--screenshot`` runs): unsaved changes are discarded, every other question cancelled, so
    the process always ends; errors still show."""

    def ask(self, parent: QtWidgets.QWidget, key: str, title: str, text: str, choices: list[tuple[str, str]],
            default: str) -> str:
        keys = [k for k, _ in choices]
        return "discard" if "discard" in keys else "cancel"

    def save_file_name(self, parent: QtWidgets.QWidget, key: str, title: str, default: str, filters: str) -> str:
        return ""
