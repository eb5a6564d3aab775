"""The statistics footer counts exactly the steps its Clauses title names (steps 0..k-1 at shown state k)."""
from __future__ import annotations

import numpy as np

from core.base.codes import ACTION_NAMES


def test_step_range_text():
    from core.view.stats import step_range_text

    assert step_range_text(0) == "no step yet"
    assert step_range_text(1) == "step 0"
    assert step_range_text(12) == "steps 0–11"


def test_footer_counts_the_steps_before_the_shown_state(sim):
    from core.view.stats import action_counts, clause_counts, goals_cumulative, range_summary

    ep = sim.buffer
    t = ep.num_steps
    counts = action_counts(ep)
    ped, car = goals_cumulative(ep)
    cum = np.cumsum(counts, axis=0)
    for k in (1, 7, t):
        cc = clause_counts(ep, upto=k)
        text = range_summary(cum, ped, car, k, t, int(cc[:-1].sum()), int(cc[-1]))
        assert text.startswith(("Step 0 " if k == 1 else f"Steps 0–{k - 1} ") + f"(shown step {k} of {t} steps)")
        tot = counts[:k].sum(axis=0)
        share = ", ".join(f"{n} {100.0 * v / tot.sum():.0f}%" for n, v in zip(ACTION_NAMES, tot))
        assert f"decisions: {share}" in text
        assert f"clause firings: {int(cc[:-1].sum())} (+{int(cc[-1])} default)" in text
        assert f"goals reached: {int(ped[k - 1])} by pedestrians, {int(car[k - 1])} by cars" in text
    assert range_summary(cum, ped, car, 0, t).endswith("nothing counted yet.")
    assert range_summary(np.zeros((0, 4)), ped[:0], car[:0], 0, 0) == "No steps recorded yet."
