"""Small scenes ground binary predicates on all N×N pairs and gather the views' tables from them; large scenes
use per-view geometry. Both paths (and the engine's batched slices) must give exactly the same values and the
same CollidingClose draws."""
from __future__ import annotations

import numpy as np
import pytest

import core.logic.grounding.grounder as gmod
from core.base.codes import Heading, Kind
from core.logic.grounding.grounder import Interpretation
from tests.support.logic import blank_city, ground, ontology, snap


def random_scene(rng: np.random.Generator, n: int, size: int = 40) -> list:
    """Agents crowded on a small area (many in-view pairs, shared cells, pedestrians straight ahead)."""
    concepts = ["police", "ambulance", "old", "young", "bus", "tiro", "reckless"]
    out = []
    for _ in range(n):
        kind = Kind(int(rng.integers(0, 2)))
        pos = tuple(int(v) for v in rng.integers(0, size, 2))
        head = Heading(int(rng.integers(-1, 4)))
        con = [concepts[int(rng.integers(len(concepts)))]] if rng.random() < 0.4 else []
        out.append((kind, pos, head, int(rng.integers(0, 6)), con))
    return out


def both_paths(monkeypatch, agents, onto, seed, **kw):
    """(dense grounding, per-view grounding, rng states after each) for the same scene and seed."""
    city = blank_city()
    city.intersections[:] = np.random.default_rng(seed).random(city.intersections.shape) < 0.3
    out = []
    for limit in (10**9, 0):
        monkeypatch.setattr(gmod, "DENSE_PAIR_AGENTS", limit)
        rng = np.random.default_rng(seed)
        g = gmod.Grounder(city, ontology(onto)).ground(_snap(agents), rng, **kw)
        out.append((g, rng.bit_generator.state))
    return out


def _snap(agents):
    return snap(agents)


@pytest.mark.parametrize("onto", ["full", "easy", "medium"])
@pytest.mark.parametrize("seed", range(6))
def test_dense_and_per_view_grounding_agree(monkeypatch, onto, seed):
    rng = np.random.default_rng(seed)
    agents = random_scene(rng, int(rng.integers(2, 40)), size=(8, 16, 40)[seed % 3])
    limits = {0: 5, 3: 2} if seed % 2 else None
    (dense, s1), (view, s2) = both_paths(monkeypatch, agents, onto, seed, view_limits=limits)
    assert dense.tables.dense is not None and view.tables.dense is None
    assert s1 == s2, "same number of coin draws"
    assert np.array_equal(dense.ent, view.ent)
    o = dense.ontology
    for p in o.binary:
        assert np.array_equal(dense.binary_local(p.name), view.binary_local(p.name)), p.name
        ents = np.arange(len(agents))
        assert np.array_equal(dense.pair(p.name, ents[:, None], ents[None, :]),
                              view.pair(p.name, ents[:, None], ents[None, :])), p.name
    for p in o.unary:
        assert np.array_equal(dense.unary_local(p.name), view.unary_local(p.name)), p.name
    keys = [("valid", "")] + [("u", p.name) for p in o.unary] + \
        [(k, p.name) for p in o.binary for k in ("bxv", "bvx", "bvv")]
    ego_keys = [("u", p.name) for p in o.unary] + [("bxx", p.name) for p in o.binary]
    # the batched gathers equal the generic slices of the per-view tables
    assert np.array_equal(dense.var_slices(keys), Interpretation.var_slices(view, keys))
    assert np.array_equal(dense.ego_slices(ego_keys), Interpretation.ego_slices(view, ego_keys))
    for e in range(len(agents)):
        for n in (1, 3, 5):
            assert np.array_equal(dense.observation(e, n), view.observation(e, n)), (e, n)


def test_dense_observation_before_and_after_tables(monkeypatch):
    """The observation does not depend on which tables were already computed."""
    rng = np.random.default_rng(4)
    agents = random_scene(rng, 25, size=30)
    (fresh, _), _ = both_paths(monkeypatch, agents, "full", 1)
    (warm, _), _ = both_paths(monkeypatch, agents, "full", 1)
    for p in warm.ontology.binary:
        warm.binary_local(p.name)
    for e in range(25):
        assert np.array_equal(fresh.observation(e), warm.observation(e))


def test_no_draws_before_anyone_moves(monkeypatch):
    agents = [(Kind.CAR, (10, 10), Heading.NONE, 1, []), (Kind.PEDESTRIAN, (10, 10), Heading.NONE, 0, [])]
    (dense, s1), (view, s2) = both_paths(monkeypatch, agents, "full", 3)
    assert s1 == s2 == np.random.default_rng(3).bit_generator.state
    assert not dense.binary_local("CollidingClose").any()
    assert ground(agents).truth("IsClose", 0, 1) is False  # same cell: distance 0 is not "close"


def test_agent_off_the_map_takes_the_general_domain_path(monkeypatch):
    """An ego outside the map is clipped out of its own box: both paths must still build the same domains."""
    agents = [(Kind.CAR, (-5, 10), Heading.RIGHT, 1, []), (Kind.CAR, (3, 12), Heading.LEFT, 2, []),
              (Kind.PEDESTRIAN, (4, 10), Heading.UP, 0, [])]
    (dense, _), (view, _) = both_paths(monkeypatch, agents, "full", 0)
    assert np.array_equal(dense.ent, view.ent)
    assert 0 not in dense.ent[0]  # clipped out of its own view
