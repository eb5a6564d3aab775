"""The simulator's fast paths give exactly the reference-style results: whole-path move tables vs the per-step
global-move rule, and the move cache across checkpoint restores."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.base.codes import Action, Kind
from core.sim.checkpoint import capture, restore
from core.sim.config import load_mode
from core.sim.movement import global_moves, path_move_table
from core.sim.simulation import Simulation
from tests.support.paths import MODES


@st.composite
def paths(draw):
    n = draw(st.integers(1, 14))
    r, c = draw(st.integers(5, 15)), draw(st.integers(5, 15))
    cells = [(r, c)]
    for _ in range(n - 1):
        dr, dc = draw(st.sampled_from([(0, 1), (0, -1), (1, 0), (-1, 0), (0, 0), (0, 2), (1, 1), (0, 3)]))
        r, c = r + dr, c + dc
        cells.append((r, c))
    mask = np.zeros((30, 30), bool)
    for cell in draw(st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=30)):
        mask[cell] = True
    return np.array(cells, np.int32), mask


@settings(max_examples=300, deadline=None)
@given(paths(), st.booleans(), st.booleans())
def test_path_move_table_equals_global_moves(pm, car, use_mask):
    traj, mask = pm
    kind = Kind.CAR if car else Kind.PEDESTRIAN
    lane = mask if use_mask else None
    table = path_move_table(car, traj, lane)
    assert table.shape == (len(traj), 12 if car else 4)
    for i in range(len(traj)):
        want = global_moves(kind, traj[i], traj, i, lane)
        got = {m: int(j) for m, j in enumerate(table[i]) if j >= 0}
        assert got == want, (i, traj.tolist())


def test_restore_after_new_trips_replays_exactly():
    cfg = load_mode(MODES / "sim_expert.yaml")
    sim = Simulation(cfg, seed=9, record=False)
    sim.run(30)
    cp = capture(sim)
    sim.run(120)  # new trips replace paths; the move cache must follow restore
    after = sim.positions.copy()
    restore(sim, cp)
    sim.run(120)
    assert np.array_equal(sim.positions, after)


def test_reset_agent_and_restart():
    cfg = load_mode(MODES / "sim_expert.yaml")
    sim = Simulation(cfg, seed=1, record=True)
    sim.run(5)
    sim.reset_agent(0)
    assert sim.path_index[0] == 0 and np.array_equal(sim.positions[0], sim.paths[0][0])
    sim.step({0: Action.STOP})
    a = Simulation(cfg, seed=4, record=False)
    b = Simulation(cfg, seed=0, record=False)
    b.run(10)
    b.restart(rng=np.random.default_rng(4))
    assert np.array_equal(a.positions, b.positions) and np.array_equal(a.goals, b.goals)
    a.run(40)
    b.run(40)
    assert np.array_equal(a.positions, b.positions)
