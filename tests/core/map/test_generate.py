"""Procedural cities: reference geometry by default, valid and routable for many seeds, sizes and widths."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.base.codes import Kind
from core.map.generate import REFERENCE_MIX, generate_city, lot_sizes
from core.map.sampling import StartGoalSampler
from core.map.validate import validate_city
from core.map.walking import walk_path
from tests.support.maps import reference_city


def test_default_parameters_reproduce_reference_geometry(reference_configs):
    ref = reference_city()
    city = generate_city(0)
    assert city.shape == ref.shape and city.streets == ref.streets
    assert [(b.row, b.col, b.rows, b.cols, b.block) for b in city.buildings] == \
        [(b.row, b.col, b.rows, b.cols, b.block) for b in ref.buildings]
    for name in ("street", "block", "midline", "intersections"):
        assert np.array_equal(getattr(city, name), getattr(ref, name)), name
    assert np.array_equal(city.building > 0, ref.building > 0)
    assert {b.kind for b in city.buildings} <= set(REFERENCE_MIX)


def test_same_seed_same_city_other_seed_other_types():
    a, b, c = generate_city(11, (3, 4)), generate_city(11, (3, 4)), generate_city(12, (3, 4))
    assert a.streets == b.streets and a.buildings == b.buildings
    assert [x.kind for x in a.buildings] != [x.kind for x in c.buildings]


def test_building_mix_is_respected():
    city = generate_city(1, (6, 6), building_mix={"House": 0.5, "Store": 0.5})
    kinds = [b.kind for b in city.buildings]
    assert set(kinds) == {"House", "Store"}
    assert 0.35 < kinds.count("House") / len(kinds) < 0.65


def test_lot_sizes():
    assert lot_sizes(25, 5, 10) == [10, 10]
    assert lot_sizes(40, 5, 10) == [10, 10, 10]
    assert lot_sizes(30, 5, 10) == [13, 12]
    assert lot_sizes(9, 5, 10) == [9]
    city = generate_city(0, (1, 1), block_size=40)
    assert len(city.buildings) == 9


@pytest.mark.parametrize("kwargs", [dict(blocks=(0, 2)), dict(block_size=1), dict(traffic_width=10),
                                    dict(traffic_width=1), dict(walking_width=0),
                                    dict(building_mix={"Castle": 1.0}), dict(building_mix={"House": 0.0})])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        generate_city(0, **kwargs)


def _trip_checks(city, seed: int, trips: int = 12) -> None:
    sampler = StartGoalSampler(city)
    rng = np.random.default_rng(seed)
    lanes = city.lane_graph
    for kind in (Kind.CAR, Kind.PEDESTRIAN):
        if len(city.buildings) == 1 and not len(sampler.candidate_cells(kind)):
            continue  # one lot cannot host both a pedestrian and a car destination
        for _ in range(trips):
            start = sampler.sample_start(kind, rng)
            goal = sampler.sample_goal(kind, start, rng)
            path = lanes.route(start, goal) if kind is Kind.CAR else walk_path(city, start, goal)
            ok = city.drivable if kind is Kind.CAR else city.walkable
            assert tuple(path[0]) == start and tuple(path[-1]) == goal
            assert (np.abs(np.diff(path, axis=0)).sum(axis=1) == 1).all()
            assert ok[path[:, 0], path[:, 1]].all()


@pytest.mark.parametrize("blocks,block_size,tw,ww", [
    ((1, 1), 25, 11, 5), ((2, 3), 25, 11, 5), ((8, 8), 25, 11, 5), ((3, 2), 40, 7, 3), ((2, 2), 10, 5, 2),
    ((1, 3), 4, 3, 1), ((2, 2), (12, 30), 9, 4), ((3, 1), 25, 13, 6)])
def test_generated_cities_are_valid_and_routable(blocks, block_size, tw, ww):
    for seed in range(3):
        city = generate_city(seed, blocks, block_size, tw, ww)
        validate_city(city)
        _trip_checks(city, seed, trips=8 if blocks == (8, 8) else 12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(1, 4), cols=st.integers(1, 4),
       bs=st.integers(3, 30), half=st.integers(1, 7), ww=st.integers(1, 6))
def test_random_generation_parameters(seed, rows, cols, bs, half, ww):
    city = generate_city(seed, (rows, cols), bs, 2 * half + 1, ww)
    sampler = StartGoalSampler(city)
    assert len(sampler.candidate_cells(Kind.CAR)) or len(sampler.candidate_cells(Kind.PEDESTRIAN))
    assert city.intersections.max() == (rows - 1) * (cols - 1) + 2 * (rows - 1) + 2 * (cols - 1)
    _trip_checks(city, seed, trips=3)
