"""app/shell/undo.py: the QUndoStack (Edit ▸ Undo/Redo, History panel) mirrors the session's command stack: pushes,
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
    from app.shell.undo import UndoAdapter

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
    from app.shell.undo import UndoAdapter

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


# ---- in the studio window -----------------------------------------------------------------------------------------

def test_colour_and_forced_actions_undo_through_the_edit_menu(studio, qtbot):
    from core.base.codes import Action
    from tests.support.studio import WAIT, simulate

    win = studio
    simulate(qtbot, win, 2)
    win.session.mark_saved()                                # as if just saved: colour edits alone count
    undo = win.action("Edit", "Undo")
    win.set_colour_scheme("Priority")
    win.set_colour_scheme("Action (next)")                 # one History entry for both
    assert win.undo_stack.count() == 1 and win.dirty and win.window.isWindowModified()
    undo.trigger()
    assert win.scheme == "Type" and win.feature("view").colour_combo.currentText() == "Type" and not win.dirty
    win.select_agent(0)
    t = win.num_steps
    win.force_action(int(Action.STOP))
    assert win.session.interventions == ({"step": t, "agent": 0, "action": int(Action.STOP)},)
    assert undo.text() == f"&Undo Force {win.history.agents.names[0]} to Stop from step {t}"
    undo.trigger()                                          # not simulated yet: undone
    assert win.session.interventions == () and "interventions" not in win.history.meta
    win.action("Edit", "Redo").trigger()
    win.simulate_step()
    qtbot.waitUntil(lambda: win.num_steps == t + 1, timeout=WAIT)
    assert int(win.history.step_record(t).decided[0]) == int(Action.STOP)
    undo.trigger()                                          # simulated with it: refused, reported, dropped
    assert win.session.interventions and "was simulated with it" in win.last_message
    assert win.undo_stack.count() == win.session.stack.count == 0   # (the undone colour edit went with the push)


def test_history_dock_shows_the_commands(studio):
    from core.sim.events import Breakpoint

    win = studio
    view = win.docks["history"].widget()
    assert view.stack() is win.undo_stack
    win.add_breakpoint(Breakpoint("step", step=30))
    win.add_breakpoint(Breakpoint("goal"))
    assert [win.undo_stack.text(i) for i in range(win.undo_stack.count())] == [
        "Add breakpoint: pause at step 30", "Add breakpoint: pause when any agent reaches its goal"]
    win.undo_stack.setIndex(0)                                    # a click on the first row of the History panel
    assert win.breakpoints == [] and win.timeline.bar.breakpoints == [] and win.bp_list.count() == 0
    win.undo_stack.setIndex(2)
    assert len(win.breakpoints) == 2 and win.bp_list.count() == 2


def test_bad_breakpoints_of_a_project_are_reported_without_a_dialog(studio, qtbot):
    from PySide6 import QtWidgets

    from core.project.model import new_project
    from core.sim.events import Breakpoint
    from tests.support.studio import WAIT, default_config

    win = studio
    p = new_project(default_config())
    p.studio = {"breakpoints": [{"kind": "step", "step": 12}, {"kind": "action", "agent": "Car_3", "action": "Fly"},
                                {"kind": "goal", "agent": "Nobody"}]}
    win.feature("project").install(p, None)
    qtbot.waitUntil(lambda: win.history is not None and win.num_steps == 0, timeout=WAIT)
    assert win.breakpoints == [Breakpoint("step", step=12)]
    assert any("breakpoint #2" in r and "Fly" in r for r in win.session.reports)
    assert any("breakpoint #3" in r and "'Nobody'" in r for r in win.session.reports)
    assert win.last_message.startswith("Left out 2 breakpoint(s) of the project")
    assert win.window.findChild(QtWidgets.QMessageBox, "errorDialog") is None
