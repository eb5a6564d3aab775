"""With seed 0 the bundled default city (what ``python main.py`` opens) locks up — 8 of its 10 cars stop each other
for good through CollidingClose — and the lock-up is flagged by step 2,700.

Long (3,000 simulated steps), hence slow-marked; docs/gridlock.md has the figures."""
from __future__ import annotations

import numpy as np
import pytest

from core.base.codes import Kind
from core.sim.events import extract_events
from core.sim.gridlock import find_gridlocks

ISSUE_STEP = 2700


@pytest.mark.slow
def test_the_default_city_with_seed_0_is_flagged_as_gridlocked(config, tmp_path):
    from core.sim.episode import load_episode
    from tests.support.studio import run_sim

    path = run_sim(config, seed=0, steps=3000).buffer.save(tmp_path / "default-seed0.npz")
    ep = load_episode(path)
    gridlocks = find_gridlocks(ep)
    live = [g for g in gridlocks if g.active_at(ISSUE_STEP)]
    assert len(live) == 1, [g.to_dict() for g in gridlocks]
    g = live[0]
    assert g.step <= ISSUE_STEP and g.end is None                    # flagged, and never resolved
    clauses = ep.meta["clauses"]
    assert any("CollidingClose" in clauses[lk.clause]["text"] for lk in g.links)
    kinds = np.asarray(ep.agents.kinds)
    agents = g.agents_at(ISSUE_STEP)
    cars = [a for a in agents if kinds[a] == Kind.CAR]
    assert len(cars) == 8 and int((kinds == Kind.CAR).sum()) == 10
    pos = np.asarray(ep.array("positions"))
    assert (pos[ISSUE_STEP:, list(agents)] == pos[ISSUE_STEP, list(agents)]).all()   # for good
    # each link is what the episode recorded: the agent decided Stop by that clause with that witness
    fired, wit = np.asarray(ep.array("fired")), np.asarray(ep.array("witness"))
    for lk in list(g.links) + [b.link for b in g.blocked_at(ISSUE_STEP)]:
        assert fired[lk.step, lk.agent] == lk.clause and lk.waits_on in wit[lk.step, lk.agent]
    # the timeline shows it where it was detected
    assert [e.step for e in extract_events(ep, kinds=["gridlock"])] == [x.step for x in gridlocks]
