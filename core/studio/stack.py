"""The undo stack of the studio's commands (no Qt): push, undo, redo, merge, a clean state for "unsaved changes".

Why its own module: the session owns a stack, and the commands know the session; keeping the stack free of both
lets each import only what it needs (commands -> session -> stack), with no cycle.

Semantics follow ``QUndoStack`` exactly, so :mod:`app.shell.undo` can mirror this stack in a ``QUndoStack`` (Edit ▸
Undo/Redo, the History panel) command for command:

* ``push`` runs ``do``, drops the redo tail, then merges the command into the one on top when both have the same
  ``id`` (not -1), the top is not at the clean state, and ``top.merge_with(new)`` accepts it: a paint stroke, a
  drag or a run of speed/colour edits becomes one undo step.
* a command that cannot be undone (or redone) any more says why in ``blocked``; the stack then drops it (Qt's
  *obsolete* command), reports the reason through the ``refused`` event and leaves the session unchanged.
* the *clean* index marks the saved state; the session's modified flag combines it with other changes.
"""
from __future__ import annotations

from typing import Any

from core.studio.events import EmitterGroup, EventEmitter


class Command:
    """One user edit of the session: ``do``/``undo`` on the target, a ``text`` for menus and the History panel.

    ``id`` (-1: never merges) and :meth:`merge_with` implement merging; :meth:`blocked` tells the stack when the
    command can no longer be undone or redone (None: it can).
    """

    id: int = -1
    text: str = ""

    def do(self, target: Any) -> None:
        raise NotImplementedError

    def undo(self, target: Any) -> None:
        raise NotImplementedError

    def merge_with(self, other: "Command") -> bool:
        """Absorb ``other`` (pushed right after this one, already done) so both undo as one step; True if done."""
        return False

    def blocked(self, target: Any) -> str | None:
        """Why this command cannot be undone/redone now (e.g. steps were simulated with it), or None."""
        return None


class StackEvents(EmitterGroup):
    """The events of a :class:`CommandStack` (one emitter per annotated name)."""

    pushed: EventEmitter
    index: EventEmitter
    clean: EventEmitter
    refused: EventEmitter
    cleared: EventEmitter

    def __init__(self, source: Any) -> None:
        super().__init__(source, *StackEvents.__annotations__)


class CommandStack:
    """Commands done on ``target`` (the session). Events (``stack.events.<name>``):

    * ``pushed``: ``command``, ``merged`` (True: absorbed into the top command)
    * ``index``: ``value`` = the new index (after undo, redo, push, clear)
    * ``clean``: ``value`` = is_clean() (emitted when it changes)
    * ``refused``: ``value`` = the reason a command was dropped instead of undone/redone
    * ``cleared``
    """

    def __init__(self, target: Any) -> None:
        self.target = target
        self.events = StackEvents(self)
        self._commands: list[Command] = []
        self._index = 0
        self._clean = 0          # -1: the clean state is unreachable

    # ---- queries ----------------------------------------------------------------------------------------------
    @property
    def index(self) -> int:
        return self._index

    @property
    def count(self) -> int:
        return len(self._commands)

    @property
    def clean_index(self) -> int:
        return self._clean

    def command(self, i: int) -> Command:
        return self._commands[i]

    def is_clean(self) -> bool:
        return self._clean == self._index

    def can_undo(self) -> bool:
        return self._index > 0

    def can_redo(self) -> bool:
        return self._index < len(self._commands)

    def undo_text(self) -> str:
        return self._commands[self._index - 1].text if self.can_undo() else ""

    def redo_text(self) -> str:
        return self._commands[self._index].text if self.can_redo() else ""

    # ---- changes ----------------------------------------------------------------------------------------------
    def push(self, command: Command) -> bool:
        """Do ``command`` and record it; returns True when it was merged into the top command."""
        was_clean = self.is_clean()
        command.do(self.target)
        del self._commands[self._index:]
        if self._clean > self._index:
            self._clean = -1
        top = self._commands[-1] if self._commands else None
        merged = (top is not None and top.id != -1 and top.id == command.id and self._index != self._clean
                  and top.merge_with(command))
        if not merged:
            self._commands.append(command)
            self._index += 1
        self.events.pushed.emit(command=command, merged=merged)
        self.events.index.emit(value=self._index)
        self._clean_changed(was_clean)
        return merged

    def undo(self) -> bool:
        """Undo the top command; False when there is none or it had to be dropped (see ``refused``)."""
        if not self.can_undo():
            return False
        return self._move(self._index - 1, undo=True)

    def redo(self) -> bool:
        if not self.can_redo():
            return False
        return self._move(self._index, undo=False)

    def set_index(self, index: int) -> None:
        """Undo or redo until ``index`` (what clicking an entry of the History panel does)."""
        index = max(0, min(index, len(self._commands)))
        while self._index > index and self.undo():
            pass
        while self._index < index and self.can_redo():
            if not self.redo():
                index -= 1   # a dropped command shortens the way

    def set_clean(self) -> None:
        """The current state is the saved one."""
        was = self.is_clean()
        self._clean = self._index
        self._clean_changed(was)

    def reset_clean(self) -> None:
        """No state of the stack is the saved one (e.g. the file was saved elsewhere)."""
        was = self.is_clean()
        self._clean = -1
        self._clean_changed(was)

    def clear(self) -> None:
        """Forget every command (a new project); the empty stack is clean."""
        was = self.is_clean()
        self._commands.clear()
        self._index = 0
        self._clean = 0
        self.events.cleared.emit()
        self.events.index.emit(value=0)
        self._clean_changed(was)

    def _move(self, idx: int, undo: bool) -> bool:
        was_clean = self.is_clean()
        cmd = self._commands[idx]
        reason = cmd.blocked(self.target)
        if reason is None:
            cmd.undo(self.target) if undo else cmd.do(self.target)
            self._index = idx if undo else idx + 1
        else:   # like Qt's obsolete command: dropped, the session stays as it is
            del self._commands[idx]
            if self._clean > idx:
                self._clean = -1
            self._index = idx
            self.events.refused.emit(value=f"Cannot {'undo' if undo else 'redo'} “{cmd.text}”: {reason}")
        self.events.index.emit(value=self._index)
        self._clean_changed(was_clean)
        return reason is None

    def _clean_changed(self, was: bool) -> None:
        if self.is_clean() != was:
            self.events.clean.emit(value=self.is_clean())
