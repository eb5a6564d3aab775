"""Damaged episode files (meta.json fields, cells off the map, a folder given as the file) give one clear error
naming the file, never a crash (episode-set files: tests/core/tasks/test_spf_episodes.py)."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from core.base.errors import EpisodeFileError
from core.cli import run_cli
from core.io.archive import read_archive
from core.sim.config import load_mode
from core.sim.episode import load_episode
from core.sim.simulation import Simulation
from core.tasks.spf import episodes as spf_episodes
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    sim = Simulation(load_mode(ROOT / "configs" / "modes" / "sim_easy.yaml"), seed=2)
    sim.run(6)
    path = sim.buffer.save(tmp_path_factory.mktemp("ep") / "ep.npz")
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files if k != "meta.json"}
    return path, arrays, meta


def rewrite(tmp_path, recorded, name, meta_edit=None, array_edit=None) -> Path:
    """A copy of the recorded episode with meta.json and/or one array edited (written as the format says)."""
    _, arrays, meta = recorded
    arrays = {k: v.copy() for k, v in arrays.items()}
    meta = json.loads(json.dumps(meta))
    if meta_edit:
        meta_edit(meta)
    if array_edit:
        array_edit(arrays)
    p = tmp_path / f"{name}.npz"
    with zipfile.ZipFile(p, "w", zipfile.ZIP_STORED) as zf:
        for k, v in arrays.items():
            b = io.BytesIO()
            np.save(b, v, allow_pickle=False)
            zf.writestr(k + ".npy", b.getvalue())
        zf.writestr("meta.json", json.dumps(meta))
    return p


META_CASES = {
    "version_text": (lambda m: m.__setitem__("version", "abc"), "field 'version' must be an integer"),
    "version_list": (lambda m: m.__setitem__("version", [1]), "field 'version' must be an integer"),
    "agents_int": (lambda m: m.__setitem__("agents", 5), "field 'agents' must be a list"),
    "agents_entries": (lambda m: m.__setitem__("agents", [{"nm": 1}] * len(m["agents"])), "field 'agents' entry 0"),
    "agents_kind_9": (lambda m: m["agents"][0].__setitem__("kind", 9), "has kind 9"),
    "agents_count": (lambda m: m["agents"].pop(), "field 'agents' has"),
    "priorities_text": (lambda m: m["base_priorities"].__setitem__(0, "x"), "field 'base_priorities' entry 0"),
    "base_concepts_int": (lambda m: m.__setitem__("base_concepts", 3), "field 'base_concepts' must be a list"),
    "concepts_unknown": (lambda m: m["concepts"].__setitem__(0, "dragon"), "unknown concept 'dragon'"),
    "concepts_short": (lambda m: m.__setitem__("concepts", m["concepts"][:3]), "array concepts has shape"),
    "clauses_int": (lambda m: m.__setitem__("clauses", 5), "field 'clauses' must be a list"),
    "clauses_entries": (lambda m: m.__setitem__("clauses", [{"x": 1}]), "field 'clauses' entry 0"),
    "config_texts_text": (lambda m: m.__setitem__("config_texts", "x"), "field 'config_texts'"),
    "seed_text": (lambda m: m.__setitem__("seed", "3"), "field 'seed'"),
}


@pytest.mark.parametrize("case", sorted(META_CASES))
def test_damaged_meta_json_names_the_field(tmp_path, recorded, case):
    edit, expect = META_CASES[case]
    p = rewrite(tmp_path, recorded, case, meta_edit=edit)
    with pytest.raises(EpisodeFileError) as ei:
        load_episode(p)
    assert ei.value.file == str(p) and expect in ei.value.message, ei.value.message


def test_concepts_array_shape_must_match_meta(tmp_path, recorded):
    p = rewrite(tmp_path, recorded, "cshape", array_edit=lambda a: a.__setitem__("concepts", a["concepts"][:, :, :2]))
    with pytest.raises(EpisodeFileError, match="array concepts has shape"):
        load_episode(p)


def test_negative_priorities_array_is_rejected(tmp_path, recorded):
    p = rewrite(tmp_path, recorded, "prio", array_edit=lambda a: a["priorities"].__setitem__((0, 0), -5))
    with pytest.raises(EpisodeFileError, match="array priorities holds -5"):
        load_episode(p)


def test_render_reports_damaged_meta_and_cells_off_the_map(tmp_path, recorded, capsys):
    out = tmp_path / "x.png"
    bad = rewrite(tmp_path, recorded, "v", meta_edit=lambda m: m.__setitem__("version", "abc"))
    assert run_cli(["render", "--episode", str(bad), "--step", "1", "--out", str(out)]) == 1
    assert f"{bad}: meta.json field 'version'" in capsys.readouterr().err
    far = rewrite(tmp_path, recorded, "far", array_edit=lambda a: a["positions"].__setitem__((3, 0), (5000, 5000)))
    assert run_cli(["render", "--episode", str(far), "--step", "1", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert str(far) in err and "cell (5000, 5000) at step 3, outside the" in err and not out.exists()
    path = recorded[0]
    h, w = load_mode(ROOT / "configs" / "modes" / "sim_easy.yaml").city.shape
    load_episode(path).check_map(h, w)  # a recorded episode lies on its own map
    with pytest.raises(EpisodeFileError, match="outside the 3×3 map"):
        load_episode(path).check_map(3, 3)


def test_a_folder_given_as_a_file_is_reported(tmp_path, capsys):
    assert run_cli(["render", "--episode", str(tmp_path), "--step", "1", "--out", str(tmp_path / "x.png")]) == 1
    assert f"{tmp_path}: is a folder" in capsys.readouterr().err
    with pytest.raises(EpisodeFileError, match="is a folder"):
        read_archive(tmp_path, spf_episodes.FORMAT, spf_episodes.VERSION)
