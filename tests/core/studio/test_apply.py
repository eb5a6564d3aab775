"""Apply (core/studio/apply.py): provenance of recordings, refusing on errors, and branching from a shown step
with edited agents (the branch continues the recorded agents exactly where they were)."""
from __future__ import annotations

import json

import numpy as np

from core.base.codes import Kind
from core.project.model import new_project
from core.sim.provenance import agents_hash, city_hash
from core.sim.simulation import Simulation
from core.studio import agent_sets as A
from core.studio.apply import BRANCH_KEY, SCENE_KEY, apply_status, branch_config, new_simulation, refusal, start_config
from core.studio.session import Session


def session_with_run(config, steps=25):
    s = Session()
    s.open(new_project(config, seed=3))
    sim = Simulation(s.project.config, seed=3)
    sim.run(steps)
    s.set_history(sim.buffer)
    return s, sim


def test_every_recording_remembers_its_city_and_agents(config):
    s, sim = session_with_run(config, 2)
    assert sim.buffer.meta["provenance"] == {"city": city_hash(config.city), "agents": agents_hash(config.agents)}
    status = apply_status(s)
    assert not status.pending and "matches the edits" in status.text()
    s.execute(A.edit(s, "agents", [0], add_concepts=["tiro"]))
    status = apply_status(s)
    assert status.agents_changed and not status.city_changed and "agents changed" in status.text()
    s.stack.undo()
    assert not apply_status(s).pending
    # a chosen start changes the hash; the order of agents does too
    assert agents_hash(A.agent_set(s, "agents")) != agents_hash(config.agents.__class__(config.agents.agents[::-1]))


def test_apply_is_refused_with_errors_and_says_why(config):
    s, _ = session_with_run(config, 1)
    assert refusal(s) is None
    s.execute(A.add(s, "agents", Kind.PEDESTRIAN, concepts=["police"]))
    why = refusal(s)
    assert why is not None and "police" in why and "Problems" in why


def test_from_step_zero_uses_the_chosen_start_and_goal(config):
    s, _ = session_with_run(config, 1)
    row = next(j for j, a in enumerate(config.agents) if a.kind is Kind.CAR)
    s.execute(A.place(s, "agents", row, start=(10, 31), goal=(230, 209)))
    sim = new_simulation(s.project.config, seed=3)
    i = row
    assert tuple(sim.positions[i]) == (10, 31) and tuple(sim.goals[i]) == (230, 209)
    assert sim.buffer.meta["provenance"]["agents"] == apply_status(s).current["agents"]


def test_branch_continues_recorded_agents_and_adds_new_ones(config):
    s, sim = session_with_run(config, 25)
    k = 17
    s.execute(A.edit(s, "agents", [1], add_concepts=["old"] if config.agents.agents[1].kind is Kind.PEDESTRIAN
                     else ["tiro"]))
    s.execute(A.add(s, "agents", Kind.CAR, start=(10, 31)))
    s.execute(A.delete(s, "agents", [0]))
    cfg = branch_config(s.project.config, s.history, k, s.project.seed)
    branch = new_simulation(cfg, seed=3)
    names = list(branch.agents.names)
    old = list(s.history.agents.names)
    assert old[0] not in names and names[-1] not in old
    kept = [old.index(n) for n in names[:-1]]
    pos_k = np.asarray(s.history.array("positions")[k])
    assert np.array_equal(branch.positions[:-1], pos_k[kept])
    assert np.array_equal(branch.goals[:-1], np.asarray(s.history.goals(k))[kept])
    assert tuple(branch.positions[-1]) == (10, 31)
    meta = branch.buffer.meta
    assert meta[BRANCH_KEY]["step"] == k and meta[BRANCH_KEY]["provenance"] == s.history.meta["provenance"]
    assert meta["provenance"] == apply_status(s).current
    branch.run(15)                                   # it simulates on
    # a saved branch re-simulates exactly: the start scene travels in the (JSON) meta
    again = new_simulation(start_config(s.project.config, json.loads(json.dumps(meta))), seed=3)
    again.run(15)
    assert np.array_equal(again.buffer.array("positions"), branch.buffer.array("positions"))
    assert SCENE_KEY in meta


