"""The inspector's true-predicates table holds the truth values the rule engine decided on — CollidingClose
included: it grounds the view with the step's recorded coin flips, never re-drawn, whatever the seed. An episode of
the format without coins (tests/data/episodes/format1_*.npz) says so plainly."""
from __future__ import annotations

import numpy as np
import pytest

from core.agents.generate import random_agent_set
from core.map.generate import generate_city
from core.sim.config import SimConfig
from core.sim.episode import EpisodeBuffer, load_episode
from core.sim.simulation import Simulation
from core.view.inspect import COINS_NOT_DRAWN, COINS_NOT_RECORDED, COINS_RECORDED, Inspector
from tests.support.paths import ROOT
from tests.support.studio import default_config, record_groundings

FORMAT1 = ROOT / "tests" / "data" / "episodes" / "format1_default_seed0_40.npz"


@pytest.fixture(scope="module")
def crowded():
    """120 agents on a generated 4x4-block city (crowded views, coins every step) with the engine's groundings."""
    base = default_config()
    cfg = SimConfig(city=generate_city(5, blocks=(4, 4)), agents=random_agent_set(120, seed=3),
                    ontology=base.ontology, rules=base.rules, name="crowded", rule_section=base.rule_section)
    sim, groundings = record_groundings(cfg, seed=4, steps=25)
    return cfg, sim.buffer, groundings


def rows(view_rows):
    return [(r.name, r.agent, tuple(r.unary), tuple(r.relations)) for r in view_rows]


def engine_rows(g, ego: int):
    return [(r.name, r.agent, tuple(r.unary), tuple(f"{p}({r.name}, {o})" for p, o in r.relations))
            for r in g.ego_view(ego).rows]


def test_the_view_table_is_what_the_engine_saw_collidingclose_included(crowded):
    cfg, ep, groundings = crowded
    ins = Inspector(cfg)
    colliding = 0
    for k in (3, 11, 19, 24):
        g = groundings[k]
        coin_pairs = {tuple(p) for p in g.coin_outcomes()["CollidingClose"][0].tolist()}
        shown = [a for a in range(len(ep.agents)) if any(a in p for p in coin_pairs)]
        for a in shown:
            r = ins.report(ep, k, a, seed=k)
            assert r.coins == COINS_RECORDED and "drew at that step (recorded)" in r.regrounded_note
            want = engine_rows(g, a)
            assert rows(r.view) == want, (k, a)
            colliding += sum(x.startswith("CollidingClose") for row in want for x in row[3])
    assert colliding >= 5, "some views must hold CollidingClose relations for the test to mean something"


def test_no_seed_changes_the_table(crowded):
    cfg, ep, groundings = crowded
    ins = Inspector(cfg)
    k = 15
    pairs = groundings[k].coin_outcomes()["CollidingClose"][0]
    a = int(pairs[0, 0])
    tables = {tuple(rows(ins.report(ep, k, a, seed=s).view)) for s in range(6)}
    assert len(tables) == 1 and list(tables)[0] == tuple(engine_rows(groundings[k], a))


def test_the_newest_state_shows_the_coins_of_the_step_that_led_to_it(crowded):
    cfg, ep, groundings = crowded
    t = ep.num_steps
    a = int(groundings[t - 1].coin_outcomes()["CollidingClose"][0][0, 0])
    r = Inspector(cfg).report(ep, t, a)
    assert r.pending and r.decision_step == t - 1 and r.coins == COINS_RECORDED
    assert rows(r.view) == engine_rows(groundings[t - 1], a)


def test_an_episode_without_recorded_coins_says_so():
    old = load_episode(FORMAT1)
    cfg = default_config()
    r = Inspector(cfg).report(old, 12, 3)
    assert r.coins == COINS_NOT_RECORDED and r.view and r.view_error is None
    assert "does not record CollidingClose coin flips" in r.regrounded_note
    assert "re-drawn" in r.regrounded_note
    assert "coin flips were not recorded in this episode" in r.recorded_note     # in the dock's text, not a tooltip
    sim = Simulation(cfg, seed=0)
    sim.run(5)
    recorded = Inspector(cfg).report(sim.buffer, 2, 3)
    assert recorded.coins == COINS_RECORDED and "coin" not in recorded.recorded_note


def test_nothing_decided_yet_draws_from_the_seed():
    cfg = default_config()
    sim = Simulation(cfg, seed=0)
    assert isinstance(sim.buffer, EpisodeBuffer) and sim.buffer.num_steps == 0
    r = Inspector(cfg).report(sim.buffer, 0, 2)
    assert r.coins == COINS_NOT_DRAWN and "nothing is decided yet" in r.regrounded_note
    assert np.asarray(r.actions).size == 0
