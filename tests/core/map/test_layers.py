"""Derived layers (docs/reference.md#maps-and-layers): exact reference numbers and geometry, and the general
algorithm's invariants."""
import random

import numpy as np
import pytest
from scipy import ndimage

from core.map.lanes import midline_segments
from core.map.layers import derive_layers
from tests.support.maps import generated, histogram, reference_city


@pytest.fixture(scope="module")
def city(reference_configs):
    return reference_city()


def test_size_and_static_histograms(city):
    assert city.shape == (241, 241)
    assert histogram(city.street) == {-1.0: 4400, 0.0: 10000, 1.0: 20625, 2.0: 21556, 2.5: 1500}
    assert histogram(city.building) == {0: 48081, 3: 2400, 4: 500, 5: 2700, 6: 1200, 7: 3200}
    blocks = histogram(city.block)
    assert blocks.pop(0) == 241 * 241 - 10000
    assert blocks == {k: 400 for k in range(1, 26)}


def test_midlines(city):
    assert city.midline.sum() == 1500
    assert np.array_equal(city.midline, city.street == 2.5)
    rows = sorted(set(np.argwhere(city.midline)[:, 0].tolist()) & {5, 51, 97, 143, 189, 235})
    assert rows == [5, 51, 97, 143, 189, 235]
    segs = midline_segments(city.midline)
    assert len(segs) == 60
    lengths = {abs(e[0] - s[0]) + abs(e[1] - s[1]) + 1 for s, e in segs}
    assert lengths == {25}
    # horizontal ones first (row-major), then vertical ones (column-major)
    assert segs[0] == ((5, 16), (5, 40)) and segs[29] == ((235, 200), (235, 224))
    assert segs[30] == ((16, 5), (40, 5)) and segs[31] == ((62, 5), (86, 5))
    # every midline cell is the centre line of a traffic street, never inside a junction square
    for j in city.junctions:
        t, b, l, r = j.box
        assert not city.midline[t:b + 1, l:r + 1].any()


def test_intersection_counts(city):
    inter = city.intersections
    assert inter.shape == (3, 241, 241)
    assert [(inter[k] > 0).sum() for k in range(3)] == [800, 1616, 10816]
    assert [ndimage.label(inter[k] > 0)[1] for k in range(3)] == [80, 32, 32]
    assert inter.max() == 32 and set(np.unique(inter).tolist()) == set(range(33))
    four_way = [j for j in city.junctions if len(j.lines) == 4]
    tees = [j for j in city.junctions if len(j.lines) == 1]
    corners = [j for j in city.junctions if not j.lines]
    assert (len(four_way), len(tees), len(corners)) == (16, 16, 4)
    for j in four_way + tees:
        n = 4 if len(j.lines) == 4 else 1
        assert ((inter[0] == j.label).sum(), (inter[1] == j.label).sum(), (inter[2] == j.label).sum()) == \
            ((40, 80, 361) if n == 4 else (10, 21, 315))


def test_labels_follow_scipy_raster_order(city):
    inter = city.intersections
    lab, n = ndimage.label((inter[1] > 0) | (inter[2] > 0))
    assert n == 32
    assert np.array_equal(lab, np.maximum(inter[1], inter[2]))


def test_label_6_four_way_geometry(city):
    inter = city.intersections
    box = np.zeros((241, 241), bool)
    box[41:62, 41:62] = True
    ring = box.copy()
    ring[42:61, 42:61] = False
    assert np.array_equal(inter[1] == 6, ring)
    inner = np.zeros_like(box)
    inner[42:61, 42:61] = True
    assert np.array_equal(inter[2] == 6, inner)
    car = np.zeros_like(box)
    car[41, 41:51] = True      # top: southbound arrivals (lane col 49)
    car[52:62, 41] = True      # left: eastbound arrivals (lane row 53)
    car[61, 52:62] = True      # bottom: northbound arrivals (lane col 53)
    car[41:51, 61] = True      # right: westbound arrivals (lane row 49)
    assert np.array_equal(inter[0] == 6, car)
    assert ((inter[0] > 0) <= (inter[1] > 0)).all()  # car lines lie on pedestrian lines


