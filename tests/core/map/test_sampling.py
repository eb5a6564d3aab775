"""Start/goal sampling (docs/reference.md#start-and-goal-sampling): candidate counts, exclusion rules, reproducible
uniform picks."""
import numpy as np
import pytest

from core.base.codes import Kind
from core.base.errors import ConfigError
from core.map.generate import generate_city
from core.map.sampling import StartGoalSampler, map_widths
from tests.support.maps import generated, reference_city

P, C = Kind.PEDESTRIAN, Kind.CAR


@pytest.fixture(scope="module")
def city(reference_configs):
    return reference_city()


@pytest.mark.parametrize("variant,region,ped,car", [
    ("master", None, 2244, 980), ("master", 100, 352, 160), ("master", 120, 616, 220),
    ("vis", None, 2244, 520), ("vis", 100, 352, 100), ("vis", 120, 616, 120)])
def test_candidate_counts(city, variant, region, ped, car):
    s = StartGoalSampler(city, region, variant=variant)
    assert (s.candidates(P).sum(), s.candidates(C).sum()) == (ped, car)
    assert len(s.candidate_cells(P)) == ped


def test_vis_permitted_mask_has_only_eastbound_and_southbound_lanes(city):
    assert city.lane_graph.lane_cells(headings=((0, 1), (1, 0))).sum() == 1620


def _shifted(mask: np.ndarray, dr: int, dc: int) -> np.ndarray:
    """``out[r, c] = mask[r + dr, c + dc]`` (False outside the map)."""
    h, w = mask.shape
    out = np.zeros_like(mask)
    out[max(-dr, 0):h - max(dr, 0), max(-dc, 0):w - max(dc, 0)] = \
        mask[max(dr, 0):h - max(-dr, 0), max(dc, 0):w - max(-dc, 0)]
    return out


def _brute_candidates(city, kind, reach):
    """Independent definition of the candidate sets by explicit neighbourhood shifts."""
    if kind is P:
        target = np.isin(city.building, (3, 5))
        hit = np.zeros_like(target)
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                hit |= _shifted(target, dr, dc)
        return (city.street == 1) & hit
    target = np.isin(city.building, (4, 6, 7))
    hit = np.zeros_like(target)
    for d in range(-reach, reach + 1):
        hit |= _shifted(target, d, 0) | _shifted(target, 0, d)
    return (city.street == 2) & hit


def test_candidates_match_brute_force_definition(city):
    s = StartGoalSampler(city)
    assert np.array_equal(s.candidates(P), _brute_candidates(city, P, 0))
    assert np.array_equal(s.candidates(C), _brute_candidates(city, C, 6))
    # master car candidates sit on the curb rows/columns (offset 0 or 10 inside an 11-wide band)
    rows = set((np.argwhere(s.candidates(C))[:, 0] % 46).tolist()) | set(
        (np.argwhere(s.candidates(C))[:, 1] % 46).tolist())
    assert rows <= {0, 10} | set(range(11, 46))


def test_picks_are_uniform_row_major_and_reproducible(city):
    s = StartGoalSampler(city, 120)
    cells = s.candidate_cells(C)
    assert np.array_equal(cells, np.argwhere(s.candidates(C)))
    a, b = np.random.default_rng(42), np.random.default_rng(42)
    for _ in range(20):
        start = s.sample_start(C, a)
        assert start == tuple(int(v) for v in cells[int(b.integers(len(cells)))])
        goal = s.sample_goal(C, start, a)
        goal_cells = np.argwhere(s.goal_candidates(C, start))
        assert goal == tuple(int(v) for v in goal_cells[int(b.integers(len(goal_cells)))])


def test_nearest_block_matches_brute_force(city):
    s = StartGoalSampler(city)
    cells = np.argwhere(city.block > 0)
    for p in [(13, 13), (28, 28), (46, 25), (120, 3), (240, 240), (44, 44)]:
        d = np.abs(cells - np.asarray(p)).sum(axis=1)
        r, c = cells[int(np.argmin(d))]
        assert s.nearest_block(p) == city.block[r, c]


@pytest.mark.parametrize("kind,reach", [(P, 3), (C, 5)])
def test_goals_exclude_the_dilated_nearest_block(city, kind, reach):
    s = StartGoalSampler(city, 120)
    rng = np.random.default_rng(0)
    for _ in range(30):
        start = s.sample_start(kind, rng)
        block = s.nearest_block(start)
        rows, cols = np.nonzero(city.block == block)
        near = np.zeros(city.shape, bool)
        near[rows.min() - reach:rows.max() + reach + 1, cols.min() - reach:cols.max() + reach + 1] = True
        mask = s.goal_candidates(kind, start)
        expected = s.candidates(kind) & ~near
        if kind is C:
            expected[start] = False
        assert np.array_equal(mask, expected)
        goal = s.sample_goal(kind, start, rng)
        assert mask[goal] and goal != start and goal[0] < 120 and goal[1] < 120
    assert s.car_exclude_reach == 5 and s.ped_exclude_reach == 3


def test_resample_uses_remembered_mask_without_vis_lane_restriction(city):
    s = StartGoalSampler(city, None, variant="vis")
    start = (10, 39)
    first = s.goal_candidates(C, start)
    again = s.goal_candidates(C, start, resample=True)
    assert first.sum() < again.sum()
    assert not (first & ~again).any()  # the initial (lane-restricted) goals are a subset
    # re-sampling: the 19x19-kernel candidates (not only lane cells) minus the start's dilated block
    assert np.array_equal(again, _brute_candidates(city, C, 9) & ~s.excluded(C, start))
    goal = s.resample_goal(C, start, np.random.default_rng(1))
    assert again[goal]


def test_one_block_city_falls_back_to_any_other_candidate():
    city = generate_city(3, (1, 1))
    s = StartGoalSampler(city)
    rng = np.random.default_rng(0)
    for _ in range(10):
        start = s.sample_start(P, rng)
        assert not s.goal_candidates(P, start).any()   # the reference rule leaves nothing
        goal = s.sample_goal(P, start, rng)
        assert goal != start and s.candidates(P)[goal]
        assert s.resample_goal(P, goal, rng) != goal


def test_no_candidates_is_a_clear_error():
    city = generate_city(0, (2, 2), building_mix={"Store": 1.0})
    s = StartGoalSampler(city)
    with pytest.raises(ConfigError, match="no start cells for pedestrians"):
        s.sample_start(P, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="agent_region 3"):
        StartGoalSampler(city, 3).sample_start(C, np.random.default_rng(0))


def test_kernels_generalise_to_other_widths():
    city = generated(0, (3, 3), 20, 7, 3)
    assert map_widths(city) == (3, 7)
    s = StartGoalSampler(city)
    assert (s.car_reach, s.ped_exclude_reach, s.car_exclude_reach) == (4, 2, 3)
    pitch = 7 + 2 * 3 + 20
    offsets = set()
    for r, c in np.argwhere(s.candidates(C)):
        in_h = (r % pitch) < 7
        in_v = (c % pitch) < 7
        offsets.add(int(r % pitch) if in_h and not in_v else int(c % pitch))
    assert offsets == {0, 6}  # only the curb rows/columns of 7-wide streets
    assert np.array_equal(s.candidates(P), _brute_candidates(city, P, 0))


def test_bad_variant(city):
    with pytest.raises(ValueError):
        StartGoalSampler(city, variant="other")
