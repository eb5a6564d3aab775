"""Importing the reference simulator's .pkl episode caches without executing pickle code."""
from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest

from core.base.errors import LogiCityError
from core.export.logicity_pkl import cache_to_episode, convert_cache
from core.export.safe_pickle import UnsafePickleError, load_restricted
from core.sim.episode import load_episode
from tests.support.logicity_cache import make_cache


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("cache") / "run.pkl"
    buf, decided, realised = make_cache(path, steps=2, seed=4)
    return path, buf, realised


def test_generated_cache_converts_to_the_recorded_episode(cache, tmp_path):
    path, buf, realised = cache
    arrays, meta = cache_to_episode(path)
    assert np.array_equal(arrays["positions"], buf.array("positions"))
    assert np.array_equal(arrays["goals"], buf.array("goals"))
    assert np.array_equal(arrays["headings"], buf.array("headings"))
    assert np.array_equal(arrays["decided"], realised) and np.array_equal(arrays["realised"], realised)
    assert (arrays["fired"] == -1).all() and meta["start"] == "scene"
    assert meta["imported_from"]["map"] == "default.yaml" and meta["imported_from"]["ontology"] == "full.yaml"
    assert [a["name"] for a in meta["agents"]] == [f"{n.split('_')[0]}_{3 + i}" for i, n in enumerate(buf.agents.names)]
    out = convert_cache(path, tmp_path / "run.npz")
    ep = load_episode(out)
    assert ep.num_steps == 2 and ep.meta["clauses"]          # the reference rules, converted
    assert convert_cache(path, tmp_path / "again.npz").read_bytes() == out.read_bytes()


def test_studio_target_opens_a_pkl_run_read_only(cache):
    from core.studio.session import load_target

    path, buf, _ = cache
    project, episode = load_target(path)
    assert episode.num_steps == 2 and project.name == "run"
    assert np.array_equal(episode.array("positions"), buf.array("positions"))


def test_torch_save_cache_reads_the_same(tmp_path):
    import torch

    data = {"World": torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)[:, 1:, ::2], "n": [1, (2, "x")],
            "flags": torch.tensor([True, False]), "ids": torch.tensor([7, 8], dtype=torch.int64)}
    torch.save(data, tmp_path / "t.pt")
    with open(tmp_path / "p.pkl", "wb") as fh:
        pickle.dump(data, fh)
    for f in ("t.pt", "p.pkl"):
        got = load_restricted(tmp_path / f)
        np.testing.assert_array_equal(got["World"], data["World"].numpy())
        assert got["World"].dtype == np.float32 and got["ids"].dtype == np.int64 and got["flags"].dtype == bool
        assert got["n"] == [1, (2, "x")]


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


class _EvilStorage:
    """A tensor-looking entry whose storage bytes hide a second, malicious pickle."""

    def __init__(self, inner):
        self.inner = inner

    def __reduce__(self):
        import torch.storage

        return (torch.storage._load_from_bytes, (self.inner,))


@pytest.mark.parametrize("where", ["top", "nested", "storage-bytes"])
def test_malicious_pickle_is_refused_and_never_runs(tmp_path, where):
    marker = tmp_path / "pwned"
    evil = _Evil(marker)
    if where == "top":
        payload = evil
    elif where == "nested":
        payload = {"Time_Obs": {1: {"World": [evil]}}, "Static Info": {}}
    else:
        payload = {"Time_Obs": {1: {"World": _EvilStorage(pickle.dumps(evil))}}}
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(UnsafePickleError) as err:
        load_restricted(path)
    assert "evil.pkl" in str(err.value) and "posix.system" in str(err.value) and "nothing was executed" in str(err.value)
    with pytest.raises(LogiCityError, match="posix.system"):
        from core.studio.session import load_target

        load_target(path)
    assert not marker.exists()


def test_damaged_or_foreign_pickles_give_located_errors(tmp_path):
    bad = tmp_path / "cut.pkl"
    bad.write_bytes(pickle.dumps({"a": list(range(100))})[:-20])
    with pytest.raises(UnsafePickleError, match="cut.pkl.*not a readable pickle"):
        load_restricted(bad)
    other = tmp_path / "other.pkl"
    other.write_bytes(pickle.dumps({"something": 1}))
    with pytest.raises(LogiCityError, match="other.pkl.*Time_Obs"):
        cache_to_episode(other)
    buf = io.BytesIO()
    pickle.dump(np.arange(3), buf)   # numpy reconstruction is not a tensor: refused too
    (tmp_path / "np.pkl").write_bytes(buf.getvalue())
    with pytest.raises(UnsafePickleError, match="numpy"):
        load_restricted(tmp_path / "np.pkl")


def test_damaged_bytes_never_escape_as_other_errors(tmp_path):
    """Random byte damage to a tensor pickle (both formats) gives a located error or plain data — never another
    exception, never code."""
    import torch

    data = {"World": torch.arange(30, dtype=torch.float32).reshape(2, 3, 5), "a": [torch.ones(3, dtype=torch.int64)]}
    plain = pickle.dumps(data)
    buf = io.BytesIO()
    torch.save(data, buf)
    rng = np.random.default_rng(0)
    target = tmp_path / "x.pkl"
    for blob in (plain, buf.getvalue()):
        for _ in range(100):
            b = bytearray(blob)
            for i in rng.integers(0, len(b), size=int(rng.integers(1, 6))):
                b[int(i)] = int(rng.integers(0, 256))
            target.write_bytes(bytes(b))
            try:
                load_restricted(target)
            except LogiCityError as exc:
                assert "x.pkl" in str(exc)


def test_runs_exporter_converts_a_folder_and_stops_at_a_malicious_one(cache, tmp_path):
    import shutil

    from core.export.runner import run_export

    path, buf, _ = cache
    src = tmp_path / "runs"
    src.mkdir()
    shutil.copy(path, src / "a.pkl")
    shutil.copy(path, src / "b.pkl")
    report = run_export("runs", {"source": str(src)}, tmp_path / "out", backend="inline")
    assert report.manifest["counts"]["episodes"] == 2
    ep = load_episode(tmp_path / "out" / "episodes" / "b.npz")
    assert np.array_equal(ep.array("positions"), buf.array("positions"))
    (src / "c.pkl").write_bytes(pickle.dumps(_Evil(tmp_path / "pwned")))
    with pytest.raises(LogiCityError, match="c.pkl.*posix.system"):
        run_export("runs", {"source": str(src)}, tmp_path / "out2", backend="inline", retries=0)
    assert not (tmp_path / "pwned").exists() and (tmp_path / "out2" / "episodes" / "a.npz").exists()
