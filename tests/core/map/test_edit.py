"""City editor tools on the raster draft (core/map/edit.py), without Qt: each tool's cells, the specification found
from the cells, and patches that undo exactly."""
from __future__ import annotations

import numpy as np
import pytest

from core.base.codes import BUILDING_CODES, STREET_OVERLAP, STREET_TRAFFIC, STREET_WALKING
from core.map.edit import (
    CityDraft,
    Patch,
    block_rect,
    brush_offsets,
    pick,
    plan_move,
    plan_rect,
    plan_stroke,
    resized,
    stroke_cells,
)
from core.map.generate import generate_city
from core.map.layers import derive_layers


@pytest.fixture(scope="module")
def city():
    return generate_city(0, blocks=(2, 2))


@pytest.fixture
def draft(city):
    return CityDraft.from_city(city)


def _derive(d: CityDraft):
    streets, buildings = d.to_spec()
    return derive_layers(d.name, *d.shape, streets, buildings)


def test_a_city_round_trips_through_the_draft_layer_for_layer(city, draft):
    again = _derive(draft)
    for k in ("street", "building", "block", "midline", "intersections"):
        assert np.array_equal(getattr(city, k), getattr(again, k)), k
    assert [(b.kind, b.block, b.height) for b in sorted(city.buildings, key=lambda b: (b.row, b.col))] == \
        [(b.kind, b.block, b.height) for b in sorted(again.buildings, key=lambda b: (b.row, b.col))]
    # and the specification found from the cells is a fixed point
    assert CityDraft.from_city(again).to_spec() == draft.to_spec()


def test_brush_and_stroke_cells():
    assert brush_offsets(1) == (0, 0) and brush_offsets(3) == (1, 1) and brush_offsets(4) == (1, 2)
    cells = stroke_cells([(0, 0), (0, 4), (3, 4)])
    assert [tuple(c) for c in cells] == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 4), (2, 4), (3, 4)]


def test_paint_a_house_with_a_brush_replaces_the_sidewalk(draft):
    # a sidewalk cell of the first block (traffic 11 wide, then 5 of sidewalk)
    p = plan_stroke(draft, [(13, 40)], "House", size=3)
    assert p.rect == (12, 39, 14, 41)
    draft.apply(p)
    c = _derive(draft)
    assert (c.building[12:15, 39:42] == BUILDING_CODES["House"]).all()
    assert (c.street[12:15, 39:42] == 0).all()
    blocks = set(np.unique(c.block[12:15, 39:42]).tolist())
    assert len(blocks) == 1 and blocks != {0}      # painted buildings join their city block's id


def test_traffic_takes_the_stroke_direction_and_crossing_needs_traffic(draft):
    p = plan_stroke(draft, [(30, 30), (30, 40)], "traffic", size=3)
    draft.apply(p)
    walk, th, tv = draft.masks()
    assert th[29:32, 30:41].all() and not tv[29:32, 30:41].any() and not walk[29:32, 30:41].any()
    p = plan_stroke(draft, [(25, 35), (35, 35)], "traffic", size=3)
    draft.apply(p)
    walk, th, tv = draft.masks()
    assert (th & tv)[29:32, 34:37].all()             # painted across: an intersection
    p = plan_stroke(draft, [(30, 30)], "crossing", size=1)
    draft.apply(p)
    assert _derive(draft).street[30, 30] == STREET_OVERLAP
    before = draft.cells.copy()
    r, c = np.argwhere(draft.building_codes() > 0)[0]
    p = plan_stroke(draft, [(int(r), int(c))], "crossing", size=1)      # on a building: nothing to mark
    assert not p.changed and np.array_equal(draft.cells, before)


def test_rectangle_fill_erase_and_eyedropper(draft, city):
    p = plan_rect(draft, (60, 60), (41, 41), "walking")
    assert p.rect == (41, 41, 60, 60)
    draft.apply(p)
    assert pick(draft, 50, 50) == "walking"
    assert _derive(draft).street[41:61, 41:61].tolist() == np.full((20, 20), STREET_WALKING).tolist()
    draft.apply(plan_rect(draft, (41, 41), (60, 60), "empty"))
    assert (draft.cells[41:61, 41:61] == 0).all()
    assert pick(draft, 5, 30) in ("traffic_h", "traffic_v")
    assert pick(draft, 5, 5) == "traffic_h"          # the corner square: both orientations, shown as traffic
    assert pick(draft, 500, 5) is None
    b = city.buildings[0]
    assert pick(draft, b.row, b.col) == b.kind


def test_patches_undo_exactly_and_merge(draft):
    orig = draft.cells.copy()
    a = plan_stroke(draft, [(13, 20), (13, 30)], "Store", size=1)
    draft.apply(a)
    b = plan_stroke(draft, [(13, 28), (20, 28)], "empty", size=2)
    draft.apply(b)
    after = draft.cells.copy()
    m = a.merged(b)
    draft.apply(m, undo=True)
    assert np.array_equal(draft.cells, orig)
    draft.apply(m)
    assert np.array_equal(draft.cells, after)
    assert isinstance(m, Patch) and m.changed


def test_block_selection_and_move(draft, city):
    b = city.buildings[0]
    rect = block_rect(draft, b.row, b.col)
    top, left, bottom, right = rect
    assert top <= b.row <= bottom and left <= b.col <= right
    assert block_rect(draft, 5, 5) is None            # on a traffic street: no block
    content = draft.cells[top:bottom + 1, left:right + 1].copy()
    p = plan_move(draft, rect, 0, 3)
    draft.apply(p)
    assert np.array_equal(draft.cells[top:bottom + 1, left + 3:right + 4], content)
    assert (draft.cells[top:bottom + 1, left:left + 3] == 0).all()
    draft.apply(p, undo=True)
    assert np.array_equal(draft.cells[top:bottom + 1, left:right + 1], content)
    assert plan_move(draft, rect, 0, 0) is None


def test_resize_canvas_keeps_cells_at_the_anchor(draft):
    big = resized(draft, draft.shape[0] + 10, draft.shape[1] + 4, anchor=(5, 2))
    assert big.shape == (draft.shape[0] + 10, draft.shape[1] + 4)
    assert np.array_equal(big.cells[5:5 + draft.shape[0], 2:2 + draft.shape[1]], draft.cells)
    assert (big.cells[:5] == 0).all()
    small = resized(draft, 20, 30)
    assert np.array_equal(small.cells, draft.cells[:20, :30])
    with pytest.raises(ValueError):
        resized(draft, 0, 5)


def test_unknown_kind_is_refused(draft):
    with pytest.raises(ValueError, match="unknown paint kind"):
        plan_stroke(draft, [(1, 1)], "Castle")


def test_street_kinds_in_the_draft_give_the_documented_codes(draft):
    draft.apply(plan_rect(draft, (41, 41), (45, 45), "traffic_v"))
    assert _derive(draft).street[43, 41] in (STREET_TRAFFIC, 2.5)
