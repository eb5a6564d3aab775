"""Our map format, the reference importer and validation errors (file + line)."""
from pathlib import Path

import numpy as np
import pytest

from core.base.errors import ConfigError
from core.map.generate import generate_city
from core.map.io import dumps_map, load_map, loads_map, save_map
from core.map.layers import derive_layers
from core.map.reference import import_reference_map, reference_map_from_text
from core.map.spec import Building, Street
from tests.support.maps import DEFAULT_MAP, REFERENCE_MAP, default_city, reference_city

LAYERS = ("street", "building", "block", "midline", "intersections")


def same_city(a, b) -> None:
    assert (a.height, a.width, a.streets, a.buildings) == (b.height, b.width, b.streets, b.buildings)
    for name in LAYERS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def line_of(text: str, needle: str, nth: int = 0) -> int:
    hits = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return hits[nth]


@pytest.fixture(scope="module")
def base_text() -> str:
    city = generate_city(3, (1, 1))
    city.generator = None
    return dumps_map(city)


def write(tmp_path: Path, text: str, name: str = "city.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def expect_error(tmp_path: Path, text: str, line: int, *words: str) -> ConfigError:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_map(path)
    err = info.value
    assert err.file == str(path)
    assert err.line == line, str(err)
    for w in words:
        assert w in err.message, err.message
    return err


# ---------------------------------------------------------------- bundled default map and the reference import
def test_reference_import_metadata(reference_configs):
    city = reference_city()
    assert city.name == "square_5x5" and city.shape == (241, 241)  # grid_size [250, 250] is ignored
    assert len(city.streets) == 82 and len(city.buildings) == 100
    assert city.source == str(REFERENCE_MAP)


def test_default_map_equals_reference(reference_configs):
    same_city(default_city(), reference_city())
    assert default_city().name == "default"


def test_round_trip_reference_ours_save_load(reference_configs, tmp_path):
    ref = reference_city()
    path = tmp_path / "copy.yaml"
    save_map(ref, path)
    again = load_map(path)
    same_city(again, ref)
    assert again.name == ref.name
    assert dumps_map(again) == path.read_text(encoding="utf-8")


def test_round_trip_keeps_generator_metadata(tmp_path):
    city = generate_city(7, (2, 3), block_size=(20, 30), traffic_width=9, walking_width=4)
    again = loads_map(dumps_map(city), "gen.yaml")
    same_city(again, city)
    assert again.generator == city.generator
    assert again.generator["blocks"] == [2, 3] and again.generator["seed"] == 7


def test_optional_fields_round_trip():
    city = derive_layers("tiny", 57, 57,
                         [Street("traffic", "vertical", 0, 0, 57, 11, directions=1)] + list(
                             generate_city(0, (1, 1)).streets[1:]),
                         [Building("House", 16, 16, 10, 10, 1, None), Building("Store", 31, 31, 10, 10, 1, 5)])
    text = dumps_map(city)
    assert "directions: 1" in text and "height" not in text.splitlines()[-2]
    again = loads_map(text)
    assert again.streets == city.streets and again.buildings == city.buildings


# ---------------------------------------------------------------- errors, each with file and line
def test_bad_type_in_size(tmp_path, base_text):
    text = base_text.replace("size: [57, 57]", "size: [57, x]")
    expect_error(tmp_path, text, line_of(text, "size:"), "two integers")


def test_bad_type_in_street(tmp_path, base_text):
    old = "at: [0, 46], length: 57"
    text = base_text.replace(old, "at: [0, 46], length: long")
    expect_error(tmp_path, text, line_of(text, "length: long"), "'length' must be int")


def test_unknown_key_is_a_typo(tmp_path, base_text):
    text = base_text.replace("width: 11}", "widht: 11}", 1)
    expect_error(tmp_path, text, line_of(text, "widht"), "unknown key 'widht'")


def test_unknown_building_type(tmp_path, base_text):
    text = base_text.replace("type: Store", "type: Castle")
    expect_error(tmp_path, text, line_of(text, "Castle"), "unknown building type 'Castle'")


def test_building_out_of_bounds(tmp_path, base_text):
    text = base_text.replace("at: [31, 31], size: [10, 10]", "at: [50, 50], size: [10, 10]")
    expect_error(tmp_path, text, line_of(text, "at: [50, 50]"), "outside the 57x57 map")


def test_overlapping_buildings(tmp_path, base_text):
    text = base_text.replace("at: [16, 31], size: [10, 10]", "at: [16, 20], size: [10, 10]")
    err = expect_error(tmp_path, text, line_of(text, "at: [16, 20]"), "overlaps building #1")
    assert f"line {line_of(text, 'at: [16, 16], size')}" in err.message


def test_building_on_a_street(tmp_path, base_text):
    text = base_text.replace("at: [31, 31], size: [10, 10]", "at: [31, 31], size: [12, 10]")
    expect_error(tmp_path, text, line_of(text, "size: [12, 10]"), "overlaps street #")


def test_street_out_of_bounds(tmp_path, base_text):
    text = base_text.replace("at: [0, 46], length: 57", "at: [0, 46], length: 60")
    expect_error(tmp_path, text, line_of(text, "length: 60"), "outside the 57x57 map")


def test_even_traffic_width(tmp_path, base_text):
    text = base_text.replace("at: [46, 0], length: 57, width: 11", "at: [46, 0], length: 57, width: 10")
    expect_error(tmp_path, text, line_of(text, "width: 10"), "must be odd")


def test_no_traffic_streets(tmp_path, base_text):
    text = "\n".join(line for line in base_text.splitlines() if "kind: traffic" not in line) + "\n"
    expect_error(tmp_path, text, line_of(text, "streets:"), "no traffic street")


def test_unsupported_version(tmp_path, base_text):
    text = base_text.replace("version: 1", "version: 7")
    expect_error(tmp_path, text, line_of(text, "version:"), "version 7")


def test_traffic_street_ending_at_the_border(tmp_path, base_text):
    # drop the right border street: the horizontal streets' lanes run off the map
    text = base_text.replace("- {kind: traffic, orientation: vertical, at: [0, 46], length: 57, width: 11}\n", "")
    err = expect_error(tmp_path, text, line_of(text, "orientation: horizontal, at: [0, 0]"), "lane end")
    assert "must end at another traffic street" in err.message


def _two_towns_text() -> str:
    """Two 1x1 cities side by side with no road between them (both networks split)."""
    a = generate_city(3, (1, 1))
    streets = list(a.streets) + [Street(s.kind, s.orientation, s.row, s.col + 70, s.length, s.width)
                                 for s in a.streets]
    buildings = list(a.buildings) + [Building("House", b.row, b.col + 70, b.rows, b.cols, 2, b.height)
                                     for b in a.buildings]
    return dumps_map(derive_layers("two", 57, 127, streets, buildings))


def test_disconnected_lane_graph(tmp_path):
    text = _two_towns_text()
    err = expect_error(tmp_path, text, line_of(text, "horizontal, at: [0, 70]"), "lane graph is split into 2 parts")
    assert "unreachable" in err.message


def test_disconnected_walking_network(tmp_path):
    # a 1x2 city whose sidewalks stop at the middle traffic street: no crossing joins the two blocks
    city = generate_city(5, (1, 2), building_mix={"House": 1.0, "Store": 1.0})
    streets = []
    for s in city.streets:
        if s.kind == "walking" and s.orientation == "horizontal" and s.length > 40:
            streets.append(Street("walking", "horizontal", s.row, 11, 35, 5))
            streets.append(Street("walking", "horizontal", s.row, 57, 35, 5))
        else:
            streets.append(s)
    text = dumps_map(derive_layers("split", city.height, city.width, streets, city.buildings))
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_map(path)
    err = info.value
    assert err.file == str(path) and "walking network is split" in err.message
    line = text.splitlines()[err.line - 1]
    assert "kind: walking" in line  # located at a walking street of the cut-off part


def test_yaml_syntax_error_is_located(tmp_path, base_text):
    text = base_text.replace("size: [57, 57]", "size: [57, 57")
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_map(path)
    assert info.value.file == str(path) and info.value.line is not None


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_map(tmp_path / "nope.yaml")


# ---------------------------------------------------------------- reference importer errors
def test_reference_import_errors_are_located(reference_configs):
    text = REFERENCE_MAP.read_text(encoding="utf-8")
    bad = text.replace("type: Gas Station", "type: Gas Stat", 1)
    with pytest.raises(ConfigError) as info:
        reference_map_from_text(bad, "ref.yaml")
    assert info.value.file == "ref.yaml" and info.value.line == line_of(bad, "type: Gas Stat")
    bad = text.replace("type: Walking Street", "type: Footpath", 1)
    with pytest.raises(ConfigError) as info:
        reference_map_from_text(bad, "ref.yaml")
    assert info.value.line == line_of(bad, "type: Footpath")


def test_reference_width_zero_means_default(reference_configs):
    text = REFERENCE_MAP.read_text(encoding="utf-8")
    first = text.index("width: 11")
    city = reference_map_from_text(text[:first] + "width: 0" + text[first + len("width: 11"):], "ref.yaml")
    assert city.streets[0].width == 11
    same_city(city, reference_city())


def test_import_reference_map_from_path(reference_configs):
    city = import_reference_map(REFERENCE_MAP)
    assert DEFAULT_MAP.exists()
    same_city(city, default_city())


def test_traffic_street_ending_inside_another(tmp_path):
    city = generate_city(2, (2, 2))
    streets = [Street("traffic", "horizontal", 46, 0, 51, 11) if (s.kind, s.orientation, s.row) ==
               ("traffic", "horizontal", 46) else s for s in city.streets]
    text = dumps_map(derive_layers("t", city.height, city.width, streets, city.buildings))
    expect_error(tmp_path, text, line_of(text, "at: [46, 0], length: 51"), "ends inside or right beside traffic "
                 "street #3 (cols 46..56)")


def test_traffic_street_with_a_dead_end(tmp_path):
    city = generate_city(2, (2, 2))
    streets = [Street("traffic", "horizontal", 46, 0, 40, 11) if (s.kind, s.orientation, s.row) ==
               ("traffic", "horizontal", 46) else s for s in city.streets]
    text = dumps_map(derive_layers("t", city.height, city.width, streets, city.buildings))
    expect_error(tmp_path, text, line_of(text, "at: [46, 0], length: 40"), "lane end (53, 40)",
                 "must end at another traffic street")


def test_huge_map_is_refused_with_its_line():
    with pytest.raises(ConfigError) as err:
        loads_map("name: big\nsize: [100000, 100000]\nstreets: []\n", "big.yaml")
    assert "big.yaml:1" in str(err.value) and "too large" in str(err.value)


def test_type_errors_use_yaml_words_not_class_names():
    with pytest.raises(ConfigError) as err:
        loads_map("size: [10, 10]\nstreets: {a: 1}\n", "m.yaml")
    msg = str(err.value)
    assert "m.yaml:2" in msg and "a mapping" in msg and "Located" not in msg
