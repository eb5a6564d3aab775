"""Map numbers beyond what the layer arrays hold: a building block id beyond the int16 block layer is a located
ConfigError (not an OverflowError), and the generator refuses a city larger than the map limit before building
anything."""
from __future__ import annotations

import pytest

from core.base.errors import ConfigError
from core.map.generate import generate_city
from core.map.io import loads_map
from core.map.validate import MAX_BLOCK_ID, MAX_MAP_SIDE
from tests.support.paths import ROOT

MAP_TEXT = (ROOT / "configs" / "maps" / "default.yaml").read_text()
FIRST = "- {type: Office, block: 1, at: [16, 16]"


@pytest.mark.parametrize("block", [40000, MAX_BLOCK_ID + 1, 10**30, 0, -3])
def test_block_ids_outside_the_layer_range(block):
    line = next(i for i, t in enumerate(MAP_TEXT.splitlines(), 1) if t.startswith(FIRST))
    text = MAP_TEXT.replace(FIRST, FIRST.replace("block: 1", f"block: {block}"), 1)
    with pytest.raises(ConfigError) as err:
        loads_map(text, "city.yaml")
    assert (err.value.file, err.value.line) == ("city.yaml", line)
    assert f"block id must be an integer 1..{MAX_BLOCK_ID}, got {block}" in err.value.message


def test_the_largest_block_id_is_accepted():
    text = MAP_TEXT.replace("block: 1,", f"block: {MAX_BLOCK_ID},")
    city = loads_map(text, "city.yaml")
    assert int(city.block.max()) == MAX_BLOCK_ID


@pytest.mark.parametrize("blocks, words", [((10**6, 10**6), "per side"), ((3, 10**9), "per side"),
                                           ((600, 600), "per side")])
def test_generator_refuses_oversized_cities_at_once(blocks, words):
    with pytest.raises(ValueError, match=words) as err:
        generate_city(1, blocks=blocks, block_size=2, traffic_width=3, walking_width=1)
    assert str(MAX_MAP_SIDE) in str(err.value)


def test_generator_refuses_more_blocks_than_block_ids():
    with pytest.raises(ValueError, match="block ids"):
        generate_city(1, blocks=(190, 190), block_size=2, traffic_width=3, walking_width=1, lot_size=2)
