"""Explanations agree everywhere: the map's "Action (next)" / "Fired clause" colourings, the
inspector, the map's forced-action outline and the timeline's 'forced' markers say the same thing about every
agent at every state, including the newest one (nothing decided yet, except what a user override will force)."""
from __future__ import annotations

import numpy as np
import pytest

from core.base.codes import Action
from core.sim.config import load_mode
from core.sim.episode import FIRED_FORCED
from core.sim.simulation import Simulation
from tests.support.paths import MODES

FORCED_AGENT = 2


@pytest.fixture(scope="module")
def forced_run():
    """sim_expert, seed 0, 8 steps; agent 2 forced to Stop by a user intervention from step 3 on (sticky, as the
    studio records it: fired = FIRED_FORCED and an ``interventions`` entry in the episode's meta)."""
    sim = Simulation(load_mode(MODES / "sim_expert.yaml"), seed=0)
    for k in range(8):
        sim.step({FORCED_AGENT: Action.STOP} if k >= 3 else None)
    sim.buffer.meta["interventions"] = [{"step": 3, "agent": FORCED_AGENT, "action": int(Action.STOP)}]
    return sim


def _scheme_labels(ep, k: int) -> tuple[list[str], list[str]]:
    from core.view.colouring import colour_by, colour_context

    act = colour_by("Action (next)", colour_context(ep, k))
    cls = colour_by("Fired clause", colour_context(ep, k))
    return ([act.labels[c] for c in act.category], [cls.labels[c] for c in cls.category])


def _expected_clause_label(ep, r) -> str:
    from core.view.colouring import NOT_DECIDED

    if r.pending:
        return "forced (override)" if r.upcoming else NOT_DECIDED
    if r.forced:
        return "forced (override)"
    if r.fired_clause < 0:
        return "default (no clause)"
    return ep.meta["clauses"][r.fired_clause]["label"]


def test_colourings_and_inspector_agree_at_every_state(forced_run):
    from core.view.inspect import Inspector

    ep = forced_run.buffer
    ins = Inspector(forced_run.config)
    for k in (0, 3, ep.num_steps - 1, ep.num_steps):
        actions, clauses = _scheme_labels(ep, k)
        for i in range(len(ep.agents)):
            r = ins.report(ep, k, i, recompute=False)
            assert actions[i] == r.next_action, (k, i)
            assert clauses[i] == _expected_clause_label(ep, r), (k, i)


def test_newest_state_is_not_decided_yet_the_same_way(forced_run):
    """At the newest state the map and the inspector both say 'not decided yet' (the simulation decides when it
    steps); the agent the user forces shows its forced action in both."""
    from core.view.colouring import NOT_DECIDED
    from core.view.inspect import Inspector

    ep = forced_run.buffer
    t = ep.num_steps
    actions, clauses = _scheme_labels(ep, t)
    others = [i for i in range(len(ep.agents)) if i != FORCED_AGENT]
    assert {actions[i] for i in others} == {NOT_DECIDED} == {clauses[i] for i in others}
    assert actions[FORCED_AGENT] == "Stop" and clauses[FORCED_AGENT] == "forced (override)"
    ins = Inspector(forced_run.config)
    r = ins.report(ep, t, others[0], recompute=False)
    assert r.pending and r.next_action == NOT_DECIDED and r.decision_step == t - 1
    forced = ins.report(ep, t, FORCED_AGENT, recompute=False)
    assert forced.pending and forced.upcoming == "Stop" and forced.next_action == "Stop"


def test_a_fresh_run_at_its_newest_state_says_not_decided_yet(sim):
    from core.view.colouring import NOT_DECIDED, colour_by, colour_context

    ep = sim.buffer
    for name in ("Action (next)", "Fired clause"):
        col = colour_by(name, colour_context(ep, ep.num_steps))
        assert [lab for lab, _c, _n in col.legend()] == [NOT_DECIDED]


def test_forced_actions_are_marked_on_the_map_scene_and_the_timeline(forced_run):
    from core.sim.events import event_kinds, extract_events
    from core.view.scene import build_scene, forced_at

    ep = forced_run.buffer
    fired = np.asarray(ep.array("fired"))
    assert "forced" in event_kinds() and not event_kinds()["forced"].per_agent
    events = extract_events(ep, kinds=["forced"])
    assert [(e.step, e.agent) for e in events] == [(int(k), int(a)) for k, a in zip(*np.nonzero(fired == FIRED_FORCED))]
    assert events and all("Stop forced by the user" in e.text for e in events)
    assert not extract_events(ep, 0, 3, kinds=["forced"])
    for k in range(ep.num_steps + 1):
        sc = build_scene(ep, k, scheme="Type")
        expect = [FORCED_AGENT] if k >= 3 else []
        assert list(sc.forced_agents) == expect, k
        assert list(np.flatnonzero(forced_at(ep, k))) == expect


def test_fired_clause_legend_carries_the_clause_text(sim):
    from core.view.colouring import colour_by, colour_context

    ep = sim.buffer
    table = ep.meta["clauses"]
    for k in range(ep.num_steps):
        col = colour_by("Fired clause", colour_context(ep, k))
        fired = np.asarray(ep.step_record(k).fired)
        for c in set(int(f) for f in fired if f >= 0):
            label = table[c]["label"]
            assert col.note(label) == table[c]["text"] and col.note(label)
            row = [entry for entry in col.legend() if entry[0] == label]
            assert row and row[0][2] == int((fired == c).sum())   # its firing count at this step
        if (fired >= 0).any():
            return
    pytest.fail("no clause fired in the recorded run")
