"""Episode buffer and file format: round trip, O(1) memory-mapped access, truncation, bad files."""
import zipfile

import numpy as np
import pytest

from core.base.errors import EpisodeFileError
from core.base.world import AgentTable
from core.sim.episode import EpisodeBuffer, load_episode, write_episode_file


def make_buffer(steps=5, n=3):
    agents = AgentTable.build([f"Car_{i}" for i in range(n)], [1] * n, list(range(1, n + 1)),
                              [["ambulance"], [], ["bus"]][:n])
    buf = EpisodeBuffer(agents, {"mode": "test"}, witness_vars=2)
    rng = np.random.default_rng(1)
    for i in range(n):
        buf.add_plan(i, rng.integers(0, 50, size=(7 + i, 2)))
    for k in range(steps):
        buf.append_state(rng.integers(0, 50, (n, 2)), rng.integers(-1, 4, n), rng.integers(0, 50, (n, 2)),
                         np.full(n, k), np.arange(n), agents)
        if k == 2:
            buf.add_plan(1, rng.integers(0, 50, size=(4, 2)))
        buf.append_step(rng.random((n, 4)) > 0.5, rng.integers(0, 4, n), rng.integers(0, 4, n),
                        rng.integers(-1, 5, n), rng.integers(-1, 3, (n, 2)), rng.random(n) > 0.8)
    buf.append_state(rng.integers(0, 50, (n, 2)), rng.integers(-1, 4, n), rng.integers(0, 50, (n, 2)),
                     np.full(n, 3), np.array([0, 3, 2]), agents)  # plan 3 has 4 cells
    return buf


def test_round_trip(tmp_path):
    buf = make_buffer()
    path = buf.save(tmp_path / "ep.npz")
    ep = load_episode(path)
    assert ep.num_steps == buf.num_steps == 5
    for k in range(ep.num_states):
        a, b = ep.snapshot(k), buf.snapshot(k)
        assert np.array_equal(a.positions, b.positions) and np.array_equal(a.headings, b.headings)
        assert np.array_equal(ep.goals(k), buf.goals(k))
    for k in range(ep.num_steps):
        ra, rb = ep.step_record(k), buf.step_record(k)
        for f in ("holds", "decided", "realised", "fired", "witness", "reached"):
            assert np.array_equal(getattr(ra, f), getattr(rb, f)), f
    cells, idx = ep.plan(5, 1)
    assert len(cells) == 4 and idx == 3
    assert ep.agents.names == buf.agents.names
    assert ep.agents_at(0).concepts["ambulance"][0]
    # numpy can read the arrays too (documented interoperability)
    with np.load(path) as z:
        assert np.array_equal(z["positions"], buf.array("positions"))


def test_agents_at_is_the_base_table_unless_the_state_changed_it():
    buf = make_buffer()
    assert buf.agents_at(2) is buf.agents and buf.agents_at(4) is buf.agents
    base = buf.agents
    concepts = {c: np.array(v) for c, v in base.concepts.items()}
    concepts["bus"][1] = True                                   # an edited concept from state 3 on
    buf.set_state_agents(3, AgentTable(base.names, np.array(base.kinds), np.array(base.priorities), concepts))
    edited = buf.agents_at(3)
    assert edited is not base and edited.concepts["bus"][1] and not base.concepts["bus"][1]
    assert buf.agents_at(2) is base                             # the states before keep the base table
    buf.set_state_agents(4, AgentTable(base.names, np.array(base.kinds), np.array(base.priorities)[::-1].copy(),
                                       dict(base.concepts)))
    assert list(buf.agents_at(4).priorities) == list(base.priorities)[::-1]   # priorities alone differ


def test_arrays_are_memory_mapped(tmp_path):
    ep = load_episode(make_buffer().save(tmp_path / "ep.npz"))
    assert isinstance(ep.array("positions"), np.memmap)


def test_truncate_branches(tmp_path):
    buf = make_buffer()
    buf.truncate(2)
    assert buf.num_steps == 2 and buf.num_states == 3
    ep = load_episode(buf.save(tmp_path / "b.npz"))
    assert ep.num_steps == 2
    assert len(ep.array("plan_agent")) == 3  # the plan added at step 3 was dropped


def test_atomic_save_keeps_old_file_on_failure(tmp_path, monkeypatch):
    path = make_buffer().save(tmp_path / "ep.npz")
    before = path.read_bytes()

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(np.lib.format, "write_array", boom)
    with pytest.raises(RuntimeError):
        make_buffer().save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ep.npz"]


@pytest.mark.parametrize("kind", ["garbage", "nometa", "badjson", "compressed", "missing", "shape", "object",
                                  "heading", "action", "witness", "pathindex", "dtype"])
def test_bad_files_give_clear_errors(tmp_path, kind):
    path = tmp_path / f"{kind}.npz"
    good = make_buffer()
    if kind == "garbage":
        path.write_bytes(b"not a zip at all")
    elif kind == "nometa":
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("x.npy", b"")
    elif kind == "badjson":
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("meta.json", "{nope")
    elif kind == "compressed":
        good.save(path)
        with zipfile.ZipFile(path) as zin:
            items = [(i.filename, zin.read(i.filename)) for i in zin.infolist()]
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zout:
            for name, data in items:
                zout.writestr(name, data)
    elif kind in ("missing", "shape", "object"):
        arrays = {n: good.array(n) for n in ("positions", "headings", "goals", "path_index", "plan_id",
                                              "priorities", "concepts", "holds", "decided", "realised",
                                              "fired", "witness", "reached")}
        arrays.update(good._plans())
        meta = {"agents": [{"name": "a", "kind": 1}] * 3, "base_priorities": [1, 2, 3],
                "base_concepts": [[], [], []], "concepts": list(good.meta["concepts"])}
        if kind == "missing":
            del arrays["holds"]
        elif kind == "shape":
            arrays["decided"] = arrays["decided"][:2]
        elif kind == "heading":
            arrays["headings"] = np.full_like(arrays["headings"], 77)
        elif kind == "action":
            arrays["decided"] = np.full_like(arrays["decided"], 9)
        elif kind == "witness":
            arrays["witness"] = np.full_like(arrays["witness"], 3)
        elif kind == "pathindex":
            arrays["path_index"] = np.full_like(arrays["path_index"], 50)
        elif kind == "dtype":
            arrays["holds"] = arrays["holds"].astype(np.int8)
        write_episode_file(path, arrays, meta)
        if kind == "object":
            with zipfile.ZipFile(path, "a") as zf:
                with zf.open("evil.npy", "w") as m:
                    np.lib.format.write_array(m, np.array([object()], dtype=object), allow_pickle=True)
    with pytest.raises(EpisodeFileError) as err:
        load_episode(path)
    assert str(path) in str(err.value)
