"""The live episode buffer grows without a whole-history copy in any one append (a copy of every recorded step
would stall the step that triggers it in a long, many-agent run) and stays exact across growth and truncation."""
import numpy as np

from core.base.world import AgentTable
from core.sim.episode import PLAN_FIELDS, STATE_FIELDS, STEP_FIELDS, EpisodeBuffer
from core.sim.growing_rows import GrowingRows


def test_rows_never_copy_the_history_in_one_append():
    """However long the history, one append copies at most four old rows per row appended: the copying of a
    growth is spread over the appends before it (the former doubling copied every row in one append)."""
    rows = GrowingRows((3,), np.int32, cap=8)
    rng = np.random.default_rng(0)
    model: list[list[int]] = []
    switches = 0
    for _ in range(4000):
        extra = int(rng.integers(1, 4))
        old, pending = rows.data, rows.n - (rows._moved if rows._next is not None else 0)
        moved_before = rows._moved if rows._next is not None else 0
        data = rows.reserve(extra)
        if data is not old:  # switched to the bigger array: only the rows not yet moved were copied now
            switches += 1
            assert pending <= 4 * extra, (rows.n, pending)
            assert np.array_equal(data[: rows.n], np.asarray(model, np.int32).reshape(-1, 3))
        elif rows._next is not None:
            assert rows._moved - moved_before <= 4 * extra
        new = rng.integers(0, 1000, (extra, 3))
        data[rows.n: rows.n + extra] = new
        rows.n += extra
        model.extend(new.tolist())
        if rng.random() < 0.005:  # branching: cut back and continue
            cut = int(rng.integers(0, rows.n + 1))
            rows.truncate(cut)
            del model[cut:]
        assert rows.used().tolist() == model
    assert switches >= 6 and len(rows.data) >= 1024


def make_agents(n):
    return AgentTable.build([f"Car_{i}" for i in range(n)], [1] * n, list(range(1, n + 1)), [["bus"]] * n)


def test_buffer_equals_a_plain_model_across_growth_and_truncation():
    n = 4
    agents = make_agents(n)
    buf = EpisodeBuffer(agents, {"mode": "test"}, witness_vars=2)
    rng = np.random.default_rng(3)
    states: list[tuple] = []
    steps: list[tuple] = []
    plans: list[tuple[int, np.ndarray, int]] = []

    def add_plan():
        agent, cells = int(rng.integers(n)), rng.integers(0, 200, (int(rng.integers(1, 400)), 2))
        assert buf.add_plan(agent, cells) == len(plans)
        plans.append((agent, cells, len(states)))

    def add_state():
        s = (rng.integers(0, 200, (n, 2)), rng.integers(-1, 4, n), rng.integers(0, 200, (n, 2)),
             rng.integers(0, 9, n), rng.integers(0, max(1, len(plans)), n))
        buf.append_state(*s, agents)
        states.append(s)

    for _ in range(n):
        add_plan()
    add_state()
    for k in range(700):
        if rng.random() < 0.3:
            add_plan()
        s = (rng.random((n, 4)) > 0.5, rng.integers(0, 4, n), rng.integers(0, 4, n), rng.integers(-2, 5, n),
             rng.integers(-1, n, (n, 2)), rng.random(n) > 0.8)
        buf.append_step(*s)
        steps.append(s)
        add_state()
        if k % 150 == 149:  # branch from a past state
            cut = int(rng.integers(0, len(steps) + 1))
            buf.truncate(cut)
            del steps[cut:], states[cut + 1:]
            plans[:] = [p for p in plans if p[2] <= cut]
    assert buf.num_steps == len(steps) and buf.num_states == len(states)
    for j, f in enumerate(STATE_FIELDS[:5]):
        assert np.array_equal(buf.array(f), np.stack([s[j] for s in states])), f
    for j, f in enumerate(STEP_FIELDS):
        assert np.array_equal(buf.array(f), np.stack([s[j] for s in steps])), f
    got = {f: buf.array(f) for f in PLAN_FIELDS}
    assert got["plan_agent"].tolist() == [p[0] for p in plans]
    assert got["plan_step"].tolist() == [p[2] for p in plans]
    assert got["plan_offsets"].tolist() == np.cumsum([0] + [len(p[1]) for p in plans]).tolist()
    assert np.array_equal(got["plan_cells"], np.concatenate([p[1] for p in plans]))
    assert got["plan_cells"].dtype == np.int16 and got["plan_offsets"].dtype == np.int64
