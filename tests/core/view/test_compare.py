"""Agents side by side (core/view/compare.py): one value per agent from its inspector report, and which rows
differ."""
from __future__ import annotations

from core.view.compare import compare_rows
from core.view.inspect import Inspector


def test_rows_hold_each_reports_facts_and_flag_differences(sim, config):
    ep = sim.buffer
    k = 20
    insp = Inspector(config)
    rec = ep.step_record(k)
    # an agent whose action was derived by a clause with a witness, and one with the default action
    a = next(i for i in range(len(ep.agents)) if rec.fired[i] >= 0 and (rec.witness[i] >= 0).any())
    b = next(i for i in range(len(ep.agents)) if rec.fired[i] == -1)
    reps = [insp.report(ep, k, i, recompute=False) for i in (a, b)]
    rows = {r.label: r for r in compare_rows(reps, ep.meta["clauses"])}
    assert rows["Action"].values == tuple(r.decided for r in reps)
    assert rows["Fired clause"].values == (ep.meta["clauses"][int(rec.fired[a])]["label"], "default")
    assert rows["Fired clause"].differs
    names = ep.agents.names
    assert rows["Witness"].values[1] == "—"
    assert all(f"= {n}" in rows["Witness"].values[0] for v, n in reps[0].witness if n != names[a])
    assert rows["Position"].values == tuple(f"{r.position[0]}, {r.position[1]}" for r in reps)
    assert rows["Goals reached"].values == tuple(str(r.goals_reached) for r in reps)
    same = compare_rows([reps[0], reps[0]], ep.meta["clauses"])
    assert not any(r.differs for r in same)
