"""The inspector explains a decision with what the simulation recorded (fired clause and witness per agent per
step), never by re-grounding and re-deciding; a forced action reads as forced, not as derived by the rules."""
from __future__ import annotations

import numpy as np
import pytest

from core.base.codes import Action, Kind
from core.logic.engines.decisions import make_firing
from core.sim.config import load_mode
from core.sim.episode import FIRED_FORCED
from core.view.inspect import Inspector, active_intervention
from tests.support.paths import MODES
from tests.support.studio import recorded_run

FORCED_AGENT, FORCED_FROM, FORCED_TO = 0, 5, 9


@pytest.fixture(scope="module")
def cfg():
    return load_mode(MODES / "sim_expert.yaml")


@pytest.fixture(scope="module")
def run():
    """60 recorded steps; agent 0 is forced to Stop during steps 5..9 (as a user intervention would)."""
    return recorded_run("sim_expert", 60,
                        force=lambda k: {FORCED_AGENT: Action.STOP} if FORCED_FROM <= k <= FORCED_TO else None)[1]


def test_reported_clause_and_witness_are_the_recorded_ones(cfg, run):
    ins = Inspector(cfg)
    names = run.agents.names
    fired_seen = 0
    for k in range(0, 60, 3):
        rec = run.step_record(k)
        for i in range(len(names)):
            r = ins.report(run, k, i, recompute=False)
            assert r.fired_clause == int(rec.fired[i])
            if rec.fired[i] >= 0:
                want = make_firing(cfg.program.clauses[int(rec.fired[i])], i, np.asarray(rec.witness[i]), names)
                assert r.fired == str(want)
                assert r.witness == tuple((v, n) for v, _, n in want.binding)
                assert r.explanation.splitlines()[0] == str(want)
                assert r.forced is None
                fired_seen += 1
    assert fired_seen > 50


def test_no_re_deciding(cfg, run, monkeypatch):
    """With both engines broken the report is unchanged: nothing is decided again."""
    from core.logic.engines.compiled import CompiledEngine
    from core.logic.engines.z3engine import Z3Engine

    before = Inspector(cfg).report(run, 12, 3)

    def refuse(*_a, **_k):
        raise AssertionError("the inspector must not re-decide")

    monkeypatch.setattr(CompiledEngine, "decide", refuse)
    monkeypatch.setattr(Z3Engine, "decide", refuse)
    after = Inspector(cfg).report(run, 12, 3)
    assert (after.fired, after.fired_clause, after.witness, after.explanation) == \
        (before.fired, before.fired_clause, before.witness, before.explanation)


def test_coin_dependent_firing_is_the_recorded_one_whatever_the_regrounding_seed(cfg, run):
    """A Stop fired by CollidingClose depended on a coin of the run; re-grounding re-draws coins, so an explanation
    derived again could differ by seed — the recorded one never does."""
    ins = Inspector(cfg)
    fired = run.array("fired")
    hit = None
    for k, i in zip(*np.nonzero(fired >= 0)):
        clause = cfg.program.clauses[int(fired[k, i])]
        if "CollidingClose" in str(clause) and run.agents.kinds[i] == Kind.PEDESTRIAN:
            hit = int(k), int(i)
            break
    assert hit is not None, "a pedestrian stopped for CollidingClose in the run"
    k, i = hit
    reports = [ins.report(run, k, i, seed=s) for s in range(6)]
    assert {r.explanation for r in reports} == {reports[0].explanation}
    assert reports[0].fired_clause == int(fired[k, i]) and "CollidingClose" in reports[0].fired


def test_forced_action_reads_as_forced(cfg, run):
    ins = Inspector(cfg)
    r = ins.report(run, 7, FORCED_AGENT)
    assert run.step_record(7).fired[FORCED_AGENT] == FIRED_FORCED
    assert r.decided == "Stop" and r.fired_clause == FIRED_FORCED
    assert r.forced is not None and r.fired is None and r.witness == () and r.derived == ()
    assert "forced by" in r.explanation and "not derived by the rules" in r.explanation
    after = ins.report(run, FORCED_TO + 1, FORCED_AGENT)
    assert after.forced is None


