"""The inspector's true-predicates table is grounded for the shown agent's view only — the agents inside its field
of view, not every agent of the city — and equals that view in a grounding of the whole state: the same entities
in the same order, the same true unary predicates and relations, CollidingClose included when it is given that
grounding's coin flips (as it is given a recorded step's)."""
from __future__ import annotations

import numpy as np
import pytest

from core.agents.generate import random_agent_set
from core.logic.grounding.grounder import Grounder
from core.map.generate import generate_city
from core.sim.config import SimConfig, load_mode
from core.sim.simulation import Simulation
from core.view.inspect import Inspector
from tests.support.paths import MODES


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
    whole = Grounder(cfg.city, cfg.ontology)
    ins = Inspector(cfg)
    relations = colliding = 0
    for k in (0, 6, 12):
        snap = ep.snapshot(k)
        g = whole.ground(snap, np.random.default_rng(0))
        coins = g.coin_outcomes()
        for a in range(len(ep.agents)):
            want = [(r.name, r.agent, tuple(r.unary), tuple(f"{p}({r.name}, {o})" for p, o in r.relations))
                    for r in g.ego_view(a).rows]
            got = [(r.name, r.agent, r.unary, r.relations) for r in ins.view_rows(snap, a, coins=coins)]
            assert got == want, (k, a)
            relations += sum(len(r[3]) for r in want)
            colliding += sum(x.startswith("CollidingClose") for r in want for x in r[3])
    assert relations > 100 and colliding   # the views are not empty: the comparison means something


@pytest.fixture
def grounded(monkeypatch) -> list[int]:
    """The size of every snapshot the Grounder grounds from here on, in order."""
    sizes: list[int] = []
    ground = Grounder.ground

    def spy(self, snapshot, *args, **kwargs):
        sizes.append(len(snapshot))
        return ground(self, snapshot, *args, **kwargs)

    monkeypatch.setattr(Grounder, "ground", spy)
    return sizes


def test_only_the_shown_view_is_grounded(crowded, grounded):
    cfg, ep = crowded
    ins = Inspector(cfg)
    sizes = []
    for a in range(0, len(ep.agents), 9):
        r = ins.report(ep, 6, a)
        assert r.view and r.view[0].agent == a and r.view_error is None
        sizes.append(len(r.view))
    assert grounded == sizes            # one grounding per report, of exactly the agents the table lists
    assert max(sizes) < len(ep.agents)


def test_view_tables_are_kept_and_never_served_stale(crowded, grounded):
    """A view shown again (scrubbing back) is not grounded again; a view of other positions, headings, agents
    (an edited concept), another regrounding seed or another agent is, and equals a fresh inspector's."""
    from core.base.world import AgentTable, WorldSnapshot

    cfg, ep = crowded
    snap = ep.snapshot(6)
    probe = Inspector(cfg)
    a = max(range(len(ep.agents)), key=lambda i: len(probe.view_rows(snap, i)))   # a view with others in it
    ins = Inspector(cfg)
    first = ins.view_rows(snap, a)
    n = len(grounded)
    assert ins.view_rows(ep.snapshot(6), a) == first and len(grounded) == n   # same state again: kept
    others = [i for i, r in enumerate(first) if i][0]
    moved = np.array(snap.positions)
    moved[first[others].agent] = moved[a]                                 # another agent moved next to it
    turned = np.array(snap.headings)
    turned[a] = (turned[a] + 1) % 4
    ag = snap.agents
    concepts = {c: np.array(v) for c, v in ag.concepts.items()}
    name = sorted(concepts)[0]
    concepts[name][first[others].agent] = ~concepts[name][first[others].agent]
    edited = AgentTable(ag.names, np.array(ag.kinds), np.array(ag.priorities), concepts)
    changed = [WorldSnapshot(6, ag, moved, snap.headings), WorldSnapshot(6, ag, snap.positions, turned),
               WorldSnapshot(6, edited, snap.positions, snap.headings), ep.snapshot(7)]
    for other in changed:
        n = len(grounded)
        assert ins.view_rows(other, a) == Inspector(cfg).view_rows(other, a)
        assert len(grounded) == n + 2                                      # grounded anew (and by the fresh one)
    n = len(grounded)
    ins.view_rows(snap, a, seed=1)
    ins.view_rows(snap, (a + 1) % len(ep.agents))
    assert len(grounded) == n + 2
    recorded, n = ep.coins(6), len(grounded)
    assert ins.view_rows(snap, a, coins=recorded) == Inspector(cfg).view_rows(snap, a, coins=recorded)
    assert len(grounded) == n + 2                                          # the recorded coins: grounded anew
    ins.view_rows(ep.snapshot(6), a, coins=ep.coins(6))
    assert len(grounded) == n + 2                                          # and kept
