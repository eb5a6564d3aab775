"""Clause coverage of an episode (core/analysis/coverage.py): counts from the recorded ``fired`` array, forced
actions (-2) left out, clauses that never fired listed."""
from __future__ import annotations

import numpy as np

from core.analysis.coverage import clause_coverage, episode_coverage
from core.base.codes import Action
from core.sim.episode import load_episode
from core.sim.simulation import Simulation

CLAUSES = [{"id": 0, "head": "Stop", "label": "Stop#1"}, {"id": 1, "head": "Stop", "label": "Stop#2"},
           {"id": 2, "head": "Fast", "label": "fastlane"}]


def test_counts_shares_and_never_fired():
    fired = np.array([[0, -1, 2, -2], [0, 0, -1, -2], [-2, 2, -1, 0]], dtype=np.int32)
    cov = clause_coverage(fired, CLAUSES, {"Stop#1": 4})
    assert (cov.steps, cov.agents, cov.forced, cov.decisions, cov.default) == (3, 4, 3, 9, 3)
    assert [(c.label, c.count) for c in cov.clauses] == [("Stop#1", 4), ("Stop#2", 0), ("fastlane", 2)]
    assert cov.clauses[0].share == 4 / 9 and cov.clauses[0].line == 4
    assert [c.label for c in cov.never_fired] == ["Stop#2"]
    assert cov.to_dict()["never_fired"] == ["Stop#2"]
    assert "Stop#1 (line 4): 4 (44.4 %)" in str(cov) and "never fired: Stop#2" in str(cov)


def test_forced_actions_do_not_count_for_the_clause_they_replace(config, tmp_path):
    """An agent whose action is overridden records -2: neither a clause nor the default gets it."""
    sim = Simulation(config, seed=2)
    free = Simulation(config, seed=2)
    for _ in range(15):
        sim.step(overrides={0: Action.STOP})
        free.step()
    path = sim.buffer.save(tmp_path / "ep.npz")
    cov = episode_coverage(load_episode(path), config.program)
    fired = sim.buffer.array("fired")
    assert (fired[:, 0] == -2).all()
    assert cov.forced == 15 and cov.decisions == fired.size - 15
    # every non-forced decision is counted once: by a clause or as default
    assert sum(c.count for c in cov.clauses) + cov.default == cov.decisions
    want = np.bincount(fired[:, 1:][fired[:, 1:] >= 0], minlength=len(config.program.clauses))
    assert [c.count for c in cov.clauses] == want.tolist()
    # lines come from the analysed program; the episode's own clause table gives labels and heads
    assert [c.line for c in cov.clauses] == [c.pos.line for c in config.program.clauses]
    assert free.buffer.array("fired")[:, 0].min() >= -1


def test_clause_table_mismatch_leaves_lines_out(config):
    sim = Simulation(config, seed=1)
    sim.run(3)
    from core.logic.lang.program import parse_rules

    other = parse_rules("Stop(X) :- IsCar(X).\n", config.ontology).program()
    cov = episode_coverage(sim.buffer, other)
    assert all(c.line is None for c in cov.clauses)
    assert len(cov.clauses) == len(config.program.clauses)
