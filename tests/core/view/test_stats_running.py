"""RunningStats (core/view/stats.py) keeps the statistics of a growing recording up to date from the new steps
only; every figure equals the batch functions' over the whole recording, after growth in uneven chunks and after a
cut."""
from __future__ import annotations

import numpy as np

from core.sim.config import load_mode
from core.sim.simulation import Simulation
from core.view.stats import RunningStats, action_counts, clause_counts, goals_cumulative
from tests.support.paths import ROOT


def check(rs: RunningStats, ep) -> None:
    assert rs.steps == ep.num_steps
    assert (rs.counts == action_counts(ep)).all()
    assert (rs.counts_cum == np.cumsum(action_counts(ep), axis=0)).all()
    ped, car = goals_cumulative(ep)
    assert (rs.ped == ped).all() and (rs.car == car).all()
    for k in range(ep.num_steps + 1):
        assert rs.clause_counts(k).tolist() == clause_counts(ep, upto=k).tolist()


def test_running_statistics_equal_the_batch_ones_through_growth_and_a_cut():
    sim = Simulation(load_mode(ROOT / "configs" / "modes" / "default.yaml"), seed=0, record=True)
    rs = RunningStats()
    rs.update(sim.buffer)
    check(rs, sim.buffer)
    for n in (1, 6, 23):
        sim.run(n)
        assert rs.update(sim.buffer)
        check(rs, sim.buffer)
    assert not rs.update(sim.buffer)          # nothing new: nothing scanned
    assert int(rs.clauses_cum[-1, :-1].sum()) > 0   # some clause fired (the test means something)
    sim.buffer.truncate(12)                    # a branch cut the recording: counted again
    rs.update(sim.buffer)
    check(rs, sim.buffer)
