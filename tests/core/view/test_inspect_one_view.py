"""The inspector's true-predicates table is grounded for the shown agent's view only — the agents inside its field
of view, not every agent of the city — and equals that view in a grounding of the whole state: the same entities
in the same order, the same true unary predicates and relations (CollidingClose coin flips aside: they are not
recorded and are re-drawn)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.agents.generate import random_agent_set
from core.logic.grounding import Grounder
from core.map.generate import generate_city
from core.sim.config import SimConfig, load_mode
from core.sim.simulation import Simulation
from core.view.inspect import Inspector

MODES = Path(__file__).resolve().parents[3] / "configs" / "modes"


@pytest.fixture(scope="module")
def crowded():
    """80 agents in a generated 6x6-block city, 12 recorded steps (views of a few to a few dozen agents)."""
    base = load_mode(MODES / "default.yaml")
    cfg = SimConfig(city=generate_city(7, blocks=(6, 6)), agents=random_agent_set(80, seed=7),
                    ontology=base.ontology, rules=base.rules, name="crowded", rule_section=base.rule_section)
    sim = Simulation(cfg, seed=0)
    sim.run(12)
    return cfg, sim.buffer


def test_view_table_equals_the_view_of_the_whole_grounding(crowded):
    cfg, ep = crowded
    coins = {p.name for p in cfg.ontology.grounded if p.grounding == "colliding_close"}
    whole = Grounder(cfg.city, cfg.ontology)
    ins = Inspector(cfg)
    relations = 0
    for k in (0, 6, 12):
        snap = ep.snapshot(k)
        g = whole.ground(snap, np.random.default_rng(0))
        for a in range(len(ep.agents)):
            want = [(r.name, r.agent, tuple(r.unary), tuple(f"{p}({r.name}, {o})" for p, o in r.relations
                                                          if p not in coins)) for r in g.ego_view(a).rows]
            got = [(r.name, r.agent, r.unary, tuple(x for x in r.relations if x.split("(")[0] not in coins))
                   for r in ins.view_rows(snap, a)]
            assert got == want, (k, a)
            relations += sum(len(r[3]) for r in want)
    assert relations > 100   # the views are not empty: the comparison means something


def test_only_the_shown_view_is_grounded(crowded, monkeypatch):
    cfg, ep = crowded
    grounded: list[int] = []
    ground = Grounder.ground

    def spy(self, snapshot, *args, **kwargs):
        grounded.append(len(snapshot))
        return ground(self, snapshot, *args, **kwargs)

    monkeypatch.setattr(Grounder, "ground", spy)
    ins = Inspector(cfg)
    sizes = []
    for a in range(0, len(ep.agents), 9):
        r = ins.report(ep, 6, a)
        assert r.view and r.view[0].agent == a and r.view_error is None
        sizes.append(len(r.view))
    assert grounded == sizes            # one grounding per report, of exactly the agents the table lists
    assert max(sizes) < len(ep.agents)
