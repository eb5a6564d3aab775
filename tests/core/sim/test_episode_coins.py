"""Episodes record each step's CollidingClose coins as the engine saw them (format version 2), files of version 1
(no coins; tests/data/episodes/format1_*.npz was written by the program before coins were recorded) still open,
and a damaged coin record is a clear error."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from core.base.errors import EpisodeFileError
from core.sim.episode import FORMAT_VERSION, load_episode
from core.sim.frames import FrameTap, apply_frame, copy_episode
from core.sim.simulation import Simulation
from tests.support.paths import ROOT
from tests.support.studio import assert_same_episode, default_config, record_groundings

FORMAT1 = ROOT / "tests" / "data" / "episodes" / "format1_default_seed0_40.npz"


@pytest.fixture(scope="module")
def recording():
    sim, groundings = record_groundings(default_config(), seed=0, steps=120)
    return SimpleNamespace(sim=sim, groundings=groundings)


def coin_steps(view):
    return [k for k in range(view.num_steps) if any(len(v) for _, v in view.coins(k).values())]


def test_every_step_records_the_coins_the_engine_grounded_with(recording):
    buf = recording.sim.buffer
    assert buf.coins_from_step == 0 and buf.meta["coin_predicates"] == ["CollidingClose"]
    for k, g in enumerate(recording.groundings):
        got = buf.coins(k)
        for name, (pairs, outcomes) in g.coin_outcomes().items():
            assert np.array_equal(got[name][0], pairs) and np.array_equal(got[name][1], outcomes), k
    assert len(coin_steps(buf)) >= 10, "the run must draw coins for the test to mean something"


def test_coins_survive_saving_loading_copying_and_truncating(recording, tmp_path):
    buf = recording.sim.buffer
    ep = load_episode(buf.save(tmp_path / "e.npz"))
    assert ep.version == FORMAT_VERSION == 2 and ep.coins_from_step == 0
    assert_same_episode(ep, buf)
    copy = copy_episode(ep)
    assert_same_episode(copy, buf)
    k = coin_steps(buf)[3]
    copy.truncate(k)
    assert copy.num_steps == k and len(copy.array("coin_pairs")) == int(ep.array("coin_offsets")[k])
    assert_same_episode(copy, buf, upto=k)


def test_a_format1_file_opens_and_the_program_still_records_its_steps_bit_for_bit():
    old = load_episode(FORMAT1)
    assert old.version == 1 and old.num_steps == 40 and old.coins_from_step == 40
    assert all(old.coins(k) is None for k in range(old.num_steps))
    sim = Simulation(default_config(), seed=0)
    sim.run(40)
    assert_same_episode(old, sim.buffer, coins=False)


def test_a_continued_format1_recording_records_coins_from_where_it_goes_on(tmp_path):
    """The studio continues an opened file in a copy of it, with frames of a simulation in the same state."""
    buf = copy_episode(load_episode(FORMAT1))
    sim = Simulation(default_config(), seed=0)
    sim.run(40)
    tap = FrameTap(sim.buffer)
    tap.rewind(40)
    for _ in range(30):
        sim.step()
        apply_frame(buf, tap.frame(sim.agents))
    ep = load_episode(buf.save(tmp_path / "continued.npz"))
    assert ep.version == 2 and ep.coins_from_step == 40
    assert ep.coins(39) is None and ep.coins(40) is not None
    assert_same_episode(ep, buf)
    assert_same_episode(ep, sim.buffer, coins=False)
    r = buf.step_record(0)
    with pytest.raises(ValueError, match="coins of a recorded step are needed"):
        buf.append_step(r.holds, r.decided, r.realised, r.fired, r.witness, r.reached, None)
    assert buf.num_steps == 70
    buf.truncate(20)                                       # back into the part without coins
    assert buf.coins_from_step == 20


def test_the_coin_record_is_small(recording):
    buf = recording.sim.buffer
    coin_bytes = sum(buf.array(f).nbytes for f in ("coin_offsets", "coin_pairs", "coin_predicate", "coin_outcome"))
    coins = len(buf.array("coin_pairs"))
    assert coin_bytes <= 8 * (buf.num_steps + 1) + 10 * coins     # one offset per step, 10 bytes per coin


def rewrite(path: Path, out: Path, meta_edit=None, array_edit=None) -> Path:
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
    with np.load(path) as z:
        arrays = {k: z[k].copy() for k in z.files if k != "meta.json"}
    if meta_edit:
        meta_edit(meta)
    if array_edit:
        array_edit(arrays)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for k, v in arrays.items():
            b = io.BytesIO()
            np.save(b, v, allow_pickle=False)
            zf.writestr(k + ".npy", b.getvalue())
        zf.writestr("meta.json", json.dumps(meta))
    return out


def _set(arrays, name, value):
    arrays[name] = value


BAD = {
    "no_offsets": (None, lambda a: a.pop("coin_offsets"), "lacks arrays: coin_offsets"),
    "short_offsets": (None, lambda a: _set(a, "coin_offsets", a["coin_offsets"][:-1]), "coin arrays are inconsistent"),
    "pair_of_nobody": (None, lambda a: a["coin_pairs"].__setitem__((0, 1), 999), "array coin_pairs holds 999"),
    "unknown_predicate": (None, lambda a: a["coin_predicate"].__setitem__(0, 7), "array coin_predicate holds 7"),
    "outcome_int": (None, lambda a: _set(a, "coin_outcome", a["coin_outcome"].astype(np.int8)),
                    "coin_outcome must hold booleans"),
    "offsets_down": (None, lambda a: a["coin_offsets"].__setitem__(5, 10**6), "coin_offsets must start at 0"),
    "no_names": (lambda m: m.pop("coin_predicates"), None, "field 'coin_predicates' is missing"),
    "start_text": (lambda m: m.__setitem__("coins_from_step", "x"), None, "field 'coins_from_step' must be"),
    "start_late": (lambda m: m.__setitem__("coins_from_step", 10**6), None, "field 'coins_from_step' must be"),
    "coins_before_start": (lambda m: m.__setitem__("coins_from_step", m["num_steps"]), None,
                           "coins are recorded before meta.json's coins_from_step"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_damaged_coin_record_is_a_clear_error(recording, tmp_path, case):
    meta_edit, array_edit, message = BAD[case]
    good = recording.sim.buffer.save(tmp_path / "good.npz")
    with pytest.raises(EpisodeFileError, match=message):
        load_episode(rewrite(good, tmp_path / f"{case}.npz", meta_edit, array_edit))
