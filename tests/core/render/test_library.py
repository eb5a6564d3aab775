"""Default icon art on disk, the icon library (sidecars, statuses) and the user data folder."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from core.io.datadir import icon_library_dir, user_data_dir
from core.render import default_art
from core.render.icons import DEFAULT_ICON_DIR, IconSet
from core.render.library import IconLibrary, IconLibraryError
from core.render.semantics import (
    AGENT_SEMANTICS,
    SEMANTICS,
    STATIC_SEMANTICS,
    TILE_SEMANTICS,
    agent_semantic,
    parse_semantic,
)


@pytest.mark.parametrize("semantic", SEMANTICS)
def test_default_icons_exist_for_every_semantic(semantic):
    pngs = sorted((DEFAULT_ICON_DIR / semantic).glob("*.png"))
    assert len(pngs) >= 3
    arrays = []
    for p in pngs:
        with Image.open(p) as im:
            assert im.mode == "RGBA"
            arrays.append(np.asarray(im))
    if semantic in STATIC_SEMANTICS:
        assert all(a[..., 3].min() == 255 for a in arrays)  # tiles and lots are opaque
    else:
        assert all(a[0, 0, 3] == 0 and a[..., 3].max() == 255 for a in arrays)  # transparent around the agent
    # the variants really differ from each other
    for i in range(len(arrays)):
        for j in range(i + 1, len(arrays)):
            if arrays[i].shape == arrays[j].shape:
                a, b = arrays[i].astype(int), arrays[j].astype(int)
                seen = (a[..., 3] > 0) | (b[..., 3] > 0)
                assert np.abs(a - b)[seen].mean() > 4


@pytest.mark.parametrize("semantic", ["crossing", "house", "ambulance", "young"])
def test_committed_default_art_matches_the_drawing_script(semantic, tmp_path):
    default_art.draw_all(tmp_path, [semantic])
    for k in range(default_art.N_VARIANTS):
        name = default_art.default_icon_name(semantic, k)
        new = np.asarray(Image.open(tmp_path / name)).astype(int)
        old = np.asarray(Image.open(DEFAULT_ICON_DIR / name)).astype(int)
        assert new.shape == old.shape and np.abs(new - old).max() <= 2, name


@pytest.mark.parametrize("semantic", TILE_SEMANTICS)
def test_street_tiles_are_seamless(semantic):
    """Opposite edges of a tile continue each other (no visible seams when tiled)."""
    for p in sorted((DEFAULT_ICON_DIR / semantic).glob("*.png")):
        a = np.asarray(Image.open(p).convert("RGB")).astype(float)
        seam = np.abs(a[:, 0] - a[:, -1]).mean() + np.abs(a[0] - a[-1]).mean()
        inner = np.abs(a[:, 80] - a[:, 79]).mean() + np.abs(a[80] - a[79]).mean()
        assert seam <= inner * 2.5 + 6, p


def test_iconset_falls_back_to_procedural_art(tmp_path):
    icons = IconSet.load(default_dir=tmp_path / "missing", semantics=["bus", "office"])
    assert icons.count("bus") == 3 and icons.count("office") == 3
    assert icons.sources["bus"][0].startswith("<procedural")
    bus = icons.variants("bus")[0]
    assert bus[0, :, 3].max() > 0 and bus[:, 0, 3].max() > 0  # agent icons are trimmed to the drawing


def test_semantics_helpers():
    assert parse_semantic("Gas Station") == "gas_station" and parse_semantic("gas-station") == "gas_station"
    assert parse_semantic("Tiro (learner) car") == "tiro" and parse_semantic("zebra") == "crossing"
    with pytest.raises(ValueError, match="choose one of"):
        parse_semantic("spaceship")
    assert agent_semantic(1, ["bus", "ambulance"]) == "ambulance"
    assert agent_semantic(0, ["ambulance"]) == "pedestrian"  # a car concept on a pedestrian is ignored
    assert len(SEMANTICS) == 17 and len(AGENT_SEMANTICS) == 9


def test_library_add_list_accept_reject(tmp_path):
    lib = IconLibrary(tmp_path)
    img = Image.new("RGBA", (32, 48), (10, 200, 30, 255))
    raw = Image.new("RGB", (64, 64), (255, 255, 255))
    meta = {"prompt": "a green bus", "negative_prompt": "text", "seed": 42, "model": "/m/sd-turbo",
            "scheduler": "EulerAncestralDiscreteScheduler", "steps": 2, "guidance": 0.0}
    a = lib.add("bus", img, meta, raw=raw)
    b = lib.add("bus", img, {**meta, "seed": 43})
    c = lib.add("Ambulance", img, {**meta, "seed": 42})
    assert a.id.startswith("bus/") and "-s42" in a.stem and a.id != b.id and c.semantic == "ambulance"
    side = json.loads(a.sidecar.read_text())
    for key in ("prompt", "negative_prompt", "seed", "model", "scheduler", "steps", "guidance", "status"):
        assert key in side
    assert side["status"] == "pending" and side["width"] == 32 and a.raw_png.is_file()
    assert [r.id for r in lib.list("bus")] == [a.id, b.id]
    assert len(lib.list()) == 3 and lib.list(status="accepted") == []
    lib.accept(a.id)
    lib.reject(b.id)
    assert [r.id for r in lib.accepted("bus")] == [a.id]
    assert [r.id for r in lib.list("bus", "rejected")] == [b.id]
    assert lib.metadata(b.id)["status"] == "rejected" and b.png.is_file()  # rejecting deletes nothing
    lib.accept(b.id)
    assert len(lib.accepted("bus")) == 2
    assert lib.update_metadata(a.id, note="nice").meta["note"] == "nice"
    lib.delete(c.id)
    assert lib.list("ambulance") == [] and not c.png.exists()


def test_library_rejects_bad_ids_and_status(tmp_path):
    lib = IconLibrary(tmp_path)
    with pytest.raises(IconLibraryError):
        lib.get("bus/nothing-here")
    with pytest.raises(IconLibraryError):
        lib.get("no-slash")
    with pytest.raises(IconLibraryError):
        lib.get("bus/../../etc/passwd")
    with pytest.raises(IconLibraryError):
        lib.list(status="maybe")
    rec = lib.add("car", Image.new("RGBA", (8, 8)), {})
    with pytest.raises(IconLibraryError):
        lib.set_status(rec.id, "great")


def test_library_survives_a_broken_sidecar(tmp_path):
    lib = IconLibrary(tmp_path)
    rec = lib.accept(lib.add("car", Image.new("RGBA", (8, 8), (1, 2, 3, 255)), {}).id)
    rec.sidecar.write_text("{ not json")
    assert lib.get(rec.id).status == "pending"
    assert IconSet.load(library=lib, semantics=["car"]).from_library["car"] is False


def test_import_image(tmp_path):
    src = tmp_path / "mine.png"
    Image.new("RGB", (20, 30), (5, 6, 7)).save(src)
    lib = IconLibrary(tmp_path / "lib")
    rec = lib.import_image("police", src)
    assert rec.status == "accepted" and rec.meta["source"] == "imported"
    (tmp_path / "bad.png").write_bytes(b"not an image")
    with pytest.raises(IconLibraryError):
        lib.import_image("police", tmp_path / "bad.png")


def test_user_data_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("LOGICITY_DATA_DIR", str(tmp_path / "d"))
    assert user_data_dir() == tmp_path / "d" and icon_library_dir() == tmp_path / "d" / "icons"
    assert IconLibrary().root == tmp_path / "d" / "icons"
    monkeypatch.delenv("LOGICITY_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("sys.platform", "linux")
    assert user_data_dir() == tmp_path / "xdg" / "LogiCityStudio"


def _bad_icon(lib: IconLibrary, sidecar: str, semantic: str = "walking_street", stem: str = "x1"):
    folder = lib.root / semantic
    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGBA", (8, 8), (1, 2, 3, 255)).save(folder / f"{stem}.png")
    (folder / f"{stem}.json").write_text(sidecar)
    return folder / f"{stem}.json"


@pytest.mark.parametrize("sidecar, field", [
    ('{"seed": "abc"}', "seed"), ('{"seed": true, "status": "accepted"}', "seed"),
    ('{"postprocess": "oops"}', "postprocess"), ('{"postprocess": {"warning": 3}}', "postprocess"),
    ('{"status": 5}', "status"), ('{"status": "great"}', "status"), ('{"prompt": ["a"]}', "prompt"),
    ('{"steps": "many", "guidance": "x"}', "steps"),
])
def test_sidecar_fields_of_the_wrong_type_flag_the_record(tmp_path, sidecar, field):
    lib = IconLibrary(tmp_path)
    side = _bad_icon(lib, sidecar)
    (rec,) = lib.list()
    assert rec.sidecar_error and str(side) in rec.sidecar_error and repr(field) in rec.sidecar_error
    assert field not in rec.meta  # the bad value is never handed on
    # no property raises, and each gives a safe value
    assert (rec.seed, rec.prompt, rec.warning) == (None, "", None)
    assert rec.status in ("pending", "accepted")
    assert lib.get(rec.id).sidecar_error == rec.sidecar_error and field not in lib.metadata(rec.id)


def test_sidecar_with_a_bad_field_keeps_its_good_fields_and_status(tmp_path):
    lib = IconLibrary(tmp_path)
    side = _bad_icon(lib, json.dumps({"seed": "abc", "status": "accepted", "prompt": "zebra", "note": "mine"}))
    (rec,) = lib.accepted("walking_street")
    assert rec.prompt == "zebra" and rec.meta["note"] == "mine" and rec.seed is None
    assert IconSet.load(library=lib, semantics=["walking_street"]).from_library["walking_street"]
    rec = lib.reject(rec.id)  # rewriting keeps every field, the bad one too (it is the user's)
    stored = json.loads(side.read_text())
    assert stored["seed"] == "abc" and stored["status"] == "rejected" and "sidecar_error" not in stored
    assert rec.status == "rejected" and rec.sidecar_error


@pytest.mark.parametrize("sidecar, words", [("{ not json", "not valid JSON at line 1"),
                                            ("[1, 2]", "must be a JSON object, got an array")])
def test_unreadable_sidecar_is_named_and_kept_on_rewrite(tmp_path, sidecar, words):
    lib = IconLibrary(tmp_path)
    side = _bad_icon(lib, sidecar)
    (rec,) = lib.list()
    assert rec.status == "pending" and str(side) in rec.sidecar_error and words in rec.sidecar_error
    rec = lib.accept(rec.id)
    assert rec.status == "accepted" and rec.sidecar_error is None
    assert json.loads(side.read_text())["status"] == "accepted"
    assert side.with_name("x1.json.broken").read_text() == sidecar  # the broken original is never lost


def test_unknown_semantic_is_a_library_error(tmp_path):
    lib = IconLibrary(tmp_path)
    for call in (lambda: lib.list("spaceship"), lambda: lib.folder("spaceship"),
                 lambda: lib.add("spaceship", Image.new("RGBA", (4, 4))),
                 lambda: lib.import_image("spaceship", tmp_path / "missing.png")):
        with pytest.raises(IconLibraryError, match="unknown semantic"):
            call()
