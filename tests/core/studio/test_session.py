"""The Qt-free session model: open, record (step), scrub, select, breakpoints, forced actions, the modified flag and
a save/load round trip, with the events views subscribe to."""
from __future__ import annotations

import numpy as np
import pytest

from core.sim.episode import EpisodeBuffer
from core.sim.events import Breakpoint
from core.sim.frames import apply_frame
from core.studio.commands import (
    AddBreakpoint,
    ClearBreakpoints,
    ForceAction,
    RemoveBreakpoint,
    SetBreakpointEnabled,
    SetColourScheme,
)
from core.studio.events import EmitterGroup
from core.studio.session import Session, ViewOptions, load_target
from tests.support.studio import DEFAULT_MODE, assert_same_episode


def _started(config, frames, steps: int = 0) -> Session:
    """A session on a new project of ``config`` whose simulation sent state 0 and ``steps`` steps."""
    from core.project.model import new_project

    s = Session()
    s.open(new_project(config, seed=3))
    f0 = frames[0]
    buf = EpisodeBuffer(f0.agents, {"seed": 3}, witness_vars=frames[1].step["witness"].shape[-1])
    apply_frame(buf, f0)
    s.set_history(buf)
    if steps:
        s.record(frames[1:steps + 1])
    return s


def _log(session: Session, *names: str) -> list:
    seen: list = []
    for n in names:
        session.events[n].connect(lambda e: seen.append((e.type, getattr(e, "value", None))))
    return seen


def test_emitter_calls_every_callback_blocks_and_reraises():
    g = EmitterGroup("src", "changed")
    got = []
    g.changed.connect(lambda e: got.append((e.source, e.value)))
    g.changed.emit(value=1)
    with g.changed.blocker():
        assert g.changed.emit(value=2) is None
    assert got == [("src", 1)]

    def bad(e):
        raise RuntimeError("broken view")

    g.changed.disconnect()
    g.changed.connect(bad)
    g.changed.connect(lambda e: got.append(("after", e.value)))
    with pytest.raises(RuntimeError, match="broken view"):
        g.changed.emit(value=3)
    assert got[-1] == ("after", 3)                 # the other views still heard of it
    with pytest.raises(ValueError):
        g.add("changed")


def test_open_a_mode_file_then_record_and_scrub(config, frames):
    project, episode = load_target(DEFAULT_MODE)
    assert episode is None and project.root is None
    s = _started(config, frames)
    seen = _log(s, "recorded", "cursor")
    assert s.num_steps == 0 and s.cursor == 0 and not s.modified
    s.record(frames[1:6])                          # five simulated steps arrive
    assert s.num_steps == 5 and s.modified and seen == [("recorded", 5)]
    assert s.set_cursor(3) == 3 and s.cursor == 3
    assert s.set_cursor(99) == 5 and s.set_cursor(-4) == 0     # scrubbing clamps to the recording
    assert [v for t, v in seen if t == "cursor"] == [3, 5, 0]
    s.set_cursor(0)
    assert [v for t, v in seen if t == "cursor"] == [3, 5, 0]   # no event when nothing changed
    with pytest.raises(ValueError, match="does not follow"):
        s.record(frames[3:4])                      # a frame out of order is refused


def test_load_target_reports_missing_and_foreign_paths(tmp_path):
    from core.base.errors import LogiCityError

    with pytest.raises(LogiCityError, match="not found"):
        load_target(tmp_path / "missing")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(LogiCityError, match="not a project"):
        load_target(tmp_path / "notes.txt")


def test_select_follows_agents_and_per_agent_markers(config, frames):
    s = _started(config, frames, 12)
    seen = _log(s, "selection", "markers")
    dec = np.asarray(s.history.array("decided"))
    agent = int(np.argmax((dec[1:] != dec[:-1]).any(axis=0)))       # one whose action changes: it has markers
    assert (dec[1:, agent] != dec[:-1, agent]).any()
    s.select(agent)
    assert s.selected == agent and s.markers.selected == agent and seen[0] == ("selection", agent)
    per_agent = [e for e in s.markers.events if e.kind in ("action_changed", "stop")]
    assert per_agent and all(e.agent == agent for e in per_agent)
    s.select(999)                                  # not an agent: nothing selected
    assert s.selected is None and not [e for e in s.markers.events if e.kind in ("action_changed", "stop")]
    assert s.select_name("Car_3") and s.agent_names[s.selected] == "Car_3"
    assert not s.select_name("car_3")


def test_breakpoints_are_commands_and_mark_the_project_modified(config, frames):
    s = _started(config, frames, 2)
    s.mark_saved()
    seen = _log(s, "breakpoints", "modified")
    s.execute(AddBreakpoint(Breakpoint("step", step=9)))
    s.execute(AddBreakpoint(Breakpoint("goal")))
    assert s.breakpoints == (Breakpoint("step", step=9), Breakpoint("goal")) and s.modified
    s.execute(SetBreakpointEnabled(0, False, s))
    assert not s.breakpoints[0].enabled
    s.execute(RemoveBreakpoint(1, s))
    s.execute(ClearBreakpoints())
    assert s.breakpoints == ()
    while s.stack.can_undo():
        s.stack.undo()
    assert s.breakpoints == () and not s.modified   # back at the saved state
    assert ("modified", True) in seen and seen[-1] == ("modified", False)
    s.stack.redo()
    assert s.breakpoints == (Breakpoint("step", step=9),) and s.modified


