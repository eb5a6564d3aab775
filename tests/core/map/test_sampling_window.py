"""Goal exclusion dilates only a window around the start's nearest block; it must equal the whole-map dilation
(scipy, square kernel) for every block and both reaches, including blocks at the map border."""
import numpy as np
import pytest
from scipy import ndimage

from core.base.codes import Kind
from core.map.sampling import StartGoalSampler
from tests.support.maps import generated


@pytest.mark.parametrize("seed,blocks", [(4, (3, 3)), (42, (4, 5))])
def test_window_equals_whole_map_dilation(seed, blocks):
    city = generated(seed, blocks)
    s = StartGoalSampler(city)
    cells = np.argwhere(city.block > 0)
    seen = set()
    for r, c in cells[:: max(1, len(cells) // 400)]:
        for kind in (Kind.PEDESTRIAN, Kind.CAR):
            block = s.nearest_block((r, c))
            reach = s.car_exclude_reach if kind is Kind.CAR else s.ped_exclude_reach
            size = 2 * reach + 1
            whole = ndimage.binary_dilation(city.block == block, structure=np.ones((size, size), bool))
            assert np.array_equal(s.excluded(kind, (r, c)), whole), (block, reach)
            seen.add(block)
    assert len(seen) == int(city.block.max())  # every block checked


def test_goal_draws_unchanged_by_the_window():
    """Goal picks filter the same candidate list as the whole-map mask would, so the draws are the same."""
    city = generated(4, (3, 3))
    s = StartGoalSampler(city)
    rng_a, rng_b = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(60):
        for kind in (Kind.PEDESTRIAN, Kind.CAR):
            start = s.sample_start(kind, rng_a)
            assert start == s.sample_start(kind, rng_b)
            goal = s.sample_goal(kind, start, rng_a)
            cells = np.argwhere(s.goal_candidates(kind, start))
            assert goal == tuple(int(v) for v in cells[int(rng_b.integers(len(cells)))])