def test_top_border_t_junction_geometry(city):
    inter = city.intersections
    line = np.zeros((241, 241), bool)
    line[15, 41:62] = True
    assert np.array_equal(inter[1] == 1, line)
    half = np.zeros_like(line)
    half[15, 52:62] = True
    assert np.array_equal(inter[0] == 1, half)
    box = np.zeros_like(line)
    box[0:15, 41:62] = True
    assert np.array_equal(inter[2] == 1, box)
    # nothing marks cars driving along the border street: no line across it at the T-junction
    assert not inter[1][0:15, 41].any() and not inter[1][0:15, 61].any()


def test_map_corners_are_not_intersections(city):
    corners = [j for j in city.junctions if not j.lines]
    assert sorted(j.box for j in corners) == [(0, 15, 0, 15), (0, 15, 225, 240), (225, 240, 0, 15),
                                             (225, 240, 225, 240)]
    for j in corners:
        t, b, l, r = j.box
        assert j.label == 0 and not city.intersections[:, t:b + 1, l:r + 1].any()


def test_painting_is_order_independent(city):
    streets = list(city.streets)
    random.Random(4).shuffle(streets)
    other = derive_layers("x", 241, 241, streets, list(reversed(city.buildings)))
    for name in ("street", "building", "block", "midline", "intersections"):
        assert np.array_equal(getattr(other, name), getattr(city, name)), name


@pytest.mark.parametrize("blocks,bs,tw,ww", [((1, 1), 25, 11, 5), ((2, 3), 25, 11, 5), ((3, 2), 40, 7, 3),
                                              ((2, 2), 10, 5, 2), ((1, 3), 4, 3, 1), ((4, 4), 25, 13, 6)])
def test_general_maps_have_consistent_junctions(blocks, bs, tw, ww):
    city = generated(1, blocks, bs, tw, ww)
    rows, cols = blocks
    inter = city.intersections
    n4 = (rows - 1) * (cols - 1)
    nt = 2 * (rows - 1) + 2 * (cols - 1)
    assert inter.max() == n4 + nt
    assert ndimage.label(inter[2] > 0)[1] == n4 + nt
    assert ndimage.label(inter[0] > 0)[1] == 4 * n4 + nt
    assert sum(1 for j in city.junctions if not j.lines) == 4
    # car lines are halves of pedestrian lines; lines are never inside boxes
    assert ((inter[0] > 0) <= (inter[1] > 0)).all()
    assert not ((inter[1] > 0) & (inter[2] > 0)).any()
    # midline: centre rows of the traffic streets, one segment per block side
    assert len(midline_segments(city.midline)) == rows * (cols + 1) + cols * (rows + 1)
    pitch = tw + 2 * ww + bs
    assert set(np.argwhere(city.midline)[:, 0].tolist()) >= {k * pitch + tw // 2 for k in range(rows + 1)}
    # pedestrian at-lines lie on walkable cells (sidewalk rows next to the blocks)
    assert city.walkable[inter[1] > 0].all()


def test_interior_t_junction_where_a_street_stops():
    """A traffic street that stops at another (overlapping its full width) makes an interior T-junction."""
    from core.map.spec import Street
    from core.map.validate import validate_city

    base = generated(2, (2, 2))
    streets = [Street("traffic", "horizontal", 46, 0, 57, 11) if (s.kind, s.orientation, s.row) ==
               ("traffic", "horizontal", 46) else s for s in base.streets]
    city = derive_layers("t", base.height, base.width, streets, base.buildings)
    validate_city(city)
    j = next(j for j in city.junctions if j.crossing == (46, 56, 46, 56))
    assert j.lines == ("up", "down", "left") and j.box == (41, 61, 41, 61)
    inter = city.intersections
    assert (inter[1] == j.label).sum() == 3 * 21 - 2 and (inter[0] == j.label).sum() == 30
    # the right-hand blocks merged into one region: no mid lane where the street used to be
    assert not city.midline[51, 57:92].any() and city.midline[16:87, 97].all()
