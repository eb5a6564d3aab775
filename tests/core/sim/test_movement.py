"""The reference's move rule (docs/reference.md#choosing-the-move) on hand-made paths."""
import numpy as np
import pytest

from core.base.codes import Action, Kind
from core.sim.movement import choose_move, decided_action, global_moves, local_moves


def holds(*acts):
    h = np.zeros(4, bool)
    for a in acts:
        h[int(a)] = True
    return h


def straight(n=12, row=5):
    return np.array([[row, c] for c in range(n)], np.int32)


def rng():
    return np.random.default_rng(0)


def test_car_moves_per_speed_on_straight_path():
    traj = straight()
    pos = traj[0]
    for act, cells in ((Action.SLOW, 1), (Action.NORMAL, 2), (Action.FAST, 3)):
        m = choose_move(Kind.CAR, holds(act), pos, traj, 0, None, rng())
        assert (m.cells, m.heading, m.realised) == (cells, 1, act)
        assert m.path_index == cells


def test_default_normal_when_nothing_holds():
    traj = straight()
    m = choose_move(Kind.CAR, holds(), traj[0], traj, 0, None, rng())
    assert m.cells == 2 and m.realised == Action.NORMAL
    assert decided_action(Kind.CAR, holds()) == Action.NORMAL


def test_stop_wins():
    traj = straight()
    m = choose_move(Kind.CAR, holds(Action.STOP), traj[0], traj, 0, None, rng())
    assert m.is_stop and m.realised == Action.STOP and m.path_index == 0


def test_car_cannot_jump_lane_nodes():
    traj = straight()
    mask = np.zeros((10, 12), bool)
    mask[5, 2] = True  # a lane node two cells ahead: only 1 or 2 cells allowed (landing on it is fine)
    g = global_moves(Kind.CAR, traj[0], traj, 0, mask)
    assert sorted(g) == [1, 5]  # speed 1 and speed 2 to the Right
    m = choose_move(Kind.CAR, holds(Action.FAST), traj[0], traj, 0, mask, rng())
    # Fast is not possible; reference falls back to the global set and draws among Slow/Normal
    assert m.cells in (1, 2)


def test_turn_limits_to_single_cell():
    traj = np.array([[5, 0], [5, 1], [6, 1], [7, 1], [8, 1]], np.int32)
    m = choose_move(Kind.CAR, holds(Action.FAST), traj[0], traj, 0, None, rng())
    assert m.cells == 1 and m.heading == 1  # only one global move: taken regardless of Fast
    m2 = choose_move(Kind.CAR, holds(Action.FAST), traj[1], traj, 1, None, rng())
    assert m2.cells == 3 and m2.heading == 3


def test_slow_and_fast_draw_both():
    traj = straight(20)
    seen = {choose_move(Kind.CAR, holds(Action.SLOW, Action.FAST), traj[0], traj, 0, None,
                        np.random.default_rng(s)).cells for s in range(40)}
    assert seen == {1, 3}


def test_pedestrian_moves_one_cell_and_ignores_slow_fast():
    traj = np.array([[3, 3], [2, 3], [1, 3]], np.int32)
    for h in (holds(), holds(Action.SLOW), holds(Action.FAST), holds(Action.NORMAL)):
        m = choose_move(Kind.PEDESTRIAN, h, traj[0], traj, 0, None, rng())
        assert (m.cells, m.heading, m.realised) == (1, 2, Action.NORMAL)
    assert decided_action(Kind.PEDESTRIAN, holds(Action.SLOW)) == Action.NORMAL
    assert choose_move(Kind.PEDESTRIAN, holds(Action.STOP), traj[0], traj, 0, None, rng()).is_stop


def test_duplicate_cell_means_stop():
    traj = np.array([[3, 3], [3, 3], [3, 4]], np.int32)
    assert choose_move(Kind.PEDESTRIAN, holds(), traj[0], traj, 0, None, rng()).is_stop


@pytest.mark.parametrize("act,base", [(Action.SLOW, 0), (Action.NORMAL, 4), (Action.FAST, 8)])
def test_local_vector_layout(act, base):
    assert local_moves(Kind.CAR, holds(act)) == list(range(base, base + 4))
    assert local_moves(Kind.CAR, holds(Action.STOP)) == [12]