def test_provenance_follows_the_agents_a_simulation_really_runs(config):
    """An env's replacement table (an SPF reset changing priorities) is hashed as run, not as configured."""
    from core.base.world import AgentTable

    sim = Simulation(config, seed=1)
    assert sim.buffer.meta["provenance"]["agents"] == agents_hash(config.agents)
    t = config.agents.table()
    changed = AgentTable.build(t.names, t.kinds, [p + 1 if k == int(Kind.CAR) else 0 for p, k in
                                                  zip(t.priorities, t.kinds)],
                               [t.concept_names(i) for i in range(len(t))])
    sim.restart(agents=changed)
    assert sim.buffer.meta["provenance"]["agents"] != agents_hash(config.agents)
    assert sim.buffer.meta["provenance"]["city"] == city_hash(config.city)


def test_branch_in_place_keeps_the_steps_before_and_reopens_exactly(config):
    """Only concepts/priorities changed: the recording keeps states 0..k, the edits hold from state k on, and the
    schedule in the meta re-simulates the whole recording exactly (what reopening a saved project does)."""
    from core.studio.apply import SCHEDULE_KEY, branch_in_place, continue_problem

    s, sim = session_with_run(config, 20)
    before = np.asarray(s.history.array("positions")).copy()
    car = next(i for i, a in enumerate(config.agents) if a.kind is Kind.CAR)
    s.execute(A.edit(s, "agents", [car], add_concepts=["bus"], priority=1))
    assert continue_problem(s) is None
    k = 9
    branch_in_place(s, k)
    assert s.num_steps == k and np.array_equal(s.history.array("positions"), before[:k + 1])
    assert "bus" not in s.history.agents_at(k - 1).concept_names(car)
    assert "bus" in s.history.agents_at(k).concept_names(car)
    assert [e["step"] for e in s.history.meta[SCHEDULE_KEY]] == [0, k]
    assert not apply_status(s).pending and s.history.meta[BRANCH_KEY]["step"] == k
    # the worker's sync: a simulation from start_config reproduces states 0..k, then continues with the edits
    meta = json.loads(json.dumps(s.history.meta))
    again = new_simulation(start_config(s.project.config, meta), seed=3)
    again.run(k + 6)
    assert np.array_equal(again.buffer.array("positions")[:k + 1], before[:k + 1])
    assert "bus" not in again.buffer.agents_at(k - 1).concept_names(car)
    assert "bus" in again.buffer.agents_at(k).concept_names(car)
    assert "bus" in again.buffer.agents_at(k + 6).concept_names(car)
    # adding an agent cannot continue the same recording
    s.execute(A.add(s, "agents", Kind.CAR))
    assert continue_problem(s) == "agents were added, removed, renamed or reordered"


# ---- Apply as a command: undo shows the recording from before it, redo the applied one ----------------------------

class _Launch:
    """What the studio's playback does for an Apply, done at once (``steps`` steps of the new config); ``pending``:
    like a reset whose answer has not arrived yet."""

    def __init__(self, session, steps=6, pending=False):
        self.session, self.steps, self.pending, self.calls = session, steps, pending, []

    def __call__(self, config, previous):
        self.calls.append((config, previous))
        if config is None or self.pending:       # in place: the recording is cut already
            return
        sim = new_simulation(config, seed=self.session.project.seed)
        sim.run(self.steps)
        self.session.set_history(sim.buffer)


def _restored(s):
    seen = []
    s.events.restored.connect(lambda e: seen.append((e.value, e.left)))
    return seen


