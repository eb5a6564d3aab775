import numpy as np

from core.tasks.vap.overlay import build_overlay


def _item():
    n = 3
    binary = np.zeros((n, n, 2), np.float32)
    binary[0, 1, 0] = 1          # P(A0, A1) true
    binary[1, 2, 1] = 1          # Q(A1, A2) true
    sees = np.ones((n, n), bool)
    return {"world": 0, "step": 12, "image_path": "x.png", "agent_id": ["Car_1", "Car_2", "Pedestrian_1"],
            "boxes": np.array([[0, 0, 10, 10], [20, 0, 30, 10], [2, 2, 6, 6]], np.float32),
            "unary": np.array([[1, 0], [1, 1], [0, 0]], np.float32), "binary": binary, "sees": sees,
            "action": np.array([3, 1, 1]), "car": np.array([True, True, False])}


def test_truth_only_then_predictions_colour_edges_and_card():
    it = _item()
    ov = build_overlay(it, ["U", "V"], ["P", "Q"])
    assert not ov.has_prediction and all(a.correct is None for a in ov.agents)
    assert {(e.src, e.dst, e.predicate) for e in ov.shown_edges()} == {(0, 1, "P"), (1, 2, "Q")}
    assert ov.agent_at(3, 3) == 2 and ov.agent_at(5, 8) == 0 and ov.agent_at(50, 50) is None   # smallest box
    pb = np.zeros((3, 3, 2), bool)
    pb[0, 1, 0] = True
    pb[2, 0, 1] = True            # a wrong relation
    pu = np.array([[1, 0], [1, 0], [0, 0]], bool)
    ov = build_overlay(it, ["U", "V"], ["P", "Q"], np.array([3, 2, 1]), pu, pb)
    assert [a.correct for a in ov.agents] == [True, False, True]
    assert {(e.src, e.dst, e.predicate) for e in ov.shown_edges()} == {(0, 1, "P"), (2, 0, "Q")}
    assert {(e.src, e.dst) for e in ov.shown_edges("Q")} == {(2, 0)}
    card = ov.card(1)
    assert "true Normal, predicted Fast ✗" in card and "missed: V" in card and "Q(Car_2, Pedestrian_1)" in card
    # a reasoning-only model predicts actions but reads the true groundings: the true edges are drawn
    ov = build_overlay(it, ["U", "V"], ["P", "Q"], np.array([3, 1, 1]))
    assert ov.has_prediction and not ov.has_predicted_groundings and len(ov.shown_edges()) == 2
