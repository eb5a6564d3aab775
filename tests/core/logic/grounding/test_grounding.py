"""Grounding of the 17 predicates on hand-built scenes (docs/reference.md#grounding-predicates), incl. edge cases."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core.base.codes import Heading, Kind
from core.logic.grounding.grounder import Grounder
from core.logic.grounding.spatial import box_members
from tests.support.logic import CAR, PED, D, L, N, R, U, blank_city, ground, ontology, snap


# -- field of view and in-view ------------------------------------------------------------------------------------
@pytest.mark.parametrize("heading,box", [
    (N, (5, 55, 5, 55)), (L, (5, 55, 5, 31)), (R, (5, 55, 28, 55)), (U, (5, 31, 5, 55)), (D, (28, 55, 5, 55)),
])
def test_fov_box_per_heading(heading, box):
    g = Grounder(blank_city(), ontology("full"))
    assert tuple(g.fov_boxes(np.array([[30, 30]]), np.array([heading]))[0]) == box


def test_fov_box_clipped_to_map():
    g = Grounder(blank_city(), ontology("full"))
    assert tuple(g.fov_boxes(np.array([[2, 58]]), np.array([N]))[0]) == (0, 27, 33, 59)
    assert tuple(g.fov_boxes(np.array([[59, 0]]), np.array([D]))[0]) == (57, 59, 0, 25)


@pytest.mark.parametrize("heading,inside,outside", [
    (R, (30, 28), (30, 27)),   # 2 cells behind when moving Right
    (L, (30, 31), (30, 32)),   # 1 cell behind when moving Left
    (U, (31, 30), (32, 30)),   # 1 behind moving Up
    (D, (28, 30), (27, 30)),   # 2 behind moving Down
    (N, (5, 55), (4, 55)),     # forward reach 25 in every direction
])
def test_in_view_boundaries(heading, inside, outside):
    g = ground([(CAR, (30, 30), heading, 1, []), (PED, inside, N, 0, []), (PED, outside, N, 0, [])])
    assert g.entities(0).tolist() == [0, 1]


def test_entities_ego_first_then_ascending_and_view_limits():
    agents = [(PED, (30, 30 + i), N, 0, []) for i in range(7)]
    g = ground(agents)
    assert g.entities(3).tolist() == [3, 0, 1, 2, 4, 5, 6]
    g5 = ground(agents, view_limits={3: 5, 6: 1})
    assert g5.entities(3).tolist() == [3, 0, 1, 2, 4]
    assert g5.entities(6).tolist() == [6]
    assert g5.entities(0).tolist() == [0, 1, 2, 3, 4, 5, 6]


def test_bucketed_and_dense_membership_agree():
    rng = np.random.default_rng(4)
    pos = rng.integers(0, 500, size=(700, 2))
    boxes = np.stack([pos[:, 0] - 25, pos[:, 0] + 1, pos[:, 1] - 2, pos[:, 1] + 25], axis=1)
    q1, a1 = box_members(pos, boxes, method="dense")
    q2, a2 = box_members(pos, boxes, method="bucket")
    assert len(q1) > 700
    assert np.array_equal(q1, q2) and np.array_equal(a1, a2)


# -- unary predicates ------------------------------------------------------------------------------------------
def test_type_and_concept_predicates():
    g = ground([(CAR, (30, 30), N, 1, ["ambulance", "police"]), (PED, (30, 31), N, 0, ["old", "ambulance"]),
                (CAR, (30, 32), N, 2, ["old", "bus", "tiro", "reckless"]), (PED, (30, 33), N, 0, ["young"])])
    t = g.truth
    assert [t("IsCar", i) for i in range(4)] == [True, False, True, False]
    assert [t("IsPedestrian", i) for i in range(4)] == [False, True, False, True]
    assert t("IsAmbulance", 0) and t("IsPolice", 0) and not t("IsBus", 0)
    assert not t("IsAmbulance", 1), "car concepts are false on a pedestrian"
    assert t("IsOld", 1) and not t("IsOld", 2), "pedestrian concepts are false on a car"
    assert t("IsBus", 2) and t("IsTiro", 2) and t("IsReckless", 2)
    assert t("IsYoung", 3) and not t("IsYoung", 1)


def test_intersection_predicates_by_kind():
    city = blank_city()
    city.intersections[0, 10, 10] = 1   # car "at" line
    city.intersections[1, 10, 20] = 1   # pedestrian "at" line
    city.intersections[2, 10, 30] = 3   # "in" box
    g = ground([(CAR, (10, 10), N, 1, []), (PED, (10, 10), N, 0, []), (CAR, (10, 20), N, 1, []),
                (PED, (10, 20), N, 0, []), (CAR, (10, 30), N, 1, []), (PED, (10, 30), N, 0, [])], city=city)
    assert [g.truth("IsAtInter", i) for i in range(6)] == [True, False, False, True, False, False]
    assert [g.truth("IsInInter", i) for i in range(6)] == [False, False, False, False, True, True]


# -- distances -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("offset,close,next_to", [
    ((0, 12), False, False),   # exactly 12: neither (docs/reference.md#grounding-predicates)
    ((1, 12), True, False),    # sqrt(145) > 12
    ((0, 20), True, False),    # exactly 20: close
    ((1, 20), False, False),   # sqrt(401) > 20
    ((7, 9), False, True),     # sqrt(130) < 12
    ((0, 0), False, True),     # same cell: distance 0 < 12
])
def test_close_and_next_to_thresholds(offset, close, next_to):
    g = ground([(CAR, (30, 20), N, 1, []), (PED, (30 + offset[0], 20 + offset[1]), N, 0, [])])
    assert g.truth("IsClose", 0, 1) is close and g.truth("IsClose", 1, 0) is close
    assert g.truth("NextTo", 0, 1) is next_to and g.truth("NextTo", 1, 0) is next_to
    assert not g.truth("NextTo", 0, 0) and not g.truth("IsClose", 1, 1)


def test_higher_priority():
    g = ground([(CAR, (30, 30), N, 2, []), (CAR, (30, 31), N, 5, []), (CAR, (30, 32), N, 2, []),
                (PED, (30, 33), N, 0, [])])
    assert g.truth("HigherPri", 0, 1) and not g.truth("HigherPri", 1, 0)
    assert not g.truth("HigherPri", 0, 2) and not g.truth("HigherPri", 2, 0), "equal priority: neither"
    assert g.truth("HigherPri", 3, 0) and not g.truth("HigherPri", 0, 3)
    assert not g.truth("HigherPri", 0, 0)


# -- left / right ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("heading,left_cell,right_cell", [
    (U, (30, 25), (30, 35)),   # facing up: smaller columns are left
    (D, (30, 35), (30, 25)),
    (R, (25, 30), (35, 30)),   # facing right: smaller rows are left
    (L, (35, 30), (25, 30)),
])
def test_left_and_right_of_use_second_argument_heading(heading, left_cell, right_cell):
    g = ground([(CAR, (30, 30), heading, 1, []), (PED, left_cell, N, 0, []), (PED, right_cell, N, 0, []),
                (PED, (30, 30), N, 0, [])])
    assert g.truth("LeftOf", 1, 0) and not g.truth("RightOf", 1, 0)
    assert g.truth("RightOf", 2, 0) and not g.truth("LeftOf", 2, 0)
    assert not g.truth("LeftOf", 3, 0) and not g.truth("RightOf", 3, 0), "on the heading line: neither"
    assert not g.truth("LeftOf", 0, 1) and not g.truth("RightOf", 0, 2), "Y without heading: false"


def test_left_right_on_the_heading_line_ahead_is_neither():
    g = ground([(CAR, (30, 30), U, 1, []), (PED, (20, 30), N, 0, []), (PED, (40, 30), N, 0, [])])
    for i in (1, 2):
        assert not g.truth("LeftOf", i, 0) and not g.truth("RightOf", i, 0)


# -- CollidingClose ----------------------------------------------------------------------------------------------------
def test_colliding_close_car_reach_and_angle():
    g = ground([(CAR, (30, 10), R, 1, []), (PED, (30, 18), N, 0, []), (PED, (30, 19), N, 0, []),
                (PED, (31, 18), N, 0, []), (PED, (30, 8), N, 0, []), (CAR, (30, 12), N, 1, [])])
    assert g.truth("CollidingClose", 0, 1), "straight ahead at distance 8 = range"
    assert not g.truth("CollidingClose", 0, 2), "distance 9 > range 8"
    assert not g.truth("CollidingClose", 0, 3), "atan(1/8) > 0.1 rad"
    assert not g.truth("CollidingClose", 0, 4), "behind"
    assert not g.truth("CollidingClose", 5, 0), "no direction yet"
    assert not g.truth("CollidingClose", 0, 0)


def test_colliding_close_vis_range_and_lateral_offset():
    g = ground([(CAR, (30, 10), R, 1, []), (PED, (31, 20), N, 0, []), (PED, (31, 19), N, 0, []),
                (PED, (30, 22), N, 0, [])], onto="vap")
    assert g.truth("CollidingClose", 0, 1), "atan(1/10) = 0.0997 < 0.1, reach 11"
    assert not g.truth("CollidingClose", 0, 2), "atan(1/9) > 0.1"
    assert not g.truth("CollidingClose", 0, 3), "distance 12 > 11"


def test_colliding_close_pedestrian_and_same_cell_coins():
    # many pedestrian pairs straight ahead at distance 2 (coin, p = 0.5) and car pairs on the same cell
    agents = []
    for i in range(40):
        agents += [(PED, (2 + 3 * (i % 18), 2 + 25 * (i // 18)), D, 0, []), ]
        agents += [(PED, (4 + 3 * (i % 18), 2 + 25 * (i // 18)), N, 0, [])]
    agents = agents[:72]
    g = ground(agents, city=blank_city(60, 80), seed=1)
    vals = [g.truth("CollidingClose", 2 * i, 2 * i + 1) for i in range(36)]
    assert 5 < sum(vals) < 31, "pedestrian straight ahead: a fair coin"
    # same seed → same coins; all views agree with the global value
    g2 = ground(agents, city=blank_city(60, 80), seed=1)
    assert vals == [g2.truth("CollidingClose", 2 * i, 2 * i + 1) for i in range(36)]
    b = g.binary_local("CollidingClose")
    for e in range(len(agents)):
        ents = g.entities(e)
        for i, a in enumerate(ents):
            for j, c in enumerate(ents):
                assert b[e, i, j] == g.truth("CollidingClose", int(a), int(c))
    # pedestrian 3 cells ahead still coin-eligible (reach 3), 4 never
    g3 = ground([(PED, (10, 10), D, 0, []), (PED, (14, 10), N, 0, [])])
    assert not g3.truth("CollidingClose", 0, 1)


def test_coins_drawn_once_per_needed_pair_in_order():
    agents = [(CAR, (10, 10), R, 1, []), (CAR, (10, 10), L, 2, []), (PED, (10, 10), N, 0, []),
              (PED, (20, 10), D, 0, []), (PED, (22, 10), N, 0, [])]
    rng = np.random.default_rng(7)
    g = Grounder(blank_city(), ontology("full")).ground(snap(agents), rng)
    # needed pairs: (0,1), (0,2) same cell [0 moved], (1,0), (1,2) same cell [1 moved], (3,4) ped ahead
    ref = np.random.default_rng(7).random(5) < 0.5
    got = [g.truth("CollidingClose", a, b) for a, b in [(0, 1), (0, 2), (1, 0), (1, 2), (3, 4)]]
    assert got == ref.tolist()
    assert rng.random() == np.random.default_rng(7).random(6)[5], "exactly five draws"
    assert not g.truth("CollidingClose", 2, 0), "no direction: no coin, false"


# -- observation layout ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("onto,size", [("easy", 85), ("medium", 140), ("full", 205)])
def test_observation_sizes(onto, size):
    g = ground([(CAR, (30, 30), R, 1, []), (PED, (30, 35), N, 0, [])], onto=onto)
    obs = g.observation(0)
    assert obs.dtype == np.float32 and obs.shape == (size,)


def test_observation_layout_full():
    city = blank_city()
    city.intersections[2, 30, 30] = 1
    g = ground([(CAR, (30, 30), R, 3, ["police"]), (PED, (30, 35), N, 0, ["old"]), (CAR, (30, 40), U, 1, [])],
               city=city)
    obs = g.observation(0)
    assert obs[0:5].tolist() == [0, 1, 0, 0, 0]          # IsPedestrian over e0..e4 (e3, e4 = PH)
    assert obs[5:10].tolist() == [1, 0, 1, 0, 0]         # IsCar
    assert obs[20] == 1 and obs[21:25].sum() == 0        # IsPolice(e0)
    assert obs[50:55].tolist() == [1, 0, 0, 0, 0]        # IsInInter
    nxt = obs[180:205].reshape(5, 5)                     # NextTo, row-major (e_i, e_j)
    assert nxt[0, 1] == 1 and nxt[1, 2] == 1 and nxt[0, 2] == 1 and nxt[0, 0] == 0 and nxt[3:].sum() == 0
    hp = obs[80:105].reshape(5, 5)                       # HigherPri
    assert hp[1, 0] == 1 and hp[2, 0] == 1 and hp[0, 2] == 0
    assert g.entity_names(0, 5) == ["Car_1", "Pedestrian_1", "Car_2", "PH", "PH"]


def test_ego_view_plain_data():
    g = ground([(CAR, (30, 30), R, 1, ["tiro"]), (PED, (30, 35), N, 0, [])])
    v = g.ego_view(0).to_dict()
    assert [e["name"] for e in v["entities"]] == ["Car_1", "Pedestrian_1"]
    assert "IsTiro" in v["entities"][0]["unary"]
    assert {"predicate": "NextTo", "object": "Pedestrian_1"} in v["entities"][0]["relations"]


def test_local_tables_match_global_truth():
    rng = np.random.default_rng(3)
    agents = [(Kind(int(rng.integers(0, 2))), tuple(rng.integers(0, 60, 2)), Heading(int(rng.integers(-1, 4))),
               int(rng.integers(0, 5)), ["police"] if rng.random() < .3 else []) for _ in range(30)]
    g = ground(agents, seed=5)
    for p in ("IsClose", "NextTo", "LeftOf", "RightOf", "HigherPri", "CollidingClose"):
        b = g.binary_local(p)
        for e in range(30):
            ents = g.entities(e)
            assert np.array_equal(b[e, :len(ents), :len(ents)], g.pair(p, ents[:, None], ents[None, :]))
            assert not b[e, len(ents):].any() and not b[e, :, len(ents):].any()
    for p in ("IsCar", "IsPolice"):
        u = g.unary_local(p)
        for e in range(30):
            ents = g.entities(e)
            assert np.array_equal(u[e, :len(ents)], g.unary(p)[ents])


def test_distance_formula_is_euclidean():
    g = ground([(CAR, (30, 10), N, 1, []), (PED, (30 + 12, 10 + 16), N, 0, [])])
    assert math.hypot(12, 16) == 20 and g.truth("IsClose", 0, 1)


def test_large_scene_bucketed_paths_match_dense(monkeypatch):
    """FOV membership and coin candidates use a bucket grid for many agents; results must equal the dense path."""
    import core.logic.grounding.coins as cmod
    import core.logic.grounding.spatial as smod
    rng = np.random.default_rng(9)
    n = 400
    agents = [(Kind(int(rng.integers(0, 2))), tuple(rng.integers(0, 120, 2)), Heading(int(rng.integers(-1, 4))),
               int(rng.integers(0, 6)), []) for _ in range(n)]
    city = blank_city(120, 120)

    def run(limit):
        monkeypatch.setattr(smod, "DENSE_LIMIT", limit)
        monkeypatch.setattr(cmod, "DENSE_LIMIT", limit)
        return ground(agents, city=city, seed=3)

    dense, bucket = run(10**9), run(0)
    assert np.array_equal(dense.ent, bucket.ent)
    assert dense.k > 10
    for p in ("CollidingClose", "NextTo", "LeftOf", "HigherPri"):
        assert np.array_equal(dense.binary_local(p), bucket.binary_local(p)), p
    assert dense.binary_local("CollidingClose").any()