def test_undo_of_apply_from_step_zero_restores_the_recording_and_redo_does_not_simulate(config):
    from core.base.codes import Action
    from core.sim.provenance import provenance
    from core.studio.apply_command import RESTART, ApplyEdits
    from core.studio.commands import ForceAction

    s, _ = session_with_run(config, 12)
    old = s.history
    s.select(2)
    s.set_cursor(5)
    s.execute(ForceAction(1, int(Action.STOP), 12, "x"))
    car = next(i for i, a in enumerate(config.agents) if a.kind is Kind.CAR)
    s.execute(A.place(s, "agents", car, start=(10, 31), goal=(230, 209)))
    s.mark_saved()
    edited = provenance(s.project.config)
    interventions, meta = s.interventions, dict(old.meta)
    seen = _restored(s)
    launch = _Launch(s)
    s.execute(ApplyEdits(RESTART, launch))
    assert s.history is not old and s.num_steps == 6 and not apply_status(s).pending
    assert s.interventions == () and s.modified and len(launch.calls) == 1 and launch.calls[0][1].history is old
    new = s.history
    s.set_cursor(4)
    s.stack.undo()                                                       # Edit ▸ Undo
    assert s.history is old and s.num_steps == 12 and s.cursor == 5 and s.selected == 2
    assert s.interventions == interventions and old.meta == meta         # forced actions back, in the meta too
    assert provenance(s.project.config) == edited and apply_status(s).pending   # the edits stay, unapplied
    assert not s.modified                                                # back at the saved state
    assert seen == [(old, new)]
    s.stack.redo()                                                       # Edit ▸ Redo: the applied recording again
    assert s.history is new and s.cursor == 4 and s.num_steps == 6 and len(launch.calls) == 1
    assert s.interventions == () and s.modified and seen[-1] == (new, old)
    s.stack.undo()
    s.stack.undo()                                                       # then the placing of the start and goal
    assert s.history is old and not apply_status(s).pending


def test_undo_of_a_branch_in_place_restores_the_whole_recording(config):
    from core.sim.frames import copy_episode
    from core.studio.apply import SCHEDULE_KEY
    from core.studio.apply_command import IN_PLACE, ApplyEdits
    from tests.support.studio import assert_same_episode

    s, _ = session_with_run(config, 20)
    full, meta = copy_episode(s.history), json.loads(json.dumps(s.history.meta))
    car = next(i for i, a in enumerate(config.agents) if a.kind is Kind.CAR)
    s.execute(A.edit(s, "agents", [car], add_concepts=["bus"]))
    s.set_cursor(9)
    launch = _Launch(s)
    s.execute(ApplyEdits(IN_PLACE, launch, 9))
    branched = s.history
    assert s.num_steps == 9 and SCHEDULE_KEY in branched.meta and launch.calls[0][0] is None
    s.stack.undo()
    assert s.num_steps == 20 and s.cursor == 9 and s.history is not branched
    assert_same_episode(s.history, full)
    assert json.loads(json.dumps(s.history.meta)) == meta
    s.stack.redo()
    assert s.history is branched and s.num_steps == 9 and len(launch.calls) == 1
    assert "bus" in s.history.agents_at(9).concept_names(car)


def test_undo_of_a_branch_to_a_new_recording_forgets_the_kept_one(config):
    from core.studio.apply_command import NEW_RECORDING, ApplyEdits

    s, _ = session_with_run(config, 20)
    old = s.history
    s.execute(A.add(s, "agents", Kind.CAR, start=(10, 31)))
    cfg = branch_config(s.project.config, s.history, 8, s.project.seed)
    s.set_cursor(8)
    launch = _Launch(s, steps=3)
    s.execute(ApplyEdits(NEW_RECORDING, launch, 8, cfg))
    assert [n for n, _ in s.kept] == ["main before branch at step 8"] and s.kept[0][1] is old
    assert s.history.meta[BRANCH_KEY]["episode"] == "main before branch at step 8"
    assert len(s.history.agents) == len(old.agents) + 1
    new = s.history
    s.stack.undo()
    assert s.history is old and s.kept == [] and s.cursor == 8
    s.stack.redo()
    assert s.history is new and [n for n, _ in s.kept] == ["main before branch at step 8"]


def test_undo_before_the_new_recording_arrived_starts_it_again_on_redo(config):
    from core.studio.apply_command import RESTART, ApplyEdits

    s, _ = session_with_run(config, 5)
    old = s.history
    launch = _Launch(s, pending=True)
    s.execute(ApplyEdits(RESTART, launch))
    assert s.history is old                      # the studio's worker has not answered yet
    s.stack.undo()
    assert s.history is old and s.num_steps == 5
    launch.pending = False
    s.stack.redo()                               # nothing to show again: simulated anew
    assert len(launch.calls) == 2 and s.history is not old and s.num_steps == 6
