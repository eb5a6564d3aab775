"""Forced actions are shown as forced, not as default decisions: clause statistics (the dock's "+N default Normal")
and colour by fired clause."""

import numpy as np

from core.base.codes import Action
from core.sim.config import load_mode
from core.sim.simulation import Simulation
from core.view.stats import clause_counts
from tests.support.paths import MODES


def test_forced_actions_are_not_default_decisions():
    sim = Simulation(load_mode(MODES / "sim_expert.yaml"), seed=0)
    for k in range(12):
        sim.step({0: Action.STOP, 1: Action.STOP} if k < 5 else None)
    fired = np.asarray(sim.buffer.array("fired"))
    counts = clause_counts(sim.buffer)
    assert counts[-1] == int((fired == -1).sum())
    assert counts.sum() == fired.size - 10          # 2 agents forced during 5 steps: in no bucket


def test_colour_by_clause_has_a_forced_entry():
    from core.view.colouring import FORCED_COLOUR, colour_by, colour_context

    sim = Simulation(load_mode(MODES / "sim_expert.yaml"), seed=0)
    for k in range(4):
        sim.step({2: Action.STOP} if k == 3 else None)
    col = colour_by("Fired clause", colour_context(sim.buffer, 3))
    assert col.labels[col.category[2]] == "forced (override)" and col.colours[col.category[2]] == FORCED_COLOUR
    others = [i for i in range(len(sim.agents)) if i != 2]
    assert all(col.labels[col.category[i]] != "forced (override)" for i in others)
