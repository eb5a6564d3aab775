"""The vectorised move choice (core.sim.move_arena) equals movement.move_choice agent by agent: the same moves,
the same agents drawing from the generator with the same number of choices (so the same draws in the same
order), on random paths, rule decisions and path positions; and the arena follows replaced paths."""
import numpy as np
import pytest

from core.base.codes import Kind
from core.sim.move_arena import HEADING_OF, REALISED_OF, STOP_COL, MoveArena
from core.sim.movement import CAR_STOP, LOCAL_TABLE, MOVE_DECODE, PED_STOP, move_choice


def random_path(rng, length):
    steps = np.array([(0, 1), (0, -1), (1, 0), (-1, 0), (0, 0), (0, 2), (1, 1), (0, 3)])
    moves = steps[rng.choice(len(steps), size=length - 1, p=[.3, .1, .3, .1, .05, .05, .05, .05])]
    return np.cumsum(np.vstack([[20, 20], moves]), axis=0).astype(np.int32)


@pytest.mark.parametrize("seed", range(6))
def test_choose_equals_move_choice_per_agent(seed):
    rng = np.random.default_rng(seed)
    n = 300
    is_car = rng.random(n) < 0.55
    mask = rng.random((80, 80)) < 0.05
    arena = MoveArena(is_car, mask, capacity=64)  # small: forces packing and growth
    paths = [random_path(rng, int(rng.integers(1, 40))) for _ in range(n)]
    arena.sync(paths)
    drawn = 0
    for _ in range(4):  # replace some paths between rounds: the arena must follow
        for i in rng.choice(n, size=40, replace=False):
            paths[i] = random_path(rng, int(rng.integers(1, 40)))
        arena.sync(paths)
        codes = rng.integers(0, 16, n)
        pidx = np.array([rng.integers(len(p)) for p in paths], np.int32)
        agents = np.flatnonzero(rng.random(n) < 0.9)
        ch = arena.choose(agents, codes, pidx)
        draw_rng_a = np.random.default_rng(seed + 100)
        draw_rng_b = np.random.default_rng(seed + 100)
        where = dict(zip(ch.agents[ch.draw].tolist(), ch.draw.tolist()))
        drawn += len(where)
        for r, i in enumerate(agents.tolist()):
            car = bool(is_car[i])
            kind = Kind.CAR if car else Kind.PEDESTRIAN
            glob = arena.global_moves(i, int(pidx[i]))
            want = move_choice(car, LOCAL_TABLE[kind][int(codes[i])], glob, draw_rng_a)
            want_col = STOP_COL if want == (CAR_STOP if car else PED_STOP) else want
            col = int(ch.col[r])
            if i in where:
                col = int(np.flatnonzero(ch.pool[r])[int(draw_rng_b.integers(int(ch.npool[r])))])
            assert col == want_col, (i, codes[i], glob)
            if col != STOP_COL:
                j = int(ch.row[r, col])
                assert j == glob[want]
                assert arena.cells[arena.start[i] + j].tolist() == paths[i][j].tolist()
                assert (HEADING_OF[int(car), col], REALISED_OF[int(car), col]) == MOVE_DECODE[car][want]
        assert draw_rng_a.integers(1 << 30) == draw_rng_b.integers(1 << 30)  # same number of draws
    assert drawn > 0


def test_global_moves_match_the_path_table():
    from core.sim.movement import global_moves

    rng = np.random.default_rng(1)
    is_car = np.array([True, False, True])
    mask = rng.random((80, 80)) < 0.1
    arena = MoveArena(is_car, mask)
    paths = [random_path(rng, 30) for _ in range(3)]
    arena.sync(paths)
    for i, p in enumerate(paths):
        kind = Kind.CAR if is_car[i] else Kind.PEDESTRIAN
        for k in range(len(p)):
            assert arena.global_moves(i, k) == global_moves(kind, p[k], p, k, mask)
