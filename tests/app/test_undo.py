"""app/undo.py: the QUndoStack (Edit ▸ Undo/Redo, History panel) mirrors the session's command stack: pushes,
merges, undo/redo from either side, the clean state, and commands the core refuses to undo."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from core.sim.events import Breakpoint  # noqa: E402
from core.studio.commands import AddBreakpoint, SetColourScheme  # noqa: E402
from core.studio.session import Session  # noqa: E402
from core.studio.stack import Command  # noqa: E402


def _same(adapter) -> None:
    core, qt = adapter.core, adapter.qt
    assert (qt.count(), qt.index(), qt.isClean()) == (core.count, core.index, core.is_clean())
    assert [qt.text(i) for i in range(qt.count())] == [core.command(i).text for i in range(core.count)]


class _Refusing(Command):
    text = "refusing"

    def __init__(self):
        self.allowed = True

    def do(self, target):
        target.apply_breakpoints(target.breakpoints + (Breakpoint("goal"),))

    def undo(self, target):
        target.apply_breakpoints(target.breakpoints[:-1])

    def blocked(self, target):
        return None if self.allowed else "not any more"


def test_qt_stack_mirrors_the_session_stack(qapp):
    from app.undo import UndoAdapter

    s = Session()
    a = UndoAdapter(s.stack)
    undo, redo = a.actions(None)
    s.execute(AddBreakpoint(Breakpoint("step", step=3)))
    s.execute(SetColourScheme("Priority"))
    s.execute(SetColourScheme("Action (next)"))          # merged: still one History entry
    _same(a)
    assert a.qt.count() == 2 and undo.text() == "&Undo Colour agents by Action (next)"
    a.qt.undo()                                          # Edit ▸ Undo
    assert s.view.colour_by == "Type" and s.stack.index == 1
    _same(a)
    s.stack.undo()                                       # on the core: Qt follows
    assert s.breakpoints == () and a.qt.index() == 0
    _same(a)
    a.qt.redo()
    a.qt.redo()
    assert s.view.colour_by == "Action (next)" and len(s.breakpoints) == 1
    s.mark_saved()
    _same(a)
    a.qt.setIndex(0)                                     # a click on "<opened>" in the History panel
    assert s.breakpoints == () and s.modified and not a.qt.isClean()
    _same(a)
    view = a.history_view()
    assert view.stack() is a.qt
    s.stack.clear()
    _same(a)


def test_a_refused_undo_drops_the_entry_on_both_sides(qapp):
    from app.undo import UndoAdapter

    s = Session()
    a = UndoAdapter(s.stack)
    s.execute(AddBreakpoint(Breakpoint("step", step=1)))
    stuck = _Refusing()
    s.execute(stuck)
    s.mark_saved()
    stuck.allowed = False
    a.qt.undo()
    _same(a)
    assert a.qt.count() == 1 and "not any more" in s.reports[-1] and len(s.breakpoints) == 2
    s.execute(_Refusing())
    s.stack.command(1).allowed = False
    s.stack.undo()                                       # refused on the core directly: Qt is rebuilt
    _same(a)
    assert a.qt.count() == 1
