"""The compiled kernels (core/logic/kernels.py, numba) give exactly what the numpy code they stand in for gives:
domains, CollidingClose coin pairs, the one-variable slices as bits, the clause bodies and the whole decision
(heads, fired clauses, witnesses, constraints), and the move choice. Large scenes only: below
DENSE_PAIR_AGENTS agents the kernels are never used (nor compiled)."""
from __future__ import annotations

import numpy as np
import pytest

from core.base.codes import Action, Heading, Kind
from core.logic import fast
from core.logic.engines.compiled import CompiledEngine
from core.logic.grounding.field_of_view import domains_from_pairs
from core.logic.grounding.grounder import DENSE_PAIR_AGENTS
from core.logic.grounding.spatial import box_members
from core.logic.lang.program import parse_program
from core.sim.move_arena import MoveArena
from tests.support.logic import blank_city, ground, ontology, random_tables

pytestmark = pytest.mark.skipif(not fast.available(), reason="numba is not importable here")


@pytest.fixture
def kernels_off():
    """Run the body with the kernels switched off (the numpy path), then restore the switch."""
    old = fast.set_enabled(False)
    yield
    fast.set_enabled(old)


def _agents(n: int, seed: int, size: int = 90):
    rng = np.random.default_rng(seed)
    return [(Kind(int(rng.integers(0, 2))), tuple(int(v) for v in rng.integers(0, size, 2)),
             Heading(int(rng.integers(-1, 4))), int(rng.integers(0, 6)),
             [c for c in ("police", "young", "old", "tiro", "ambulance", "bus", "reckless") if rng.random() < 0.25])
            for _ in range(n)]


def _both(fn):
    """fn() with the kernels on, then off."""
    on = fn()
    old = fast.set_enabled(False)
    try:
        off = fn()
    finally:
        fast.set_enabled(old)
    return on, off


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_domains_and_coins_equal_numpy(seed):
    agents = _agents(300, seed)
    city = blank_city(90, 90)
    limits = {0: 3, 7: 1, 299: 5} if seed == 2 else None
    on, off = _both(lambda: ground(agents, city=city, seed=seed, view_limits=limits))
    assert len(on.names) > DENSE_PAIR_AGENTS
    assert np.array_equal(on.ent, off.ent)
    assert on.coins.keys() == off.coins.keys() and on.coins
    for name, (keys, vals) in on.coins.items():
        assert np.array_equal(keys, off.coins[name][0]) and np.array_equal(vals, off.coins[name][1])
    assert any(len(k) for k, _ in on.coins.values()), "the scene must draw some coins"


def test_domains_kernel_equals_box_members():
    kern = fast.kernels()
    rng = np.random.default_rng(5)
    pos = rng.integers(0, 40, (400, 2)).astype(np.int64)   # map cells (box_members' bucketing assumes ≥ 0)
    half = rng.integers(0, 9, (400, 4))
    boxes = np.stack([pos[:, 0] - half[:, 0], pos[:, 0] + half[:, 1], pos[:, 1] - half[:, 2],
                      pos[:, 1] + half[:, 3]], axis=1)
    lim = np.where(rng.random(400) < 0.2, rng.integers(1, 6, 400), np.iinfo(np.int64).max).astype(np.int64)
    for side in (1, 3, 17):
        ent, ok = kern.domains(pos, boxes, lim, side)
        assert ok and np.array_equal(ent, domains_from_pairs(*box_members(pos, boxes), 400, lim))
    boxes[9] = [100, 101, 100, 101]   # an ego outside its own box: left to the numpy path
    assert not kern.domains(pos, boxes, lim, 4)[1]


