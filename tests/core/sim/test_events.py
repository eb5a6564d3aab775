"""Goal and action events read from the episode arrays, breakpoints, and resuming past the hit playback stopped at."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.studio import default_config, run_sim


def test_goal_and_action_events_match_the_arrays(sim):
    from core.sim.events import MarkerIndex, extract_events

    ep = sim.buffer
    reached = np.asarray(ep.array("reached"))
    goal = [(e.step, e.agent) for e in extract_events(ep, kinds=["goal_reached"])]
    assert goal == sorted(zip(*map(list, np.nonzero(reached))))
    dec = np.asarray(ep.array("decided"))
    agent = int(np.argmax([(np.diff(dec[:, i]) != 0).sum() for i in range(dec.shape[1])]))
    changes = [e.step for e in extract_events(ep, selected=agent, kinds=["action_changed"])]
    assert changes == [k for k in range(1, ep.num_steps) if dec[k, agent] != dec[k - 1, agent]]
    # incremental index == one full extraction
    idx = MarkerIndex(selected=agent)

    class Partial:
        def __init__(self, n):
            self.n = n
            self.agents = ep.agents

        @property
        def num_steps(self):
            return self.n

        def array(self, name):
            return ep.array(name)[: self.n]

    for n in (0, 7, 8, 30, ep.num_steps):
        idx.update(Partial(n))
    assert idx.events == extract_events(ep, selected=agent)
    idx.truncate(8)
    assert all(e.step < 8 for e in idx.events) and idx.scanned == 8
    idx.set_selected(ep, None)
    assert all(e.kind == "goal_reached" for e in idx.events)


def test_breakpoints(sim):
    from core.base.codes import ACTION_NAMES
    from core.sim.events import Breakpoint, check_breakpoints

    ep = sim.buffer
    names = ep.agents.names
    assert Breakpoint("step", step=10).check(ep, 9).show == 10
    assert Breakpoint("step", step=10).check(ep, 10) is None
    dec = np.asarray(ep.array("decided"))
    k, i = 5, 2
    act = ACTION_NAMES[dec[k, i]]
    bp = Breakpoint("action", agent=names[i], action=act)
    hit = bp.check(ep, k)
    assert hit is not None and hit.show == k and act in hit.text
    other = [a for a in ACTION_NAMES if a != act][0]
    assert Breakpoint("action", agent=names[i], action=other).check(ep, k) is None
    assert Breakpoint("action", agent=names[i], action=act, enabled=False).check(ep, k) is None
    first = next((k for k in range(ep.num_steps)
                  if check_breakpoints([Breakpoint("action", agent=names[i], action=act)], ep, k)), None)
    assert first == int(np.argmax(dec[:, i] == dec[k, i]))
    for b in (bp, Breakpoint("step", step=3), Breakpoint("goal"), Breakpoint("goal", agent=names[0])):
        assert Breakpoint.from_dict(b.to_dict()) == b
    with pytest.raises(ValueError):
        Breakpoint("action", agent=names[0], action="Jump")
    with pytest.raises(ValueError):
        Breakpoint("sometimes")


def test_check_breakpoints_skips_the_state_playback_resumes_from():
    from core.sim.events import Breakpoint, check_breakpoints

    ep = run_sim(default_config(), steps=60).buffer
    bp = Breakpoint("goal")
    k = next(k for k in range(ep.num_steps) if bp.check(ep, k) is not None)
    assert check_breakpoints([bp], ep, k).show == k
    assert check_breakpoints([bp], ep, k, resume_from=k) is None        # the hit we resume from
    assert check_breakpoints([bp], ep, k, resume_from=k - 1) is not None
    step_bp = Breakpoint("step", step=k + 1)                               # shows k + 1: still fires
    assert check_breakpoints([bp, step_bp], ep, k, resume_from=k).breakpoint == step_bp