def test_user_intervention_is_named_as_the_user(cfg, run):
    meta = dict(run.meta)
    run.meta["interventions"] = [{"step": FORCED_FROM, "agent": FORCED_AGENT, "action": int(Action.STOP)},
                                 {"step": FORCED_TO + 1, "agent": FORCED_AGENT, "action": None}]
    try:
        r = Inspector(cfg).report(run, 7, FORCED_AGENT)
        assert r.forced == f"the user (action override set at step {FORCED_FROM})"
        assert "forced by the user" in r.explanation
    finally:
        run.meta.clear()
        run.meta.update(meta)


def test_active_intervention_is_sticky_until_ended():
    meta = {"interventions": [{"step": 2, "agent": 1, "action": 3}, {"step": 6, "agent": 1, "action": None},
                              {"step": 4, "agent": 0, "action": 0}]}
    assert active_intervention(meta, 1, 1) is None
    assert active_intervention(meta, 2, 1)["step"] == 2 and active_intervention(meta, 5, 1)["step"] == 2
    assert active_intervention(meta, 6, 1) is None and active_intervention(meta, 9, 0)["step"] == 4
    assert active_intervention({}, 3, 1) is None


def test_view_table_is_still_regrounded(cfg, run):
    from core.logic.grounding.grounder import Grounder

    r = Inspector(cfg).report(run, 20, 2)
    g = Grounder(cfg.city, cfg.ontology).ground(run.snapshot(20), np.random.default_rng(0))
    assert [row.name for row in r.view] == [row.name for row in g.ego_view(2).rows]
    assert "re-grounded" in r.regrounded_note and "recorded" in r.recorded_note
    assert Inspector(cfg).report(run, 20, 2, recompute=False).view == ()


@pytest.fixture(scope="module")
def run_without_coins(run, tmp_path_factory):
    """``run`` saved in the format without coins (version 1), as files written before coins were recorded."""
    from core.sim.episode import PLAN_FIELDS, STATE_FIELDS, STEP_FIELDS, load_episode, write_episode_file

    path = run.save(tmp_path_factory.mktemp("v1") / "run.npz")
    ep = load_episode(path)
    arrays = {name: ep.array(name) for name in STATE_FIELDS + STEP_FIELDS + PLAN_FIELDS}
    meta = {k: v for k, v in ep.meta.items() if k not in ("coin_predicates", "coins_from_step")}
    old = load_episode(write_episode_file(path.with_name("v1.npz"), arrays, meta))
    assert old.version == 1 and old.coins(10) is None
    return old


@pytest.mark.parametrize("which", ["recorded coins", "no coins recorded"])
def test_view_table_agrees_with_a_recorded_colliding_close_firing(cfg, run, run_without_coins, which):
    """The table shows the pair behind a recorded CollidingClose firing as the run saw it, whatever the seed: the
    step's recorded coin, or — in an episode without coins — the value the firing proves."""
    ep = run if which == "recorded coins" else run_without_coins
    ins = Inspector(cfg)
    fired = ep.array("fired")
    witness = ep.array("witness")
    for k, i in zip(*np.nonzero(fired >= 0)):
        clause = cfg.program.clauses[int(fired[k, i])]
        if "CollidingClose" in str(clause) and ep.agents.kinds[i] == Kind.PEDESTRIAN:
            break
    else:
        pytest.fail("a pedestrian stopped for CollidingClose in the run")
    k, i = int(k), int(i)
    other = ep.agents.names[int(witness[k, i, 0])]
    for s in range(8):
        r = ins.report(ep, int(k), i, seed=s)
        ego = next(row for row in r.view if row.agent == i)
        assert f"CollidingClose({ep.agents.names[i]}, {other})" in ego.relations, s
