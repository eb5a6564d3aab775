"""Crafted episode files: negative or huge .npy shape headers, 0-d arrays, nested, huge or
undecodable meta.json, wrong agent counts and unsupported ZIP features each give an EpisodeFileError naming the
file and the problem — never a RecursionError/ValueError/TypeError/OverflowError, never a mapping or allocation
larger than the file. Also a small fixed-seed mutation test of the loader, and `main.py render` on such a file."""
from __future__ import annotations

import ast
import io
import json
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.errors import EpisodeFileError
from core.cli import run_cli
from core.io import npzfile
from core.io.archive import read_archive, write_archive
from core.sim.config import load_mode
from core.sim.episode import load_episode
from core.sim.simulation import Simulation
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def members(tmp_path_factory) -> dict[str, bytes]:
    """The raw members of a short recorded episode."""
    sim = Simulation(load_mode(ROOT / "configs" / "modes" / "sim_easy.yaml"), seed=2)
    sim.run(4)
    path = sim.buffer.save(tmp_path_factory.mktemp("ep") / "ep.npz")
    with zipfile.ZipFile(path) as zf:
        return {i.filename: zf.read(i.filename) for i in zf.infolist()}


def build(members: dict[str, bytes], compress: dict[str, int] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data, compress_type=(compress or {}).get(name, zipfile.ZIP_STORED))
    return out.getvalue()


def npy(arr: np.ndarray) -> bytes:
    b = io.BytesIO()
    np.save(b, arr, allow_pickle=False)
    return b.getvalue()


def with_header(data: bytes, shape: tuple | None = None, descr: str | None = None) -> bytes:
    """A .npy member whose header has another ``shape`` and/or ``descr`` (Python literal text), data unchanged."""
    hlen = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + hlen].decode("latin1"))
    parts = {"descr": descr if descr is not None else repr(header["descr"]),
             "fortran_order": repr(header["fortran_order"]),
             "shape": repr(tuple(shape) if shape is not None else header["shape"])}
    text = "{" + ", ".join(f"'{k}': {v}" for k, v in parts.items()) + "}"
    text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    return data[:6] + b"\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1") + data[10 + hlen:]


def load_bytes(tmp_path: Path, data: bytes, name: str = "crafted.npz") -> EpisodeFileError:
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(EpisodeFileError) as err:
        load_episode(p)
    assert err.value.file == str(p)
    return err.value


def test_the_unmodified_episode_loads(tmp_path, members):
    p = tmp_path / "ok.npz"
    p.write_bytes(build(members))
    ep = load_episode(p)
    assert ep.num_states == 5 and len(ep.agents) > 0


@pytest.mark.parametrize("shape, words", [
    ((-1, 3, 2), "negative dimension"),
    ((5, -7, 2), "negative dimension"),
    ((2**40, 3, 2), "larger than the file"),
    ((2**63, 2**63, 2), "impossible shape"),
    ((0, 2**62, 2**62), "impossible shape"),
    ((10**30, 1, 2), "impossible shape"),
])
def test_shape_headers_are_bounded(tmp_path, members, shape, words):
    m = dict(members)
    m["positions.npy"] = with_header(m["positions.npy"], shape=shape)
    err = load_bytes(tmp_path, build(m))
    assert "positions.npy" in str(err) and words in str(err)


@pytest.mark.parametrize("field", ["positions", "headings", "plan_offsets", "holds", "witness"])
def test_zero_dimensional_arrays_are_refused(tmp_path, members, field):
    m = dict(members)
    m[field + ".npy"] = npy(np.array(3, dtype=np.int32 if field != "holds" else bool))
    err = load_bytes(tmp_path, build(m))
    assert f"array {field} has shape ()" in str(err)


@pytest.mark.parametrize("descr, words", [
    ("[('a', '<i4')]", "only plain numbers"),
    ("('<i2', (2,))", "only plain numbers"),
    ("'<U3'", "only plain numbers"),
    ("'<c16'", "only plain numbers"),
    ("'<M8[s]'", "only plain numbers"),
    ("'|O'", "only plain numbers"),
    ("'<f2'", "must hold integers"),
])
def test_dtype_headers_must_be_plain(tmp_path, members, descr, words):
    m = dict(members)
    m["positions.npy"] = with_header(m["positions.npy"], descr=descr)
    err = load_bytes(tmp_path, build(m))
    assert words in str(err)


