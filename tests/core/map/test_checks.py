"""Live city validation (core/map/checks.py): every rule of docs/city-editor.md "Validation" on a city built to
break it, with the cells involved; a generated city has no finding."""
from __future__ import annotations

import numpy as np
import pytest

from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind
from core.map.checks import city_findings
from core.map.derived import CityBuilder
from core.map.edit import CityDraft, plan_rect
from core.map.generate import generate_city


@pytest.fixture(scope="module")
def base():
    return generate_city(0, blocks=(2, 2))


def _edit(base, *rects):
    d = CityDraft.from_city(base)
    for a, b, kind in rects:
        d.apply(plan_rect(d, a, b, kind))
    return CityBuilder().build(d)


def _codes(city, agents=None):
    return {f.code: f for f in city_findings(city, agents)}


def test_a_generated_city_has_no_finding(base):
    assert city_findings(base) == []


def test_a_street_ending_in_nothing_is_an_error_on_its_cells(base):
    # cut the middle horizontal traffic street (rows 46..56) between two junctions
    city = _edit(base, ((46, 70), (56, 75), "empty"))
    found = city_findings(city)
    errors = [f for f in found if f.is_error]
    assert errors and errors[0].code in ("lane-geometry", "dead-end-lane")
    assert errors[0].cells and all(46 <= r <= 56 for r, _ in errors[0].cells)


def test_even_traffic_width_is_an_error(base):
    city = _edit(base, ((46, 20), (46, 40), "empty"))        # the street is now 10 wide between 20 and 40
    f = _codes(city)["traffic-width"]
    assert f.is_error and "10 cells wide" in f.message and (50, 30) in f.cells


def test_a_split_lane_graph_is_reported(base):
    # a separate ring road in an empty corner of the map would not connect: build a tiny city of two loops
    d = CityDraft(np.zeros((60, 130), np.int64))
    for r0, c0 in ((0, 0), (0, 70)):
        d.apply(plan_rect(d, (r0, c0), (r0 + 4, c0 + 59), "traffic_h"))
        d.apply(plan_rect(d, (r0 + 55, c0), (r0 + 59, c0 + 59), "traffic_h"))
        d.apply(plan_rect(d, (r0, c0), (r0 + 59, c0 + 4), "traffic_v"))
        d.apply(plan_rect(d, (r0, c0 + 55), (r0 + 59, c0 + 59), "traffic_v"))
        d.apply(plan_rect(d, (r0 + 5, c0 + 5), (r0 + 54, c0 + 54), "Store"))
    city = CityBuilder().build(d)
    codes = _codes(city)
    assert codes["lane-graph-split"].is_error and codes["lane-graph-split"].cells


def test_isolated_walking_and_unreachable_buildings_are_warnings(base):
    b = base.buildings[0]
    # a walking patch inside a building lot, surrounded by the building: isolated
    city = _edit(base, ((b.row + 2, b.col + 2), (b.row + 3, b.col + 3), "walking"))
    codes = _codes(city)
    assert codes["isolated-walking"].severity == "warning"
    assert (b.row + 2, b.col + 2) in codes["isolated-walking"].cells
    # a Store in the middle of a big lot, far from any traffic: never a car goal
    city = _edit(base, ((13, 13), (40, 40), "House"), ((25, 25), (27, 27), "Store"))
    f = _codes(city)["building-unreachable-car"]
    assert f.severity == "warning" and (26, 26) in f.cells


def test_no_start_cells_for_an_agent_type(base):
    d = CityDraft.from_city(base)
    for kind in ("House", "Office"):
        d.cells[d.building_codes() == {"House": 3, "Office": 5}[kind]] = 7 << 3   # every House/Office -> Store
    city = CityBuilder().build(d)
    agents = AgentSet((AgentSpec(Kind.PEDESTRIAN, 1, 1), AgentSpec(Kind.CAR, 1, 1)))
    f = _codes(city, agents)["no-start-cells"]
    assert f.is_error and "pedestrians" in f.message
    assert "no-start-cells" not in _codes(city, AgentSet((AgentSpec(Kind.CAR, 1, 1),)))


def test_a_paved_block_is_an_error(base):
    city = _edit(base, ((11, 11), (45, 45), "walking"))
    assert _codes(city)["paved-block"].is_error
