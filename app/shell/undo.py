"""Show the session's Qt-free :class:`core.studio.stack.CommandStack` through a ``QUndoStack``: Edit ▸ Undo/Redo
with the command's text, and the History panel (a ``QUndoView``) where clicking an entry goes back to it.

Why a mirror instead of QUndoCommands in the session: the session and its commands are tested without Qt and used by
scripts; the studio only needs Qt's actions and view. The core stack is the truth; every push there pushes one
proxy here, and the proxies' undo/redo call the core stack. The core stack follows ``QUndoStack``'s rules
(merging, clean state, obsolete commands), so both always hold the same commands at the same index; an undo that
the core refuses (a forced action that steps were simulated with) marks the proxy obsolete, which makes Qt drop
it exactly as the core dropped its command.
"""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from core.studio.stack import Command, CommandStack

#: every proxy has this id, so Qt offers each push to the top proxy, which merges exactly when the core merged
_PROXY_ID = 1


class _Proxy(QtGui.QUndoCommand):
    def __init__(self, adapter: "UndoAdapter", command: Command) -> None:
        super().__init__(command.text)
        self.adapter = adapter
        self.command = command
        self.merged = False      # set on the new proxy when the core merged its command into the top one
        self._pushed = False     # Qt calls redo() on push; the core has done the command already

    def id(self) -> int:  # noqa: A003 - Qt's name
        return _PROXY_ID

    def mergeWith(self, other: QtGui.QUndoCommand) -> bool:  # noqa: N802
        if isinstance(other, _Proxy) and other.merged:
            self.setText(self.command.text)
            return True
        return False

    def redo(self) -> None:
        if not self._pushed:
            self._pushed = True
            return
        if not self.adapter.mirroring:
            with self.adapter.mirror():
                if not self.adapter.core.redo():
                    self.setObsolete(True)

    def undo(self) -> None:
        if not self.adapter.mirroring:
            with self.adapter.mirror():
                if not self.adapter.core.undo():
                    self.setObsolete(True)


class UndoAdapter(QtCore.QObject):
    """``adapter.qt`` is the QUndoStack mirroring ``core``; undo and redo may be triggered on either."""

    def __init__(self, core: CommandStack, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self.qt = QtGui.QUndoStack(self)
        self.mirroring = False
        ev = core.events
        ev.pushed.connect(self._on_pushed)
        ev.index.connect(self._on_index)
        ev.clean.connect(self._on_clean)
        ev.cleared.connect(self._on_cleared)

    class _Mirror:
        def __init__(self, adapter: "UndoAdapter") -> None:
            self.adapter = adapter

        def __enter__(self) -> None:
            self.adapter.mirroring = True

        def __exit__(self, *exc: object) -> None:
            self.adapter.mirroring = False

    def mirror(self) -> "UndoAdapter._Mirror":
        return UndoAdapter._Mirror(self)

    # ---- core -> Qt -------------------------------------------------------------------------------------------
    def _on_pushed(self, event) -> None:
        proxy = _Proxy(self, event.command)
        proxy.merged = bool(event.merged)
        with self.mirror():
            self.qt.push(proxy)

    def _on_index(self, event) -> None:
        """An undo/redo done on the core stack directly (a script, a controller): move Qt's index along."""
        if self.mirroring:
            return
        if self.qt.count() != self.core.count:   # the core dropped a refused command on its own
            self._rebuild()
        elif self.qt.index() != self.core.index:
            with self.mirror():
                self.qt.setIndex(self.core.index)

    def _on_clean(self, event) -> None:
        """The session was saved (or can no longer be undone back to its saved state). Undo, redo and push through
        Qt keep Qt's clean state themselves (mirroring), so only changes made on the core are copied."""
        if self.mirroring:
            return
        with self.mirror():
            if event.value:
                self.qt.setClean()
            elif self.core.clean_index == -1:
                self.qt.resetClean()

    def _on_cleared(self, event) -> None:
        with self.mirror():
            self.qt.clear()

    def _rebuild(self) -> None:
        """Make the Qt stack hold the core's commands again (index and clean state included)."""
        with self.mirror():
            self.qt.clear()
            for i in range(self.core.count):
                self.qt.push(_Proxy(self, self.core.command(i)))
            if self.core.clean_index >= 0:
                self.qt.setIndex(self.core.clean_index)
                self.qt.setClean()
            else:
                self.qt.resetClean()
            self.qt.setIndex(self.core.index)

    # ---- widgets ----------------------------------------------------------------------------------------------
    def actions(self, parent: QtCore.QObject) -> tuple[QtGui.QAction, QtGui.QAction]:
        """Edit ▸ Undo (Ctrl+Z) and Redo (Ctrl+Shift+Z, Ctrl+Y), named after the command they undo/redo."""
        undo = self.qt.createUndoAction(parent, "&Undo")
        undo.setShortcut(QtGui.QKeySequence("Ctrl+Z"))
        redo = self.qt.createRedoAction(parent, "&Redo")
        redo.setShortcuts([QtGui.QKeySequence("Ctrl+Shift+Z"), QtGui.QKeySequence("Ctrl+Y")])
        return undo, redo

    def history_view(self) -> QtWidgets.QUndoView:
        """The History panel: every command, the saved state marked; clicking an entry undoes/redoes to it."""
        view = QtWidgets.QUndoView(self.qt)
        view.setEmptyLabel("<opened>")
        view.setObjectName("historyView")
        return view