def test_unsupported_npy_version(tmp_path, members):
    m = dict(members)
    m["headings.npy"] = m["headings.npy"][:6] + b"\x07\x00" + m["headings.npy"][8:]
    assert "unsupported format version 7.0" in str(load_bytes(tmp_path, build(m)))


@pytest.mark.parametrize("depth", [40, 2000, 200_000])
def test_deeply_nested_meta(tmp_path, members, depth):
    m = dict(members)
    meta = json.loads(m["meta.json"])
    m["meta.json"] = (json.dumps(meta)[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}").encode()
    assert "nested" in str(load_bytes(tmp_path, build(m)))


def test_huge_meta_is_refused_before_reading(tmp_path, members, monkeypatch):
    monkeypatch.setattr(npzfile, "MAX_META_BYTES", 1000)
    err = load_bytes(tmp_path, build(members))
    assert "meta.json is" in str(err) and "limit is 1000 bytes" in str(err)


@pytest.mark.parametrize("text, words", [
    (b'{"format": "logicity-episode", "seed": ' + b"9" * 5000 + b"}", "cannot be decoded"),
    (b'{"format": "logicity-episode", "x": "\xff\xfe"}', "not UTF-8"),
    (b'{"format": "logicity-episode", "version": ' + b"9" * 400 + b"}", "newer than this program"),
])
def test_undecodable_meta(tmp_path, members, text, words):
    m = dict(members)
    m["meta.json"] = text
    assert words in str(load_bytes(tmp_path, build(m)))


@pytest.mark.parametrize("cut", [0, 1, -1])
def test_wrong_agent_counts(tmp_path, members, cut):
    m = dict(members)
    meta = json.loads(m["meta.json"])
    agents = meta["agents"]
    meta["agents"] = agents[:cut] if cut > 0 else agents[:len(agents) + cut] if cut else []
    m["meta.json"] = json.dumps(meta).encode()
    assert "field 'agents' has" in str(load_bytes(tmp_path, build(m)))


def test_witness_agent_axis_must_match(tmp_path, members):
    m = dict(members)
    w = np.load(io.BytesIO(m["witness.npy"]))
    m["witness.npy"] = npy(w[:, :-1])
    assert "array witness has shape" in str(load_bytes(tmp_path, build(m)))


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_compressed_array_members(tmp_path, members, method):
    err = load_bytes(tmp_path, build(members, {"positions.npy": method}))
    assert "positions.npy" in str(err) and ("compress" in str(err) or "method" in str(err))


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_meta_with_unsupported_compression(tmp_path, members, method):
    err = load_bytes(tmp_path, build(members, {"meta.json": method}))
    assert "meta.json" in str(err) and "method" in str(err)


def test_encrypted_member_flag(tmp_path, members):
    data = bytearray(build(members))
    i = data.find(b"PK\x01\x02")  # set the "encrypted" flag on every central directory entry
    while i >= 0:
        data[i + 8] |= 1
        i = data.find(b"PK\x01\x02", i + 4)
    assert "encrypted" in str(load_bytes(tmp_path, bytes(data)))


def test_member_offset_outside_the_file(tmp_path, members):
    data = bytearray(build(members))
    i = data.find(b"PK\x01\x02")
    data[i + 42:i + 46] = (len(data) * 4).to_bytes(4, "little")  # local header offset far past the end
    load_bytes(tmp_path, bytes(data))


def test_unsupported_zip_version(tmp_path, members):
    data = bytearray(build(members))
    i = data.find(b"PK\x01\x02")
    data[i + 6:i + 8] = (160).to_bytes(2, "little")  # "needs ZIP version 16.0"
    load_bytes(tmp_path, bytes(data))


def test_episode_sets_read_the_same_way(tmp_path):
    p = write_archive(tmp_path / "set.npz", {"a": np.arange(6, dtype=np.int32).reshape(2, 3)}, {"x": 1},
                      "demo-set", 1)
    arrays, meta = read_archive(p, "demo-set", 1)
    assert arrays["a"].tolist() == [[0, 1, 2], [3, 4, 5]] and meta["x"] == 1
    with zipfile.ZipFile(p) as zf:
        m = {i.filename: zf.read(i.filename) for i in zf.infolist()}
    m["a.npy"] = with_header(m["a.npy"], shape=(2**40, 3))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(build(m, {"a.npy": zipfile.ZIP_DEFLATED}))
    with pytest.raises(EpisodeFileError, match="a.npy"):
        read_archive(bad, "demo-set", 1)


def test_render_reports_a_crafted_file_without_traceback(tmp_path, members, capsys):
    m = dict(members)
    m["positions.npy"] = with_header(m["positions.npy"], shape=(-3, 2, 2))
    p = tmp_path / "bad.npz"
    p.write_bytes(build(m))
    assert run_cli(["render", "--episode", str(p), "--out", str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {p}: ") and "negative dimension" in err and "Traceback" not in err


# ---- mutation test: random damage to a real episode never escapes as anything but EpisodeFileError -----------

def _mutate(members: dict[str, bytes], seed: int) -> bytes:
    rng = random.Random(seed)
    m = dict(members)
    names = [k for k in m if k.endswith(".npy")]
    op = rng.randrange(5)
    if op == 0:
        k = rng.choice(names)
        shape = tuple(rng.choice([-1, 0, 1, 2, 3, 7, 2**31, 2**63, 10**20]) for _ in range(rng.randrange(4)))
        m[k] = with_header(m[k], shape=shape)
    elif op == 1:
        k = rng.choice(names)
        arr = np.random.default_rng(seed).integers(-3, 40, size=tuple(rng.randrange(4) for _ in range(rng.randrange(4))))
        m[k] = npy(arr.astype(rng.choice(["i1", "i2", "i4", "u8", "?", "f4"])))
    elif op == 2:
        a, b = rng.sample(names, 2)
        m[a], m[b] = m[b], m[a]
    data = bytearray(build(m))
    if op == 3:
        for _ in range(rng.randrange(1, 10)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    if op == 4:
        del data[rng.randrange(len(data)):]
    return bytes(data)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_episodes_only_raise_episode_file_errors(tmp_path, members, seed):
    p = tmp_path / "m.npz"
    p.write_bytes(_mutate(members, seed))
    try:
        ep = load_episode(p)
    except EpisodeFileError as exc:
        assert exc.file == str(p)
        return
    for k in (0, ep.num_states - 1):  # a file that loads must also be readable
        ep.snapshot(k)
        for a in range(len(ep.agents)):
            ep.remaining_path(k, a)
    if ep.num_steps:
        ep.step_record(0)


def test_truncated_npy_header_text(tmp_path, members):
    """Header text cut inside the dict: numpy's parser raised tokenize.TokenError (found by the fuzz suite)."""
    m = dict(members)
    data = m["path_index.npy"]
    text = b"{'descr': '<i4', 'fortran_order"
    m["path_index.npy"] = data[:8] + len(text).to_bytes(2, "little") + text
    assert "path_index.npy is not a plain .npy array" in str(load_bytes(tmp_path, build(m)))


def test_a_project_with_a_crafted_episode_names_the_file(tmp_path, saved_project):
    """The studio opens project episodes through core.project.load.open_episode: its error dialog shows the file and
    problem of an EpisodeFileError (it showed "(internal error)" for the numpy/zip exceptions)."""
    import shutil

    from core.project.load import describe_error, load_project, open_episode

    root = tmp_path / "proj"
    shutil.copytree(saved_project, root)
    project = load_project(root)
    path = project.episode_path(project.current_episode)
    with zipfile.ZipFile(path) as zf:
        m = {i.filename: zf.read(i.filename) for i in zf.infolist()}
    m["headings.npy"] = npy(np.array(1, dtype=np.int8))
    Path(path).write_bytes(build(m))
    with pytest.raises(EpisodeFileError) as err:
        open_episode(project)
    file, problem = describe_error(err.value)
    assert file == str(path) and "array headings has shape ()" in problem
