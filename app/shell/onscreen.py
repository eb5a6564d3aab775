"""Is a panel on screen, and when does it come back? For panels that skip work while nobody can see them.

Why not ``QWidget.isVisible()`` alone: Qt keeps a dock that is tabbed *behind* another (e.g. Agents behind
Statistics) visible — it moves it outside the window instead of hiding it — so ``isVisible()`` stays true, no Show
event comes when its tab is brought to the front, and a panel that trusts it recomputes its content every frame for
nobody. Such a widget has an empty ``visibleRegion()``, and its ``QDockWidget`` emits ``visibilityChanged(True)``
when its tab is raised.
"""
from __future__ import annotations

from typing import Callable

from PySide6 import QtCore, QtWidgets


def on_screen(widget: QtWidgets.QWidget) -> bool:
    """Shown and not behind another dock's tab (nor otherwise moved out of the window)."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def dock_of(widget: QtWidgets.QWidget) -> QtWidgets.QDockWidget | None:
    w: QtCore.QObject | None = widget
    while w is not None and not isinstance(w, QtWidgets.QDockWidget):
        w = w.parent()
    return w


class ShownWatch(QtCore.QObject):
    """Calls ``callback(widget)`` in the next event-loop pass once a watched widget may be back on screen: shown
    again (its Show event) or its dock's tab brought in front (the callback checks what it needs). :meth:`watch`
    it when a refresh is skipped; watching twice is harmless. The dock is looked up then (docks are made after
    the controllers that watch)."""

    def __init__(self, callback: Callable[[QtWidgets.QWidget], None], parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.callback = callback
        self._watched: set[int] = set()
        self._docks: set[tuple[int, int]] = set()

    def watch(self, widget: QtWidgets.QWidget) -> None:
        if id(widget) not in self._watched:
            self._watched.add(id(widget))
            widget.installEventFilter(self)
        dock = dock_of(widget)
        if dock is not None and (id(dock), id(widget)) not in self._docks:
            self._docks.add((id(dock), id(widget)))
            dock.visibilityChanged.connect(lambda on, w=widget: self._later(w) if on else None)

    def _later(self, widget: QtWidgets.QWidget) -> None:
        QtCore.QTimer.singleShot(0, lambda: self.callback(widget))

    def eventFilter(self, obj: QtCore.QObject, ev: QtCore.QEvent) -> bool:  # noqa: N802 (Qt name)
        if ev.type() == QtCore.QEvent.Type.Show and isinstance(obj, QtWidgets.QWidget):
            self._later(obj)
        return False
