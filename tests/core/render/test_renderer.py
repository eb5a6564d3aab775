"""Renderer: determinism, agent boxes and placement rules, crops, heading NONE, library icons."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from core.base.codes import Heading, Kind
from core.map.model import CityMap
from core.render.icons import IconSet
from core.render.library import IconLibrary
from core.render.renderer import Frame, Renderer
from tests.support.render import small_city, snapshot

P = 8
L, R, U, D, NONE = (int(Heading.LEFT), int(Heading.RIGHT), int(Heading.UP), int(Heading.DOWN),
                    int(Heading.NONE))


@pytest.fixture(scope="module")
def icons() -> IconSet:
    return IconSet.load()


@pytest.fixture(scope="module")
def city() -> CityMap:
    return small_city()


MIXED = [(Kind.CAR, ["ambulance"], (17, 20), R), (Kind.CAR, ["bus"], (13, 25), L),
         (Kind.CAR, ["police"], (30, 33), U), (Kind.CAR, [], (5, 37), D),
         (Kind.PEDESTRIAN, ["old"], (30, 6), D), (Kind.PEDESTRIAN, ["young"], (3, 6), U),
         (Kind.PEDESTRIAN, [], (36, 6), R), (Kind.CAR, ["tiro"], (18, 44), R),
         (Kind.CAR, ["reckless"], (37, 37), U)]


def test_same_seed_same_pixels_and_boxes(city, icons):
    snap = snapshot(MIXED)
    a = Renderer(city, icons, P, seed=7).render(snap)
    b = Renderer(city, icons, P, seed=7).render(snap)
    assert a.image.shape == (city.height * P, city.width * P, 3) and a.image.dtype == np.uint8
    assert np.array_equal(a.image, b.image)
    assert a.boxes == b.boxes
    # another seed picks other variants somewhere (tiles, buildings or agents)
    c = Renderer(city, icons, P, seed=8).render(snap)
    assert not np.array_equal(a.image, c.image)


def test_boxes_contain_every_agent_pixel(city, icons):
    r = Renderer(city, icons, P, seed=3)
    snap = snapshot(MIXED)
    frame = r.render(snap)
    bg = r.background()
    changed = np.any(frame.image != bg, axis=2)
    inside = np.zeros_like(changed)
    assert set(frame.boxes) == set(range(len(MIXED)))
    for i, (x1, y1, x2, y2) in frame.boxes.items():
        assert x2 > x1 and y2 > y1
        inside[max(y1, 0):y2, max(x1, 0):x2] = True
        # the icon really is drawn in its box
        assert changed[max(y1, 0):y2, max(x1, 0):x2].mean() > 0.3, i
    assert not (changed & ~inside).any()


@pytest.mark.parametrize("heading", [L, R, U, D])
def test_car_head_aligned_to_cell_edge(city, icons, heading):
    r, c = 15, 20
    frame = Renderer(city, icons, P, seed=0).render(snapshot([(Kind.CAR, [], (r, c), heading)]))
    x1, y1, x2, y2 = frame.boxes[0]
    w, h = x2 - x1, y2 - y1
    assert min(w, h) == 6 * P  # short side 6 cells (docs/reference.md#static-map-rendering)
    if heading in (L, R):
        assert w > h and abs((y1 + y2) / 2 - (r * P + P / 2)) <= 1
        assert (x2 == (c + 1) * P) if heading == R else (x1 == c * P)
    else:
        assert h > w and abs((x1 + x2) / 2 - (c * P + P / 2)) <= 1
        assert (y1 == r * P) if heading == U else (y2 == (r + 1) * P)


def test_car_rotation_matches_heading(city, icons):
    """The right-facing sprite is the up-facing one turned a quarter clockwise (head = top → right)."""
    rend = Renderer(city, icons, P, seed=0)
    up = rend.sprite_rgba("car", 0, U)
    right = rend.sprite_rgba("car", 0, R)
    down = rend.sprite_rgba("car", 0, D)
    left = rend.sprite_rgba("car", 0, L)
    assert np.array_equal(right, np.rot90(up, -1))
    assert np.array_equal(down, up[::-1, ::-1])
    assert np.array_equal(left, np.rot90(up, 1))


def test_pedestrian_centred_and_mirrored(city, icons):
    rend = Renderer(city, icons, P, seed=0)
    r, c = 30, 6
    boxes = {}
    for hd in (L, R, U, D):
        f = rend.render(snapshot([(Kind.PEDESTRIAN, [], (r, c), hd)]))
        boxes[hd] = f.boxes[0]
        x1, y1, x2, y2 = f.boxes[0]
        assert abs((x1 + x2) / 2 - (c * P + P / 2)) <= 1 and abs((y1 + y2) / 2 - (r * P + P / 2)) <= 1
        assert min(x2 - x1, y2 - y1) <= 4 * P and max(x2 - x1, y2 - y1) <= 6 * P
    assert len(set(boxes.values())) == 1
    assert np.array_equal(rend.sprite_rgba("pedestrian", 1, L), rend.sprite_rgba("pedestrian", 1, R)[:, ::-1])
    assert np.array_equal(rend.sprite_rgba("pedestrian", 1, U), rend.sprite_rgba("pedestrian", 1, R))


def test_heading_none_keeps_previous_orientation(city, icons):
    rend = Renderer(city, icons, P, seed=0)
    first = rend.render(snapshot([(Kind.CAR, [], (15, 20), L)], step=1))
    moved = rend.render(snapshot([(Kind.CAR, [], (15, 18), NONE)], step=2), previous=first)
    assert moved.placements[0].orientation == L
    x1, y1, x2, y2 = moved.boxes[0]
    assert x1 == 18 * P and x2 - x1 > y2 - y1
    # without a previous frame a car with no heading faces up
    fresh = rend.render(snapshot([(Kind.CAR, [], (15, 18), NONE)]))
    assert fresh.placements[0].orientation == U


def test_headings_override(city, icons):
    rend = Renderer(city, icons, P, seed=0)
    snap = snapshot([(Kind.CAR, [], (15, 20), L)])
    f = rend.render(snap, headings=np.array([D]))
    assert f.placements[0].orientation == D and f.boxes[0][3] == 16 * P
    with pytest.raises(ValueError):
        rend.render(snap, headings=np.array([D, D]))


def test_crop_is_a_window_of_the_full_frame(city, icons):
    rend = Renderer(city, icons, P, seed=5)
    snap = snapshot(MIXED)
    full = rend.render(snap)
    crop = (8, 16, 20, 24)
    part = rend.render(snap, crop=crop)
    y0, x0 = crop[0] * P, crop[1] * P
    assert part.image.shape == (20 * P, 24 * P, 3)
    assert np.array_equal(part.image, full.image[y0:y0 + 20 * P, x0:x0 + 24 * P])
    for i, (x1, y1, x2, y2) in part.boxes.items():
        assert (x1 + x0, y1 + y0, x2 + x0, y2 + y0) == full.boxes[i]
    # agents entirely outside the crop have no box; partially visible ones are flagged
    for i, (x1, y1, x2, y2) in full.boxes.items():
        visible = x2 > x0 and y2 > y0 and x1 < x0 + 24 * P and y1 < y0 + 20 * P
        assert (i in part.boxes) == visible
    assert any(not part.inside(i) for i in part.boxes)
    # a crop running past the map edge is padded with black
    edge = rend.render(snap, crop=(30, 40, 16, 16))
    assert edge.image.shape == (128, 128, 3) and not edge.image[-8:, -8:].any()


def test_variant_per_agent_is_stable_and_independent(city, icons):
    rend = Renderer(city, icons, P, seed=11)
    cars = [(Kind.CAR, [], (15, 4 + 3 * i), R) for i in range(9)]
    f1 = rend.render(snapshot(cars, 1))
    f2 = rend.render(snapshot([(k, c, (r + 0, col + 1), h) for k, c, (r, col), h in cars], 2), previous=f1)
    assert [f1.placements[i].variant for i in range(9)] == [f2.placements[i].variant for i in range(9)]
    assert len({f1.placements[i].variant for i in range(9)}) > 1  # several variants in use
    # agent i's variant does not depend on the other agents
    alone = Renderer(city, icons, P, seed=11).render(snapshot(cars[4:5]))
    assert Renderer(city, icons, P, seed=11).agent_variant(4, "car") == f1.placements[4].variant
    assert alone.placements[0].variant == Renderer(city, icons, P, seed=11).agent_variant(0, "car")


def test_detailed_types_follow_concept_priority(city, icons):
    snap = snapshot([(Kind.CAR, ["police", "ambulance"], (15, 10), R), (Kind.CAR, ["reckless", "tiro"], (15, 30), R),
                     (Kind.PEDESTRIAN, ["young", "old"], (3, 6), R), (Kind.CAR, [], (5, 37), D),
                     (Kind.PEDESTRIAN, [], (30, 6), R)])
    f = Renderer(city, icons, P).render(snap)
    assert f.semantics == {0: "ambulance", 1: "tiro", 2: "old", 3: "car", 4: "pedestrian"}


def test_static_map_layers(city, icons):
    """Midline cells carry gold, building lots are painted, the crossing bars follow the road direction."""
    bg = Renderer(city, icons, P, seed=0).background()
    gold = np.all(bg == (255, 215, 0), axis=2)
    assert gold[15 * P:(15 + 1) * P, :30 * P].any() and not gold[:, :30 * P][bg.shape[0] // 2 + 60:].any()
    house = bg[24 * P:34 * P, 12 * P:22 * P]
    assert house.std() > 10  # an icon, not a flat fill


def test_crossing_orientation(city, icons):
    from core.render.renderer import _crossing_vertical_traffic

    vert = _crossing_vertical_traffic(city.street)
    assert not vert[10:21, 4:9].any()  # on the horizontal road → bars run left–right
    s = city.street.copy()
    s[:, :] = 0
    s[:, 10:21] = 2.0
    s[4:9, :] = np.where(s[4:9, :] == 2.0, -1.0, 1.0)
    assert _crossing_vertical_traffic(s)[4:9, 10:21].all()


def test_accepted_library_icons_replace_defaults(city, tmp_path):
    lib = IconLibrary(tmp_path / "icons")
    red = Image.new("RGBA", (60, 100), (255, 0, 0, 255))
    rec = lib.add("car", red, {"seed": 1, "prompt": "red box"})
    icons = IconSet.load(library=lib)
    assert icons.count("car") == 3 and not icons.from_library["car"]  # pending icons are not used
    lib.accept(rec.id)
    icons = IconSet.load(library=lib)
    assert icons.from_library["car"] and icons.count("car") == 1 and icons.sources["car"] == (rec.id,)
    f = Renderer(city, icons, P).render(snapshot([(Kind.CAR, [], (15, 20), U)]))
    x1, y1, x2, y2 = f.boxes[0]
    assert (x2 - x1, y2 - y1) == (48, 80)
    assert np.all(f.image[y1 + 2:y2 - 2, x1 + 2:x2 - 2] == (255, 0, 0))
    lib.reject(rec.id)
    assert not IconSet.load(library=lib).from_library["car"]


def test_set_icons_invalidates_caches(city, icons, tmp_path):
    rend = Renderer(city, icons, P)
    snap = snapshot([(Kind.CAR, [], (15, 20), U)])
    before = rend.render(snap).image
    lib = IconLibrary(tmp_path / "icons")
    lib.accept(lib.add("car", Image.new("RGBA", (60, 100), (0, 0, 255, 255)), {}).id)
    rend.set_icons(icons.merged(IconSet.load(library=lib, semantics=["car"])))
    after = rend.render(snap)
    x1, y1, x2, y2 = after.boxes[0]
    assert np.all(after.image[y1 + 2:y2 - 2, x1 + 2:x2 - 2] == (0, 0, 255))
    assert not np.array_equal(before, after.image)


def test_empty_snapshot_and_buildings_from_layer_only(icons):
    city = small_city()
    no_spec = CityMap(city.name, city.height, city.width, city.streets, (), city.street, city.building,
                      city.block, city.midline, city.intersections)
    a = Renderer(city, icons, P, seed=2).background()
    b = Renderer(no_spec, icons, P, seed=2).background()
    lots = city.building > 0
    m = np.repeat(np.repeat(lots, P, 0), P, 1)
    assert (a[m] != (178, 196, 158)).any() and (b[m] != (178, 196, 158)).any()
    f = Renderer(city, icons, P).render(snapshot([]))
    assert isinstance(f, Frame) and f.boxes == {}


def test_frame_save_roundtrip(city, icons, tmp_path):
    f = Renderer(city, icons, 4).render(snapshot(MIXED), crop=(0, 0, 32, 32))
    f.save(tmp_path / "f.png")
    assert np.array_equal(np.asarray(Image.open(tmp_path / "f.png")), f.image)


def test_default_renderer_uses_the_users_accepted_icons(city, monkeypatch, tmp_path):
    monkeypatch.setenv("LOGICITY_DATA_DIR", str(tmp_path / "ud"))
    lib = IconLibrary()
    assert lib.root == tmp_path / "ud" / "icons"
    lib.accept(lib.add("police", Image.new("RGBA", (60, 100), (0, 255, 0, 255)), {}).id)
    f = Renderer(city).render(snapshot([(Kind.CAR, ["police"], (15, 20), U)]))
    x1, y1, x2, y2 = f.boxes[0]
    assert np.all(f.image[y1 + 2:y2 - 2, x1 + 2:x2 - 2] == (0, 255, 0))
