"""The studio's controllers: small GUI-thread objects between the Qt-free session (:mod:`core.studio.session`) and the
widgets. Each owns one job (projects, playback, drawing, breakpoints, selection, view options, layout, help); the
main window only builds menus, docks and the status bar and wires them together (docs/architecture.md).

Controllers talk to the user through the :class:`Shell` (the main window): questions that tests pre-answer, error
dialogs that never block, and status-line messages.
"""
from __future__ import annotations

from typing import Any, Protocol

from PySide6 import QtCore


class Shell(Protocol):
    """What a controller may ask of the main window."""

    settings: QtCore.QSettings
    non_interactive: bool
    last_message: str   # the newest status-line message

    def ask(self, key: str, title: str, text: str, choices: list[tuple[str, str]], default: str) -> str:
        """A choice key; ``answers[key]`` (tests) or the non-interactive rule answer without a dialog."""

    def show_error(self, title: str, file: str, problem: str, label: str = "File") -> None:
        """A non-blocking error dialog naming the file (or component) and the problem."""

    def status(self, text: str, ms: int = 6000) -> None:
        """A status-line message (remembered as ``last_message``)."""


class Forward:
    """A window attribute that belongs to another object: ``history = Forward("session")`` reads (and, when
    ``settable``, writes) ``window.session.history``. For the window's thin forwarders that tests and scripts use."""

    def __init__(self, owner: str, name: str | None = None, settable: bool = False) -> None:
        self.owner, self.name, self.settable = owner, name, settable

    def __set_name__(self, cls: type, name: str) -> None:
        self.name = self.name or name

    def __get__(self, obj: Any, cls: type | None = None) -> Any:
        return self if obj is None else getattr(getattr(obj, self.owner), str(self.name))

    def __set__(self, obj: Any, value: Any) -> None:
        if not self.settable:
            raise AttributeError(f"{self.name} is read-only here: it belongs to window.{self.owner}")
        setattr(getattr(obj, self.owner), str(self.name), value)
