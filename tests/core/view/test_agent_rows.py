"""The Agents panel's rows, the witness the map rings and the cell cycling of map clicks, checked against the
recorded episode without Qt (core/view/agent_rows.py)."""
from __future__ import annotations

import numpy as np

from core.base.codes import ACTION_NAMES
from core.view.agent_rows import (
    AgentRow,
    agent_rows,
    agents_in_cell,
    natural_key,
    pick_in_cell,
    row_matches,
    witness_agents,
)
from core.view.inspect import Inspector


def test_rows_read_the_recorded_state(sim):
    ep = sim.buffer
    k = 25
    rows = agent_rows(ep, k)
    rec = ep.step_record(k)
    snap = ep.snapshot(k)
    reached = np.asarray(ep.array("reached")[:k]).sum(axis=0)
    assert [r.index for r in rows] == list(range(len(ep.agents)))
    for r in rows:
        i = r.index
        assert r.name == ep.agents.names[i]
        assert r.action == ACTION_NAMES[int(rec.decided[i])]
        assert r.position == tuple(int(v) for v in snap.positions[i])
        assert r.goals_reached == int(reached[i])
        assert r.path_left == len(ep.remaining_path(k, i)) - 1
        assert r.concepts == ", ".join(ep.agents.concept_names(i))


def test_rows_agree_with_the_inspector_at_the_newest_state(sim, config):
    """At the newest state nothing is decided yet: like the inspector, the row shows the step that led there."""
    ep = sim.buffer
    k = ep.num_steps
    insp = Inspector(config)
    for r in agent_rows(ep, k)[:6]:
        rep = insp.report(ep, k, r.index, recompute=False)
        assert (r.action, r.goals_reached, r.detailed) == (rep.decided, rep.goals_reached, rep.detailed)


def test_before_the_first_step_no_action_is_shown(config):
    from tests.support.studio import run_sim

    ep = run_sim(config, steps=0).buffer
    rows = agent_rows(ep, 0)
    assert rows and all(r.action == "—" and r.goals_reached == 0 and not r.forced for r in rows)
    assert all(witness_agents(ep, 0, r.index) == () for r in rows)


def test_goals_reached_count_up(sim):
    ep = sim.buffer
    total = np.asarray(ep.array("reached")).sum(axis=0)
    rows = agent_rows(ep, ep.num_steps)
    assert [r.goals_reached for r in rows] == [int(v) for v in total]


def _row(**kw) -> AgentRow:
    base = dict(index=0, name="Car_3", kind="Car", detailed="ambulance", concepts="ambulance, fast",
                action="Stop", forced=False, goals_reached=1, path_left=12, position=(1, 2))
    base.update(kw)
    return AgentRow(**base)


def test_filter_words_must_all_match_any_field():
    r = _row()
    assert row_matches(r, "")
    assert row_matches(r, "car stop")
    assert row_matches(r, "AMBUL")
    assert row_matches(r, "fast car")
    assert not row_matches(r, "pedestrian")
    assert not row_matches(r, "car normal")
    assert row_matches(_row(forced=True), "forced") and not row_matches(r, "forced")


def test_names_sort_naturally():
    names = ["Car_10", "Car_2", "Pedestrian_1", "Car_1"]
    assert sorted(names, key=natural_key) == ["Car_1", "Car_2", "Car_10", "Pedestrian_1"]
    assert _row(name="Car_2").sort_key("name") < _row(name="Car_10").sort_key("name")
    assert _row(path_left=9).sort_key("path_left") < _row(path_left=10).sort_key("path_left")


def test_witness_is_the_recorded_firings_binding(sim, config):
    """The map rings exactly the agents the inspector names as the witness of the shown explanation."""
    ep = sim.buffer
    insp = Inspector(config)
    names = ep.agents.names
    found = 0
    for k in range(0, ep.num_steps + 1, 4):
        for a in range(len(ep.agents)):
            ws = witness_agents(ep, k, a)
            rep = insp.report(ep, k, a, recompute=False)
            named = [n for v, n in rep.witness if n != names[a]]
            assert [names[w] for w in ws] == list(dict.fromkeys(named))
            found += bool(ws)
    assert found > 5


def test_no_witness_for_default_or_forced_actions(sim):
    ep = sim.buffer
    k = 10
    rec = ep.step_record(k)
    default = [a for a in range(len(ep.agents)) if rec.fired[a] < 0]
    assert default and all(witness_agents(ep, k, a) == () for a in default)
    with_witness = next(a for a in range(len(ep.agents)) if witness_agents(ep, k, a))
    ep.meta["interventions"] = [{"step": 3, "agent": with_witness, "action": 1}]
    try:
        assert witness_agents(ep, k, with_witness) == ()
        assert agent_rows(ep, k)[with_witness].forced
    finally:
        del ep.meta["interventions"]


def test_clicks_cycle_through_the_agents_of_a_cell():
    pos = np.array([[5, 5], [1, 1], [5, 5], [5, 5], [2, 2]])
    assert agents_in_cell(pos, (5, 5)) == [0, 2, 3]
    # first click on the cell: the agent hit; again: the next one there, and round
    assert pick_in_cell(pos, 0, None) == 0
    assert pick_in_cell(pos, 0, 0) == 2
    assert pick_in_cell(pos, 0, 2) == 3
    assert pick_in_cell(pos, 0, 3) == 0
    # an agent selected elsewhere, or alone in its cell: the click selects what it hit
    assert pick_in_cell(pos, 0, 1) == 0
    assert pick_in_cell(pos, 4, 4) == 4


def test_the_newest_state_says_its_actions_are_the_last_steps(sim):
    ep = sim.buffer
    assert not any(r.pending for r in agent_rows(ep, ep.num_steps - 1))
    newest = agent_rows(ep, ep.num_steps)
    assert all(r.pending for r in newest)
    rec = ep.step_record(ep.num_steps - 1)
    assert [r.action for r in newest] == [ACTION_NAMES[int(a)] for a in rec.decided]
