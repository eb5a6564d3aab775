"""Derived layers of an edited city (core/map/derived.py): the builder's result equals derive_layers of the same
specification after every kind of edit, and it reuses exactly what an edit cannot change."""
from __future__ import annotations

import numpy as np
import pytest

from core.map.derived import CityBuilder
from core.map.edit import CityDraft, plan_rect, plan_stroke
from core.map.generate import generate_city
from core.map.layers import derive_layers


def _same(a, b):
    for k in ("street", "building", "block", "midline", "intersections"):
        x, y = getattr(a, k), getattr(b, k)
        assert x.dtype == y.dtype and np.array_equal(x, y), k
    assert a.streets == b.streets and a.buildings == b.buildings and a.shape == b.shape
    assert [j.box for j in a.junctions] == [j.box for j in b.junctions]


@pytest.fixture
def draft():
    return CityDraft.from_city(generate_city(2, blocks=(2, 3)))


EDITS = [
    ("House", [(13, 40)], 3), ("walking", [(30, 30), (30, 44)], 2), ("traffic", [(60, 25), (60, 44)], 3),
    ("empty", [(5, 5), (5, 30)], 4), ("crossing", [(50, 20)], 3), ("Garage", [(20, 20), (40, 20)], 1),
]


@pytest.mark.parametrize("kind,points,size", EDITS)
def test_the_builder_equals_a_full_derivation_after_each_edit(draft, kind, points, size):
    b = CityBuilder()
    b.build(draft)
    draft.apply(plan_stroke(draft, points, kind, size))
    city = b.build(draft)
    streets, buildings = draft.to_spec()
    _same(city, derive_layers(draft.name, *draft.shape, streets, buildings))


def test_building_edits_reuse_the_street_stage_and_lane_graph(draft):
    b = CityBuilder()
    first = b.build(draft)
    lanes = first.lane_graph
    r, c = np.argwhere(draft.building_codes() > 0)[0]
    draft.apply(plan_rect(draft, (int(r), int(c)), (int(r) + 1, int(c) + 1), "Office"))
    second = b.build(draft)
    assert b.stats.street_stage and not b.stats.buildings and b.stats.lane_graph
    assert second.lane_graph is lanes
    draft.apply(plan_rect(draft, (0, 0), (0, 0), "empty"))       # a traffic cell: streets change
    third = b.build(draft)
    assert not b.stats.street_stage
    assert "lane_graph" not in third.__dict__ or third.lane_graph is not lanes


def test_nothing_changed_reuses_everything(draft):
    b = CityBuilder()
    b.build(draft)
    b.build(draft)
    assert b.stats.street_stage and b.stats.buildings
