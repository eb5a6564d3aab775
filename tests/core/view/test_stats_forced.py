"""Clause statistics: forced actions are not counted as default decisions (the dock's "+N default Normal")."""
from pathlib import Path

import numpy as np

from core.codes import Action
from core.sim.config import load_mode
from core.sim.simulation import Simulation
from core.view.stats import clause_counts

MODES = Path(__file__).resolve().parents[3] / "configs" / "modes"


def test_forced_actions_are_not_default_decisions():
    sim = Simulation(load_mode(MODES / "sim_expert.yaml"), seed=0)
    for k in range(12):
        sim.step({0: Action.STOP, 1: Action.STOP} if k < 5 else None)
    fired = np.asarray(sim.buffer.array("fired"))
    counts = clause_counts(sim.buffer)
    assert counts[-1] == int((fired == -1).sum())
    assert counts.sum() == fired.size - 10          # 2 agents forced during 5 steps: in no bucket
