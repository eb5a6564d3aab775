import math

import numpy as np
import pytest

from core.tasks.vap.metrics import ActionMetrics, ConceptRecall, format_table3, weighted_accuracy


def test_weighted_accuracy_matches_the_readme_example():
    # recalls 0.7176 / 0.7207 / 0.9868 with ground-truth counts 3042 / 3978 / 7220 -> wAcc 0.7706
    w = weighted_accuracy([0.7176, 0.7207, 0.9868, float("nan")], [3042, 3978, 7220, 0])
    assert round(w, 4) == 0.7706
    # not the plain mean of the recalls, nor the count-weighted (micro) accuracy
    assert round(w, 4) != round(np.mean([0.7176, 0.7207, 0.9868]), 4)
    micro = (0.7176 * 3042 + 0.7207 * 3978 + 0.9868 * 7220) / (3042 + 3978 + 7220)
    assert abs(w - micro) > 0.05


def test_action_metrics_recall_aacc_wacc_by_hand():
    m = ActionMetrics()
    m.add_image([0, 1, 3], [0, 1, 1])        # image accuracy 2/3
    m.add_image([3, 3], [3, 3])              # 1.0
    m.add_image([], [])                      # no car: not counted in aAcc
    assert m.total.tolist() == [1, 2, 0, 2]
    assert m.correct.tolist() == [1, 1, 0, 2]
    assert m.recalls[:2] == [1.0, 0.5] and math.isnan(m.recalls[2]) and m.recalls[3] == 1.0
    assert m.a_acc == pytest.approx((2 / 3 + 1.0) / 2)
    expected = (1.0 / 1 + 0.5 / 2 + 1.0 / 2) / (1 / 1 + 1 / 2 + 1 / 2)
    assert m.w_acc == pytest.approx(expected)
    assert m.confusion[1, 3] == 1
    text = format_table3(m)
    assert "aAcc" in text and "Num. Actions" in text and "0.5000" in text


def test_concept_recall_counts_true_positives_over_positives():
    c = ConceptRecall(["A", "B"])
    c.add(np.array([[1, 0], [0, 1], [1, 1]], bool), np.array([[1, 1], [1, 1], [0, 0]], bool))
    assert c.recalls == {"A": 0.5, "B": 0.5}
    with pytest.raises(ValueError):
        ActionMetrics().add_image([0], [0, 1])