def test_bad_breakpoints_of_a_project_are_reported_not_dropped_silently(config):
    from core.project.model import new_project

    p = new_project(config)
    p.studio = {"breakpoints": [{"kind": "step", "step": 4}, {"kind": "sometimes"}, {"kind": "goal", "agent": "Nobody"},
                                {"kind": "step"}, 7]}
    s = Session()
    messages = _log(s, "message")
    problems = s.open(p)
    assert s.breakpoints == (Breakpoint("step", step=4),)
    assert len(problems) == 4
    assert "breakpoint #2" in problems[0] and "sometimes" in problems[0]
    assert "breakpoint #3" in problems[1] and "'Nobody'" in problems[1]
    assert "breakpoint #4" in problems[2] and "breakpoint #5" in problems[3]
    assert len(messages) == 4 and all("Left out a breakpoint" in v for _, v in messages)
    assert s.reports == [v for _, v in messages]


def test_a_bad_colour_scheme_falls_back_with_a_report(config):
    from core.project.model import new_project

    s = Session()
    s.set_view(colour_by="Priority")
    p = new_project(config)
    p.studio = {"colour_by": "Nonsense"}
    s.open(p)
    assert s.view.colour_by == "Priority" and "Nonsense" in s.reports[-1] and "Colouring by Priority" in s.reports[-1]
    s.view = ViewOptions(colour_by="Gone")           # however a stale scheme gets there
    assert not s.check_scheme("the view") and s.view.colour_by == "Type"
    with pytest.raises(ValueError):
        s.set_view(colour_by="Nonsense")
    with pytest.raises(ValueError):
        s.set_view(paths="some")
    with pytest.raises(TypeError):
        s.set_view(zoom=2)


def test_forced_actions_branch_and_refused_undo(config, frames):
    s = _started(config, frames, 4)
    s.execute(ForceAction(0, 3, s.num_steps, "Car_0"))
    assert s.interventions == ({"step": 4, "agent": 0, "action": 3},)
    assert s.history.meta["interventions"] == [{"step": 4, "agent": 0, "action": 3}]
    s.execute(ForceAction(0, 1, 4))                                # replaces the same agent's override at step 4
    assert s.interventions == ({"step": 4, "agent": 0, "action": 1},)
    s.stack.undo()
    assert s.interventions == ({"step": 4, "agent": 0, "action": 3},)
    s.record(frames[5:7])                                          # simulated with the override: now recorded
    before = s.state()
    assert not s.stack.undo()
    assert s.state() == before and "step 4 was simulated with it" in s.reports[-1]
    assert not s.stack.can_undo() and s.stack.can_redo()
    assert not s.stack.redo() and s.state() == before and s.stack.count == 0   # redo of step 4's override too
    s.truncate(4)                                                  # a branch at 4 drops the override again
    assert s.num_steps == 4 and s.interventions == () and "interventions" not in s.history.meta


def test_save_and_open_round_trip(config, frames, tmp_path):
    s = _started(config, frames, 12)
    s.select(5)
    s.set_cursor(7)
    s.execute(AddBreakpoint(Breakpoint("action", agent=s.agent_names[1], action="Stop")))
    s.execute(SetColourScheme("Priority"))
    s.execute(ForceAction(2, 3, s.num_steps))
    assert s.modified
    s.save(tmp_path / "p")
    assert not s.modified and s.project.root == tmp_path / "p"
    project, episode = load_target(tmp_path / "p")
    t = Session()
    problems = t.open(project, episode)
    assert problems == [] and not t.modified
    assert (t.cursor, t.selected, t.breakpoints, t.view.colour_by) == (7, 5, s.breakpoints, "Priority")
    assert t.interventions == s.interventions
    assert_same_episode(t.history, s.history)
    assert t.studio_state() == s.studio_state()
    assert [(e.step, e.kind) for e in t.markers.events] == [(e.step, e.kind) for e in s.markers.events]


def test_open_restores_a_saved_view_state(saved_root):
    project, episode = load_target(saved_root)
    s = Session()
    seen = _log(s, "project", "history", "cursor", "selection")
    s.open(project, episode)
    assert s.num_steps == 10 and s.cursor == 7 and s.agent_names[s.selected] == "Car_3"
    assert s.breakpoints == (Breakpoint("step", step=40),)
    assert [t for t, _ in seen] == ["project", "history", "selection", "cursor"]
    assert not s.stack.can_undo() and not s.modified


def test_a_new_recording_selects_the_saved_agent(config, frames):
    from core.project.model import new_project

    p = new_project(config)
    p.studio = {"selected": "Car_3"}
    s = Session()
    s.open(p)
    assert s.selected is None and s.history is None
    buf = EpisodeBuffer(frames[0].agents, {"seed": 0}, witness_vars=2)
    apply_frame(buf, frames[0])
    s.set_history(buf)
    assert s.agent_names[s.selected] == "Car_3"
    s.restart(seed=9)                                  # reset: same agent selected in the next recording
    assert s.project.seed == 9 and s.modified
    s.select(None)
    buf2 = EpisodeBuffer(frames[0].agents, {"seed": 9}, witness_vars=2)
    apply_frame(buf2, frames[0])
    s.set_history(buf2)
    assert s.agent_names[s.selected] == "Car_3"


def test_positions_copy(config, frames):
    s = _started(config, frames, 3)
    pos = s.positions()
    assert pos.shape == (4, len(s.agent_names), 2)
    pos[...] = -1
    assert np.all(np.asarray(s.history.array("positions")) >= 0)
