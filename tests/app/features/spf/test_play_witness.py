"""The Safe Path Following window rings the witness of a violated rule (e.g. ``Y = Car_8``) on its map with a line
to the ego, and only at the state that violation led to."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from core.view.agent_rows import violation_witnesses  # noqa: E402
from tests.support.spf import open_spf_window  # noqa: E402

pytestmark = pytest.mark.gui


@pytest.fixture
def win(qtbot):
    return open_spf_window(qtbot)


def test_violation_witness_is_ringed_and_linked_to_the_ego(win, qtbot):
    win.start("easy", "test", 1)
    s = win.session
    while not s.done:
        qtbot.keyClick(win.map, "3")             # always Fast: runs into the intersection rule
    assert s.outcome == "violation"
    (v,) = s.records[-1].violations
    ego = s.env.ego
    named = [w["name"] for w in v["witness"] if w["agent"] != ego]
    assert named                                  # e.g. Y = Car_8
    overlay = win.witness
    names = s.env.sim.agents.names
    assert [names[a] for a in overlay.agents] == named and overlay.ring.isVisible()
    pos = np.asarray(s.env.sim.buffer.snapshot(s.num_steps).positions)
    x, y = overlay.ring.getData()
    assert sorted(zip(np.floor(y).astype(int), np.floor(x).astype(int))) == \
        sorted(tuple(pos[a]) for a in overlay.agents)
    lx, ly = overlay.line.getData()
    assert (int(np.floor(ly[0])), int(np.floor(lx[0]))) == tuple(pos[ego])
    # scrubbing back to a state no violation led to: nothing ringed
    win.panel.slider.setValue(1)
    assert win.shown == 1 and overlay.agents == () and not overlay.line.isVisible()


def test_violation_witnesses_leave_out_the_ego_and_repeats():
    vs = [{"witness": [{"variable": "X", "agent": 0, "name": "Car_1"}, {"variable": "Y", "agent": 5, "name": "P"}]},
          {"witness": [{"variable": "Y", "agent": 5, "name": "P"}, {"variable": "Z", "agent": 2, "name": "Q"}]}]
    assert violation_witnesses(vs, 0) == (5, 2)
    assert violation_witnesses((), 0) == ()
