"""Inspector reports agree with the logic core's view and use the firing the simulation recorded."""
from __future__ import annotations

import numpy as np


def test_inspector_report_matches_the_logic_core(config, sim):
    from core.base.codes import ACTION_NAMES, HEADING_NAMES
    from core.logic.grounding.grounder import Grounder
    from core.view.inspect import Inspector

    ep = sim.buffer
    ins = Inspector(config)
    g = Grounder(config.city, config.ontology)
    checked = 0
    for k in (3, 17, 30):
        snap = ep.snapshot(k)
        for i in range(len(ep.agents)):
            r = ins.report(ep, k, i)
            assert r.position == tuple(int(v) for v in snap.positions[i])
            assert r.heading == HEADING_NAMES[int(snap.headings[i])]
            assert r.decided == ACTION_NAMES[int(ep.step_record(k).decided[i])]
            assert r.fired_clause == int(ep.step_record(k).fired[i])   # the recorded explanation, not re-decided
            assert [row.name for row in r.view] == [row.name for row in g.ground(snap, np.random.default_rng(0))
                                                    .ego_view(i).rows]
            assert r.view[0].agent == i
            checked += 1
    assert checked
    newest = ins.report(ep, ep.num_steps, 0)
    assert newest.decision_step == ep.num_steps - 1 and newest.step == ep.num_steps
    assert ins.report(ep, 0, 0).actions.shape == (ep.num_steps,)


def test_report_uses_recorded_firing(config, sim):
    """When the episode records a fired clause, the report renders that clause with its witness."""
    from core.view.inspect import Inspector

    ep = sim.buffer
    fired = np.asarray(ep.array("fired"))
    ks, ags = np.nonzero(fired >= 0)
    assert len(ks), "the expert rules fire within the recorded steps"
    k, i = int(ks[0]), int(ags[0])
    r = Inspector(config).report(ep, k, i)
    clause = config.program.clauses[int(fired[k, i])]
    assert r.fired_clause == int(fired[k, i]) and r.fired.startswith(str(clause.head))
    assert r.witness[0][1] == ep.agents.names[i]
