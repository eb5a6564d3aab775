"""User edits of the session as undoable commands (glue's ``core/command.py`` is the pattern).

Each command computes its change from the session when it is done, remembers what it replaced and puts exactly
that back on undo, so undoing any sequence of commands restores an equal session (tests/core/studio/
test_commands.py checks this over random sequences). Redo is ``do`` again on the restored state.

Merging (``id`` and ``merge_with``): consecutive edits of one thing undo as one step. Here: colour-by edits (trying
schemes one after the other is one change of mind) and enabling/disabling the same breakpoint; the coming map
editor's paint stroke and drag use the same mechanism. The editors add their commands next to these.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.base.codes import ACTION_NAMES
from core.sim.events import Breakpoint
from core.studio.session import Session
from core.studio.stack import Command

#: merge ids (a command merges only with one of the same id)
MERGE_COLOUR = 1
MERGE_BREAKPOINT_ENABLED = 2


class _BreakpointEdit(Command):
    """Replace the breakpoint list by :meth:`new_list` (computed at the first ``do``); undo puts the old one back."""

    def __init__(self) -> None:
        self.old: tuple[Breakpoint, ...] | None = None
        self.new: tuple[Breakpoint, ...] | None = None

    def new_list(self, old: tuple[Breakpoint, ...]) -> tuple[Breakpoint, ...]:
        raise NotImplementedError

    def do(self, target: Session) -> None:
        if self.new is None:
            self.old = target.breakpoints
            self.new = self.new_list(self.old)
        target.apply_breakpoints(self.new)

    def undo(self, target: Session) -> None:
        assert self.old is not None
        target.apply_breakpoints(self.old)


class AddBreakpoint(_BreakpointEdit):
    """Add ``bp`` at the end (an equal breakpoint already there: no change). Check :func:`can_add` first to
    avoid an empty undo step."""

    def __init__(self, bp: Breakpoint) -> None:
        super().__init__()
        self.bp = bp
        self.text = f"Add breakpoint: {bp.describe()}"

    def new_list(self, old: tuple[Breakpoint, ...]) -> tuple[Breakpoint, ...]:
        return old if self.bp in old else old + (self.bp,)


def can_add(session: Session, bp: Breakpoint) -> bool:
    return bp not in session.breakpoints


class RemoveBreakpoint(_BreakpointEdit):
    def __init__(self, index: int, session: Session) -> None:
        super().__init__()
        if not 0 <= index < len(session.breakpoints):
            raise IndexError(f"no breakpoint #{index}")
        self.index = index
        self.text = f"Remove breakpoint: {session.breakpoints[index].describe()}"

    def new_list(self, old: tuple[Breakpoint, ...]) -> tuple[Breakpoint, ...]:
        return old[:self.index] + old[self.index + 1:]


class EditBreakpoint(_BreakpointEdit):
    """Replace breakpoint ``index`` by ``bp`` (the condition builder's Edit); keeps its place in the list. Undo puts
    the old condition back. Replacing it by one equal to another entry would list it twice: refused (ValueError);
    check :func:`can_edit` first."""

    def __init__(self, index: int, bp: Breakpoint, session: Session) -> None:
        super().__init__()
        if not 0 <= index < len(session.breakpoints):
            raise IndexError(f"no breakpoint #{index}")
        if not can_edit(session, index, bp):
            raise ValueError(f"the breakpoint {bp.describe()!r} is already listed")
        self.index = index
        self.bp = bp
        self.text = f"Edit breakpoint: {session.breakpoints[index].describe()} → {bp.describe()}"

    def new_list(self, old: tuple[Breakpoint, ...]) -> tuple[Breakpoint, ...]:
        return old[:self.index] + (self.bp,) + old[self.index + 1:]


def can_edit(session: Session, index: int, bp: Breakpoint) -> bool:
    """Whether replacing breakpoint ``index`` by ``bp`` changes something and lists nothing twice."""
    bps = session.breakpoints
    return 0 <= index < len(bps) and bps[index] != bp and bp not in bps[:index] + bps[index + 1:]


class ClearBreakpoints(_BreakpointEdit):
    text = "Clear breakpoints"

    def new_list(self, old: tuple[Breakpoint, ...]) -> tuple[Breakpoint, ...]:
        return ()


class SetBreakpointEnabled(_BreakpointEdit):
    """Enable or disable breakpoint ``index`` (the dock's check box); toggling the same one again merges."""

    id = MERGE_BREAKPOINT_ENABLED

    def __init__(self, index: int, enabled: bool, session: Session) -> None:
        super().__init__()
        if not 0 <= index < len(session.breakpoints):
            raise IndexError(f"no breakpoint #{index}")
        self.index = index
        self.enabled = bool(enabled)
        self.text = ("Enable" if enabled else "Disable") + " breakpoint"

    def new_list(self, old: tuple[Breakpoint, ...]) -> tuple[Breakpoint, ...]:
        new = list(old)
        new[self.index] = replace(old[self.index], enabled=self.enabled)
        return tuple(new)

    def merge_with(self, other: Command) -> bool:
        if not isinstance(other, SetBreakpointEnabled) or other.index != self.index:
            return False
        self.new = other.new
        self.enabled = other.enabled
        self.text = ("Enable" if other.enabled else "Disable") + " breakpoint"
        return True


class ForceAction(Command):
    """Override ``agent``'s decision from step ``step`` on (``action`` None: follow the rules again); replaces an
    override of the same agent at the same step.

    Once a step at or after ``step`` has been simulated the override is part of the recording: undoing it would
    make the saved episode claim a run that did not happen, so the stack refuses (and reports it) instead.
    """

    def __init__(self, agent: int, action: int | None, step: int, agent_name: str = "") -> None:
        self.entry: dict[str, Any] = {"step": int(step), "agent": int(agent),
                                      "action": None if action is None else int(action)}
        who = agent_name or f"agent {agent}"
        self.text = (f"{who} follows the rules from step {step}" if action is None else
                     f"Force {who} to {ACTION_NAMES[int(action)]} from step {step}")
        self.replaced: list[tuple[int, dict[str, Any]]] = []

    def _same(self, e: dict[str, Any]) -> bool:
        return e["step"] == self.entry["step"] and e["agent"] == self.entry["agent"]

    def do(self, target: Session) -> None:
        old = list(target.interventions)
        self.replaced = [(i, e) for i, e in enumerate(old) if self._same(e)]
        target.apply_interventions([e for e in old if not self._same(e)] + [dict(self.entry)])

    def undo(self, target: Session) -> None:
        entries = list(target.interventions)
        for i in range(len(entries) - 1, -1, -1):
            if entries[i] == self.entry:
                del entries[i]
                break
        for i, e in self.replaced:
            entries.insert(i, e)
        target.apply_interventions(entries)

    def blocked(self, target: Session) -> str | None:
        if target.num_steps > self.entry["step"]:
            return (f"step {self.entry['step']} was simulated with it; branch at step {self.entry['step']} to "
                    f"change it")
        return None


class SetColourScheme(Command):
    """Colour agents by ``name`` (saved with the project); consecutive colour edits merge into one step."""

    id = MERGE_COLOUR

    def __init__(self, name: str) -> None:
        self.name = name
        self.old: str | None = None
        self.text = f"Colour agents by {name}"

    def do(self, target: Session) -> None:
        if self.old is None:
            self.old = target.view.colour_by
        target.set_view(colour_by=self.name)

    def undo(self, target: Session) -> None:
        assert self.old is not None
        target.set_view(colour_by=self.old)

    def merge_with(self, other: Command) -> bool:
        if not isinstance(other, SetColourScheme):
            return False
        self.name = other.name
        self.text = other.text
        return True
