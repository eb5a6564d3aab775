"""Agent labels on the map: which ones are placed (no overlaps, the selected agent and its witnesses first) and what
they say at a given zoom (core/view/labels.py)."""
from __future__ import annotations

import numpy as np

from core.view.labels import FULL_NAME_PPC, declutter, label_text, priority_order, short_name


def test_short_ids_and_full_names_by_zoom():
    assert short_name("Car_3") == "C3"
    assert short_name("Pedestrian_12") == "P12"
    assert short_name("ego") == "ego"
    assert label_text("Car_3", FULL_NAME_PPC) == "Car_3"
    assert label_text("Car_3", FULL_NAME_PPC - 1) == "C3"


def test_priority_puts_the_given_agents_first_once():
    assert priority_order(5, (3, None, 1, 3)) == [3, 1, 0, 2, 4]
    assert priority_order(3, (7,)) == [0, 1, 2]


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_declutter_keeps_no_overlapping_pair_and_drops_only_overlapping_ones():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 400, size=(300, 2))
    boxes = np.concatenate([xy, xy + [40, 14]], axis=1)
    order = priority_order(300, (250, 17))
    kept = declutter(boxes, order)
    assert kept[:2] == [250, 17]
    ks = set(kept)
    for i, a in enumerate(kept):
        for b in kept[i + 1:]:
            assert not _overlap(boxes[a], boxes[b])
    # every dropped label overlaps a label placed before it
    pos = {a: n for n, a in enumerate(order)}
    for i in range(300):
        if i not in ks:
            assert any(_overlap(boxes[i], boxes[j]) and pos[j] < pos[i] for j in kept)
    assert 10 < len(kept) < 300


def test_declutter_keeps_all_when_apart():
    boxes = np.array([[0, 0, 10, 5], [20, 0, 30, 5], [0, 10, 10, 15]], float)
    assert declutter(boxes, [0, 1, 2]) == [0, 1, 2]
    assert declutter(np.array([[0, 0, 10, 5], [5, 2, 15, 7]], float), [1, 0]) == [1]
