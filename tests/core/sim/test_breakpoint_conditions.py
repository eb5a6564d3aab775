"""Breakpoint conditions (core/sim/breakpoints.py), Qt-free: edge-triggered ``when`` against level ``while``,
subjects (one agent, any agent of a type or with a concept, any agent), clause / goal / gridlock conditions, the
project.yaml form (round trip, older files, located errors) and the EditBreakpoint command."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from core.base.codes import ACTION_INDEX, ACTION_NAMES, Kind
from core.sim.breakpoints import KEYS, Breakpoint, check_breakpoints

S, N = ACTION_INDEX["Stop"], ACTION_INDEX["Normal"]


class Recording:
    """An episode-like object over plain arrays: what breakpoints read (decided, fired, reached, agents, meta)."""

    def __init__(self, decided, fired=None, reached=None, kinds=None, police=()):
        dec = np.asarray(decided, np.int8)
        t, n = dec.shape
        self._a = {"decided": dec,
                   "fired": np.asarray(fired if fired is not None else np.full((t, n), -1), np.int32),
                   "reached": np.asarray(reached if reached is not None else np.zeros((t, n)), bool)}
        conc = np.zeros(n, bool)
        conc[list(police)] = True
        self.agents = SimpleNamespace(names=tuple(f"Car_{i}" for i in range(n)),
                                      kinds=np.asarray(kinds if kinds is not None else [Kind.CAR] * n, np.int8),
                                      concepts={"police": conc})
        self.meta = {"clauses": [{"id": 0, "label": "Stop#1"}, {"id": 1, "label": "Stop#2"},
                                 {"id": 2, "label": "Slow#1"}]}

    @property
    def num_steps(self):
        return len(self._a["decided"])

    def array(self, name):
        return self._a[name]


def hits(bp: Breakpoint, ep) -> list[int]:
    return [k for k in range(ep.num_steps) if bp.check(ep, k) is not None]


# ---- when (edge) and while (level) --------------------------------------------------------------------------------

def test_when_fires_as_the_action_starts_while_fires_on_every_step_of_it():
    #        step:  0  1  2  3  4  5  6
    ep = Recording(np.array([[S, N, S, S, N, S, S],
                             [N, N, N, N, N, N, N]]).T)
    when = Breakpoint("action", agent="Car_0", action="Stop", mode="when")
    assert when.describe() == "pause when Car_0 starts to Stop"
    assert hits(when, ep) == [0, 2, 5]               # step 0 has no earlier decision: a Stop there starts
    hit = when.check(ep, 2)
    assert (hit.step, hit.show) == (2, 2) and hit.text == "Car_0 starts to Stop at step 2"
    level = Breakpoint("action", agent="Car_0", action="Stop", mode="while")
    assert level.describe() == "pause while Car_0 does Stop"
    assert hits(level, ep) == [0, 2, 3, 5, 6]
    assert hits(Breakpoint("action", agent="Car_1", action="Stop", mode="when"), ep) == []
    assert hits(Breakpoint("action", agent="Car_9", action="Stop"), ep) == []     # not in this episode
    assert hits(Breakpoint("action", agent="Car_0", action="Stop", mode="when", enabled=False), ep) == []


def test_a_group_subject_fires_when_any_of_its_agents_starts():
    dec = np.full((6, 4), N)
    dec[1:, 0] = S          # a car, starts at 1
    dec[3:, 1] = S          # a police car, starts at 3
    dec[2:4, 2] = S         # a pedestrian, starts at 2
    ep = Recording(dec, kinds=[Kind.CAR, Kind.CAR, Kind.PEDESTRIAN, Kind.CAR], police=[1])
    car = Breakpoint("action", type="Car", action="Stop", mode="when")
    assert car.describe() == "pause when any Car starts to Stop"
    assert hits(car, ep) == [1, 3]
    assert hits(Breakpoint("action", type="Pedestrian", action="Stop", mode="when"), ep) == [2]
    assert hits(Breakpoint("action", type="Pedestrian", action="Stop", mode="while"), ep) == [2, 3]
    police = Breakpoint("action", concept="police", action="Stop", mode="when")
    assert police.describe() == "pause when any police agent starts to Stop" and hits(police, ep) == [3]
    anyone = Breakpoint("action", action="Stop", mode="when")
    assert anyone.subject == "any agent" and hits(anyone, ep) == [1, 2, 3]
    assert "Car_1" in anyone.check(ep, 3).text


def test_clause_by_label_or_id_and_goal_conditions():
    fired = np.full((5, 2), -1)
    fired[1:3, 0] = 1       # Stop#2 fires for Car_0 in steps 1, 2
    fired[4, 0] = 1
    fired[2, 1] = 0
    reached = np.zeros((5, 2), bool)
    reached[3, 1] = True
    ep = Recording(np.full((5, 2), S), fired=fired, reached=reached)
    by_label = Breakpoint("clause", agent="Car_0", clause="Stop#2", mode="when")
    assert by_label.describe() == "pause when clause Stop#2 starts to fire for Car_0"
    assert hits(by_label, ep) == [1, 4]
    assert hits(Breakpoint("clause", agent="Car_0", clause=1, mode="when"), ep) == [1, 4]
    assert hits(Breakpoint("clause", clause="Stop#2"), ep) == [1, 2, 4]          # default mode: while
    assert hits(Breakpoint("clause", clause="Stop#1"), ep) == [2]
    assert hits(Breakpoint("clause", clause="Nope#3"), ep) == []                  # not a clause of this episode
    assert hits(Breakpoint("goal"), ep) == [3] and hits(Breakpoint("goal", agent="Car_0"), ep) == []
    assert Breakpoint("goal", agent="Car_1").check(ep, 3).text == "Car_1 reached its goal at step 3"


def test_resume_from_skips_the_hit_shown_at_the_resumed_state():
    ep = Recording(np.array([[N, S, S, N, S]]).T)
    bps = [Breakpoint("step", step=9), Breakpoint("action", agent="Car_0", action="Stop", mode="when")]
    assert check_breakpoints(bps, ep, 1).step == 1
    assert check_breakpoints(bps, ep, 1, resume_from=1) is None
    assert check_breakpoints(bps, ep, 2) is None and check_breakpoints(bps, ep, 4).show == 4


def test_when_matches_the_recorded_actions_of_a_real_run(sim):
    """The default city, 40 steps: every edge breakpoint fires exactly where the recorded decision changes to it."""
    ep = sim.buffer
    dec = np.asarray(ep.array("decided"))
    names = ep.agents.names
    fired_somewhere = 0
    for a in range(len(names)):
        for act in ACTION_NAMES:
            want = [k for k in range(ep.num_steps)
                    if dec[k, a] == ACTION_INDEX[act] and (k == 0 or dec[k - 1, a] != ACTION_INDEX[act])]
            assert hits(Breakpoint("action", agent=names[a], action=act, mode="when"), ep) == want, (a, act)
            fired_somewhere += bool(want)
    assert fired_somewhere >= len(names)
    kinds = np.asarray(ep.agents.kinds)
    car_starts = sorted({k for a in np.nonzero(kinds == Kind.CAR)[0] for k in range(ep.num_steps)
                         if dec[k, a] == S and (k == 0 or dec[k - 1, a] != S)})
    assert hits(Breakpoint("action", type="Car", action="Stop", mode="when"), ep) == car_starts


def test_gridlock_condition_on_a_real_lock_up(config):
    from core.sim.gridlock import DEFAULT_STILL_STEPS, find_gridlocks
    from core.sim.scene import build_simulation
    from tests.support.gridlock import lock_scene

    sim = build_simulation(config, lock_scene(), seed=0)
    when = Breakpoint("gridlock")
    assert when.mode == "when" and when.describe() == "pause when a gridlock starts"
    first = []
    for _ in range(DEFAULT_STILL_STEPS + 10):       # checked as the worker does: after each step
        sim.step()
        k = sim.buffer.num_steps - 1
        if when.check(sim.buffer, k) is not None:
            first.append(k)
    (g,) = find_gridlocks(sim.buffer)
    assert first == [g.step]
    ep = sim.buffer
    assert hits(Breakpoint("gridlock", mode="while"), ep) == list(range(g.step, ep.num_steps))
    assert hits(Breakpoint("gridlock", agent="Car_1"), ep) == [g.step]
    assert "Car_1" in Breakpoint("gridlock", agent="Car_1").check(ep, g.step).text
    assert hits(Breakpoint("gridlock", type="Pedestrian"), ep) == []


def _two_waiting(t: int, moving: bool = False) -> dict[str, np.ndarray]:
    """``t`` steps of two agents on cells (0, 0) and (1, 0) that decide Stop waiting on each other (clause 0), or,
    with ``moving``, where agent 0 moves one cell every step and decides Normal."""
    pos = np.zeros((t + 1, 2, 2), np.int16)
    pos[:, 1, 0] = 1
    dec = np.full((t, 2), S, np.int8)
    fired = np.zeros((t, 2), np.int32)
    wit = np.full((t, 2, 2), -1, np.int32)
    wit[:, 0, 0], wit[:, 1, 0] = 1, 0
    if moving:
        pos[:, 0, 1] = np.arange(t + 1)
        dec[:, 0], fired[:, 0], wit[:, 0] = N, -1, -1
    return {"positions": pos, "decided": dec, "fired": fired, "witness": wit}


def test_a_gridlock_breakpoint_reads_a_branched_recording_again():
    """Checked step by step as the worker does, then the recording is cut before the lock-up and recorded again
    with one agent moving: the breakpoint must not fire on the stale gridlock; replaying old steps keeps the
    shared detector (the timeline's) as it is."""
    from core.sim.gridlock import DEFAULT_STILL_STEPS, detector_for

    t = DEFAULT_STILL_STEPS + 10
    full = _two_waiting(t)

    class Growing:
        def __init__(self):
            self.agents = SimpleNamespace(names=("A0", "A1"))
            self.meta = {"clauses": [{"id": 0, "label": "Stop#1"}]}
            self.a = {}

        def show(self, arrays, n):          # the first n steps (and n+1 states) of ``arrays``
            self.a = {k: v[:n + 1] if k == "positions" else v[:n] for k, v in arrays.items()}

        @property
        def num_steps(self):
            return len(self.a["decided"])

        def array(self, name):
            return self.a[name]

    ep = Growing()
    bp = Breakpoint("gridlock")
    fired = []
    for n in range(1, t + 1):
        ep.show(full, n)
        if bp.check(ep, n - 1) is not None:
            fired.append(n - 1)
    assert fired == [DEFAULT_STILL_STEPS - 1]
    det = detector_for(ep)
    (g,) = det.gridlocks
    level = Breakpoint("gridlock", mode="while")
    assert [k for k in range(t - 1) if level.check(ep, k)] == list(range(DEFAULT_STILL_STEPS - 1, t - 1))
    assert det.scanned == t and det.gridlocks[0] is g          # replaying older steps did not make it scan again
    # the newest step checked again may have been recorded again (a branch): it is read again, same answer
    assert level.check(ep, t - 1) is not None and det.scanned == t and [x.step for x in det.gridlocks] == [g.step]
    # branch at step 5: agent 0 moves from then on
    moving = _two_waiting(t, moving=True)
    branched = {k: np.concatenate([full[k][:6 if k == "positions" else 5], moving[k][6 if k == "positions" else 5:]])
                for k in full}
    again = []
    for n in range(6, t + 1):
        ep.show(branched, n)
        if bp.check(ep, n - 1) is not None:
            again.append(n - 1)
    assert again == [] and detector_for(ep).gridlocks == []


# ---- construction, text, project.yaml -----------------------------------------------------------------------------

@pytest.mark.parametrize("kw, fragment", [
    (dict(kind="action", action="Stop", mode="sometimes"), "mode must be when or while"),
    (dict(kind="goal", mode="when"), "takes no mode"),
    (dict(kind="action", agent="Car_1", type="Car", action="Stop"), "one subject"),
    (dict(kind="action", type="Truck", action="Stop"), "type must be one of"),
    (dict(kind="action", concept="pirate", action="Stop"), "concept must be one of"),
    (dict(kind="clause"), "needs a clause"),
    (dict(kind="clause", clause=True), "needs a clause"),
    (dict(kind="step", step=3, agent="Car_1"), "takes no agent"),
    (dict(kind="gridlock", action="Stop"), "takes no action"),
    (dict(kind="action", action="Jump"), "action must be one of"),
])
def test_bad_conditions_are_refused(kw, fragment):
    with pytest.raises(ValueError, match=fragment):
        Breakpoint(**kw)


def test_dict_round_trip_and_older_forms():
    from core.project.model import BREAKPOINT_KEYS

    assert BREAKPOINT_KEYS == KEYS
    bps = [Breakpoint("step", step=4), Breakpoint("goal"), Breakpoint("goal", type="Pedestrian"),
           Breakpoint("action", agent="Car_2", action="Stop", mode="when"),
           Breakpoint("action", concept="police", action="Fast", enabled=False),
           Breakpoint("clause", type="Car", clause="Stop#7", mode="when"), Breakpoint("clause", clause=3),
           Breakpoint("gridlock"), Breakpoint("gridlock", agent="Car_1", mode="while")]
    for bp in bps:
        assert Breakpoint.from_dict(bp.to_dict()) == bp
    # an older file's action breakpoint (no mode) is the level one it always was, and is written back unchanged
    old = {"kind": "action", "agent": "Car_2", "action": "Stop"}
    assert Breakpoint.from_dict(old) == Breakpoint("action", agent="Car_2", action="Stop", mode="while")
    assert Breakpoint.from_dict(old).to_dict() == old
    assert Breakpoint("action", agent="Car_2", action="Stop", mode="when").to_dict()["mode"] == "when"
    with pytest.raises(ValueError, match="unknown breakpoint keys: colour"):
        Breakpoint.from_dict({"kind": "goal", "colour": "red"})
    assert "edge-triggered" in bps[3].explain() and "disabled" in bps[4].explain()


NEW_BREAKPOINTS = [{"kind": "step", "step": 40},
                   {"kind": "action", "agent": "Car_2", "action": "Stop", "mode": "when"},
                   {"kind": "action", "type": "Pedestrian", "action": "Slow"},
                   {"kind": "clause", "concept": "police", "clause": "Stop#7", "mode": "when", "enabled": False},
                   {"kind": "goal", "type": "Car"},
                   {"kind": "gridlock", "agent": "Car_3", "mode": "while"}]


def test_project_yaml_round_trip_and_session(config, tmp_path):
    from core.project.load import load_project
    from core.project.model import new_project
    from core.project.save import save_project
    from core.studio.session import Session

    p = new_project(config, name="bp", seed=0)
    p.studio = {"breakpoints": [dict(b) for b in NEW_BREAKPOINTS]}
    save_project(p, tmp_path / "p")
    text = (tmp_path / "p" / "project.yaml").read_text()
    assert "mode: when" in text and "type: Pedestrian" in text and "clause: Stop#7" in text
    q = load_project(tmp_path / "p")
    assert q.studio["breakpoints"] == NEW_BREAKPOINTS
    s = Session()
    assert s.open(q) == []
    assert list(s.breakpoints) == [Breakpoint.from_dict(b) for b in NEW_BREAKPOINTS]
    assert [b.to_dict() for b in s.breakpoints] == NEW_BREAKPOINTS
    assert s.studio_state()["breakpoints"] == NEW_BREAKPOINTS


BAD_EDITS = [
    ("    action: Stop\n    mode: when\n", "    action: Stop\n    mode: sometimes\n", "mode must be one of when, while"),
    ("    type: Pedestrian\n", "    type: Truck\n", "type must be one of"),
    ("    concept: police\n", "    concept: pirate\n", "concept must be one of"),
    ("    clause: Stop#7\n", "    clause: [1]\n", "'clause' must be str or int"),
    ("  - kind: goal\n    type: Car\n", "  - kind: goal\n    type: Car\n    mode: when\n", "takes no mode"),
    ("  - kind: goal\n    type: Car\n", "  - kind: goal\n    type: Car\n    agent: Car_1\n", "one subject"),
    ("    agent: Car_3\n", "    agent: Car_99\n", "no agent 'Car_99'"),
    ("  - kind: goal\n", "  - kind: goal\n    colour: red\n", "unknown key 'colour'"),
]


@pytest.mark.parametrize("old, new, fragment", BAD_EDITS)
def test_bad_breakpoints_in_project_yaml_are_located_errors(config, tmp_path_factory, tmp_path, old, new, fragment):
    from core.project.model import new_project
    from core.project.save import save_project
    from tests.support.project_edits import assert_manifest_edit_is_located

    base = tmp_path_factory.getbasetemp() / "bp-base"
    if not base.exists():
        p = new_project(config, name="bp", seed=0)
        p.studio = {"breakpoints": [dict(b) for b in NEW_BREAKPOINTS]}
        save_project(p, base)
    assert_manifest_edit_is_located(base, tmp_path, old, new, fragment)


# ---- the EditBreakpoint command ------------------------------------------------------------------------------------

def test_edit_breakpoint_is_undoable_and_keeps_its_place(config):
    from core.project.model import new_project
    from core.studio.commands import AddBreakpoint, EditBreakpoint, can_edit
    from core.studio.session import Session

    s = Session()
    s.open(new_project(config, seed=0))
    a, b = Breakpoint("step", step=5), Breakpoint("action", agent="Car_2", action="Stop")
    s.execute(AddBreakpoint(a))
    s.execute(AddBreakpoint(b))
    seen = []
    s.events.breakpoints.connect(lambda e: seen.append(e.value))
    c = Breakpoint("action", agent="Car_2", action="Stop", mode="when")
    assert can_edit(s, 1, c) and not can_edit(s, 1, b) and not can_edit(s, 1, a)
    s.execute(EditBreakpoint(1, c, s))
    assert s.breakpoints == (a, c) and seen[-1] == (a, c) and s.modified
    assert s.stack.undo_text() == ("Edit breakpoint: pause while Car_2 does Stop → pause when Car_2 starts to Stop")
    s.stack.undo()
    assert s.breakpoints == (a, b)
    s.stack.redo()
    assert s.breakpoints == (a, c)
    with pytest.raises(ValueError, match="already listed"):
        EditBreakpoint(1, a, s)
    with pytest.raises(IndexError):
        EditBreakpoint(2, a, s)
