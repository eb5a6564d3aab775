"""Commands and the undo stack: undo of any command restores an equal session (property-based over random command
sequences with undo/redo in between), merging, the clean state behind the modified flag, refused commands."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.codes import ACTION_NAMES
from core.sim.events import Breakpoint
from core.studio.commands import (
    AddBreakpoint,
    ClearBreakpoints,
    EditBreakpoint,
    ForceAction,
    RemoveBreakpoint,
    SetBreakpointEnabled,
    SetColourScheme,
    can_edit,
)
from core.studio.session import Session
from core.studio.stack import Command, CommandStack
from tests.support.studio import recorded_session

AGENTS = ("Car_0", "Car_3", "Pedestrian_1")   # of the default city


breakpoints = st.one_of(
    st.builds(lambda k: Breakpoint("step", step=k), st.integers(0, 60)),
    st.builds(lambda a: Breakpoint("goal", agent=a), st.sampled_from((None,) + AGENTS)),
    st.builds(lambda a, act: Breakpoint("action", agent=a, action=act), st.sampled_from(AGENTS),
              st.sampled_from(ACTION_NAMES)),
    st.builds(lambda a, act, m: Breakpoint("action", agent=a, action=act, mode=m), st.sampled_from(AGENTS),
              st.sampled_from(ACTION_NAMES), st.sampled_from(("when", "while"))),
    st.builds(lambda t, m: Breakpoint("gridlock", type=t, mode=m), st.sampled_from(("Car", "Pedestrian")),
              st.sampled_from(("when", "while"))),
)
ops = st.one_of(
    st.tuples(st.just("add"), breakpoints),
    st.tuples(st.just("remove"), st.integers(0, 9)),
    st.tuples(st.just("enable"), st.integers(0, 9), st.booleans()),
    st.tuples(st.just("clear")),
    st.tuples(st.just("edit"), st.integers(0, 9), breakpoints),
    st.tuples(st.just("force"), st.integers(0, 17), st.sampled_from([None, 0, 1, 2, 3])),
    st.tuples(st.just("colour"), st.sampled_from(["Type", "Priority", "Action (next)", "Detailed type"])),
    st.tuples(st.just("undo")),
    st.tuples(st.just("redo")),
    st.tuples(st.just("save")),
)


def _command(s: Session, op: tuple) -> Command | None:
    kind = op[0]
    n = len(s.breakpoints)
    if kind == "add":
        return AddBreakpoint(op[1])
    if kind == "remove":
        return RemoveBreakpoint(op[1] % n, s) if n else None
    if kind == "enable":
        return SetBreakpointEnabled(op[1] % n, op[2], s) if n else None
    if kind == "clear":
        return ClearBreakpoints()
    if kind == "edit":
        return EditBreakpoint(op[1] % n, op[2], s) if n and can_edit(s, op[1] % n, op[2]) else None
    if kind == "force":
        return ForceAction(op[1], op[2], s.num_steps)
    return SetColourScheme(op[1])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seq=st.lists(ops, max_size=30))
def test_undo_restores_an_equal_session_for_any_command_sequence(config, frames, seq):
    s = recorded_session(config, frames, saved=True)
    states = [s.state()]            # states[i]: the session at stack index i
    clean = 0
    for op in seq:
        if op[0] == "undo":
            if s.stack.can_undo():
                assert s.stack.undo()
            assert s.state() == states[s.stack.index]
        elif op[0] == "redo":
            if s.stack.can_redo():
                assert s.stack.redo()
            assert s.state() == states[s.stack.index]
        elif op[0] == "save":
            s.mark_saved()
            clean = s.stack.index
        else:
            cmd = _command(s, op)
            if cmd is None:
                continue
            before = s.stack.index
            merged = s.execute(cmd)
            del states[before + 1:]                  # the redo tail is gone
            if clean > before:
                clean = -1
            if merged:
                states[before] = s.state()
            else:
                states.append(s.state())
        assert len(states) == s.stack.count + 1
        assert s.modified == (s.stack.index != clean), (s.stack.index, clean)
    while s.stack.can_undo():
        s.stack.undo()
        assert s.state() == states[s.stack.index]
    assert s.state() == states[0]
    while s.stack.can_redo():
        s.stack.redo()
        assert s.state() == states[s.stack.index]
    assert s.state() == states[-1]


def test_consecutive_colour_edits_merge_into_one_step(config, frames):
    s = recorded_session(config, frames, saved=True)
    for name in ("Priority", "Action (next)", "Detailed type"):
        s.execute(SetColourScheme(name))
    assert s.stack.count == 1 and s.stack.undo_text() == "Colour agents by Detailed type"
    s.stack.undo()
    assert s.view.colour_by == "Type" and not s.modified
    s.stack.redo()
    assert s.view.colour_by == "Detailed type"
    s.mark_saved()                                   # never merged across the saved state
    s.execute(SetColourScheme("Priority"))
    assert s.stack.count == 2
    s.execute(AddBreakpoint(Breakpoint("goal")))     # another command in between: no merge
    s.execute(SetColourScheme("Type"))
    assert s.stack.count == 4


def test_toggling_the_same_breakpoint_merges(config, frames):
    s = recorded_session(config, frames, saved=True)
    s.execute(AddBreakpoint(Breakpoint("step", step=5)))
    s.execute(AddBreakpoint(Breakpoint("step", step=6)))
    for on in (False, True, False):
        s.execute(SetBreakpointEnabled(0, on, s))
    assert s.stack.count == 3 and s.stack.undo_text() == "Disable breakpoint"
    s.execute(SetBreakpointEnabled(1, False, s))     # another breakpoint: its own step
    assert s.stack.count == 4
    s.stack.undo()
    s.stack.undo()
    assert all(b.enabled for b in s.breakpoints)


def test_stack_events_and_set_index(config, frames):
    s = recorded_session(config, frames, saved=True)
    seen = []
    for name in ("pushed", "index", "clean"):
        s.stack.events[name].connect(lambda e: seen.append((e.type, getattr(e, "value", getattr(e, "merged", None)))))
    for k in (1, 2, 3):
        s.execute(AddBreakpoint(Breakpoint("step", step=k)))
    assert ("clean", False) in seen and seen.count(("pushed", False)) == 3
    s.stack.set_index(0)
    assert s.breakpoints == () and s.stack.is_clean() and seen[-1] == ("clean", True)
    s.stack.set_index(2)
    assert len(s.breakpoints) == 2 and s.stack.redo_text().startswith("Add breakpoint: pause at step 3")
    s.stack.clear()
    assert s.stack.count == 0 and s.stack.is_clean()


def test_a_refused_command_is_dropped_and_reported(config, frames):
    class Stuck(Command):
        text = "stuck"

        def do(self, target):
            target.apply_breakpoints(target.breakpoints + (Breakpoint("goal"),))

        def undo(self, target):
            raise AssertionError("must not run")

        def blocked(self, target):
            return "it is stuck"

    s = recorded_session(config, frames, saved=True)
    s.execute(AddBreakpoint(Breakpoint("step", step=1)))
    s.execute(Stuck())
    s.mark_saved()
    assert not s.stack.undo()
    assert s.stack.count == 1 and s.stack.index == 1 and "it is stuck" in s.reports[-1]
    assert s.stack.clean_index == -1 and s.modified      # the saved state can no longer be reached by undo
    assert s.stack.undo() and s.breakpoints == ()             # the command before it undoes as usual


def test_stack_without_a_session():
    log: list[str] = []

    class Note(Command):
        def __init__(self, t):
            self.text = t

        def do(self, target):
            target.append(self.text)

        def undo(self, target):
            target.remove(self.text)

    stack = CommandStack(log)
    stack.push(Note("a"))
    stack.push(Note("b"))
    stack.undo()
    stack.push(Note("c"))                              # drops the redo tail
    assert log == ["a", "c"] and stack.count == 2 and not stack.can_redo()
    with pytest.raises(IndexError):
        RemoveBreakpoint(0, Session())
