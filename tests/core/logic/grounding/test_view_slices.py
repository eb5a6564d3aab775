"""Large scenes (more than DENSE_PAIR_AGENTS agents) ground only the pairs the compiled engine reads: the (ego, V)
and (V, ego) slices and, for clauses with two free variables, the full tables of the views that need them. Each
must equal the same values cut from the views' full [E, K, K] tables (the generic Interpretation path)."""
from __future__ import annotations

import numpy as np

from core.base.codes import Heading, Kind
from core.logic.grounding.grounder import DENSE_PAIR_AGENTS, Interpretation
from tests.support.logic import blank_city, ground


def _scene(n: int = 300, seed: int = 11):
    rng = np.random.default_rng(seed)
    agents = [(Kind(int(rng.integers(0, 2))), tuple(int(v) for v in rng.integers(0, 90, 2)),
               Heading(int(rng.integers(-1, 4))), int(rng.integers(0, 6)),
               [c for c in ("police", "young", "old", "tiro") if rng.random() < 0.3]) for _ in range(n)]
    return ground(agents, city=blank_city(90, 90), seed=seed)


def test_sparse_slices_equal_the_full_tables():
    g = _scene()
    assert len(g.names) > DENSE_PAIR_AGENTS and g.k > 8
    binaries = [p.name for p in g.ontology.binary]
    keys = tuple([("valid", ""), ("u", "IsCar")] + [(kind, p) for p in binaries for kind in ("bxv", "bvx", "bvv")])
    fast = g.var_slices(keys)
    ego_keys = tuple([("u", "IsPedestrian")] + [("bxx", p) for p in binaries])
    fast_ego = g.ego_slices(ego_keys)
    assert not any(g.tables.built_binary_local(p) is not None for p in binaries), \
        "the slices must not build the full per-view tables"
    full = Interpretation.var_slices(g, keys)   # generic: cut from binary_local's [E, K, K] tables
    assert np.array_equal(fast, full)
    assert np.array_equal(fast_ego, Interpretation.ego_slices(g, ego_keys))
    some_true = {p for p in binaries if full[keys.index(("bxv", p))].any()}
    assert {"IsClose", "NextTo", "HigherPri"} <= some_true


def test_rows_of_the_full_tables_equal_the_full_tables_rows():
    g = _scene(seed=12)
    rows = np.array([0, 5, 17, 120, len(g.names) - 1])
    for p in ("NextTo", "CollidingClose", "LeftOf"):
        part = g.binary_rows(p, rows)
        assert np.array_equal(part, g.binary_local(p)[rows]), p


def test_one_view_of_the_binary_tables_equals_its_row_of_the_full_tables():
    """``binary_view`` (the inspector's one view) reads the same values as ``binary_local``, whose other views it
    does not build, in a dense scene (gathered from the global tables) and in a large one (that view's pairs)."""
    for n in (40, 300):
        g = _scene(n=n, seed=13)
        assert (len(g.names) > DENSE_PAIR_AGENTS) == (n == 300)
        egos = [0, 3, len(g.names) - 1]
        for p in (q.name for q in g.ontology.binary):
            views = [g.binary_view(p, e).copy() for e in egos]
            assert g.tables.built_binary_local(p) is None, "one view must not build every view's table"
            full = g.binary_local(p)
            for e, v in zip(egos, views):
                assert np.array_equal(v, full[e]), (n, p, e)
            assert np.array_equal(g.binary_view(p, egos[1]), full[egos[1]])   # read from the full table now