def test_slice_bits_equal_the_bool_slices():
    g = ground(_agents(300, 4, size=200), city=blank_city(200, 200), seed=4)
    kern = fast.kernels()
    assert 8 < g.k <= 64   # bit rows hold at most 64 entities per view
    binaries = [p.name for p in g.ontology.binary]
    keys = tuple([("valid", ""), ("u", "IsCar"), ("u", "IsInInter"), ("u", "IsOld")]
                 + [(kind, p) for p in binaries for kind in ("bxv", "bvx", "bvv")])
    bits = g.var_bits(keys, kern)
    bools = g.var_slices(keys)
    assert bits is not None and bools.any()
    unpacked = (bits[:, :, None] >> np.arange(g.k, dtype=np.uint64)) & np.uint64(1)
    assert np.array_equal(unpacked.astype(bool), bools)


RULES = """Stop(X) :- Not(IsAmbulance(X)), IsAtInter(X), IsInInter(Y).
Stop(X) :- IsCar(X), LeftOf(Y, X), IsClose(Y, X), IsPolice(Y).
Stop(X) :- CollidingClose(X, Y).
Slow(X) :- Not(Stop(X)), IsTiro(X), IsPedestrian(Y), IsClose(X, Y).
Slow(X) :- Not(Stop(X)), IsPolice(X), IsYoung(Y), IsYoung(Z), NextTo(Y, Z).
Fast(X) :- Not(Stop(X)), Not(Slow(X)), IsReckless(Y), HigherPri(X, Y).
Fast(X) :- Not(Stop(X)), IsBus(X).
:- IsOld(X), Fast(X), RightOf(Y, X).
"""


@pytest.mark.parametrize("seed", [0, 1])
def test_decisions_equal_numpy_on_a_grounding(seed):
    onto = ontology("full")
    engine = CompiledEngine(parse_program(RULES, onto))
    g = ground(_agents(300, 10 + seed, size=60), city=blank_city(60, 60), seed=seed)
    on, off = _both(lambda: engine.decide(g))
    for name in ("ego_agents", "holds", "clause", "witness", "unsat", "violated", "violated_witness"):
        assert np.array_equal(getattr(on, name), getattr(off, name)), name
    assert on.holds[:, [Action.SLOW, Action.FAST, Action.STOP]].any(axis=0).all(), "every head must hold somewhere"
    assert (on.clause >= 0).sum() and (on.witness >= 0).any()


def test_decisions_equal_numpy_on_random_tables():
    """Random tables (not a grounding): views of up to 40 entities, every clause shape, a constraint that fires."""
    onto = ontology("full")
    engine = CompiledEngine(parse_program(RULES, onto))
    tables = random_tables(onto, np.random.default_rng(3), 400, 40, 0.3)
    on, off = _both(lambda: engine.decide(tables))
    for name in ("ego_agents", "holds", "clause", "witness", "unsat", "violated", "violated_witness"):
        assert np.array_equal(getattr(on, name), getattr(off, name)), name
    assert on.unsat.any() and (on.violated_witness >= 0).any()


def test_choose_moves_equal_numpy():
    rng = np.random.default_rng(8)
    n = 500
    is_car = rng.random(n) < 0.5
    arena = MoveArena(is_car, None)
    paths = []
    for _ in range(n):   # random walks with some repeated and jumping cells
        steps = rng.integers(-1, 2, (int(rng.integers(1, 12)), 2))
        steps[rng.random(len(steps)) < 0.2] *= 2
        p = (np.cumsum(steps, axis=0) + 50).astype(np.int32)
        paths.append(p)
    arena.sync(paths)
    agents = np.flatnonzero(rng.random(n) < 0.8)
    codes = rng.integers(0, 16, n).astype(np.intp)
    path_index = np.array([int(rng.integers(0, len(p))) for p in paths], np.int32)
    on, off = _both(lambda: arena.choose(agents, codes, path_index))
    for name in ("agents", "col", "row", "draw", "pool", "npool"):
        assert np.array_equal(getattr(on, name), getattr(off, name)), name
    assert len(on.draw) and (on.col != 12).any()


def test_kernels_can_be_switched_off(kernels_off):
    assert fast.kernels() is None
    assert fast.available()
