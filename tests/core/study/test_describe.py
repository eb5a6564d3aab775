"""Scene descriptions: same frame -> same text, every true grounding said, nothing false said."""
from __future__ import annotations

from core.study.describe import SceneFacts, describe
from core.study.source import SimulatedSource, concept_filter
from tests.support.paths import ROOT


def _collect(seed: int):
    src = SimulatedSource("configs/modes/vap_hard.yaml", "test", (seed,), 30, 11)
    return src.collect(concept_filter(["tiro", "reckless"]), base=ROOT)


def test_same_frame_same_text_across_runs():
    a, b = _collect(3), _collect(3)
    assert len(a) == len(b) > 0
    assert [describe(x.facts) for x in a] == [describe(x.facts) for x in b]
    # and a JSON round trip (what the question bank stores) reads the same
    for x in a[:20]:
        assert describe(SceneFacts.from_dict(x.facts.to_dict())) == describe(x.facts)


def test_description_states_the_true_groundings():
    facts = SceneFacts("Car_1", ("Car_1", "Pedestrian_2", "Car_3"),
                       {"Car_1": ("IsCar", "IsReckless", "IsAtInter"), "Pedestrian_2": ("IsPedestrian", "IsOld"),
                        "Car_3": ("IsCar", "IsAmbulance", "IsTiro", "IsInInter")},
                       (("IsClose", "Car_1", "Pedestrian_2"), ("IsClose", "Pedestrian_2", "Car_1"),
                        ("NextTo", "Car_1", "Car_3"),
                        ("LeftOf", "Pedestrian_2", "Car_1"), ("HigherPri", "Pedestrian_2", "Car_1"),
                        ("HigherPri", "Pedestrian_2", "Car_3"), ("HigherPri", "Car_1", "Car_3"),
                        ("CollidingClose", "Car_3", "Car_1")))
    text = describe(facts)
    assert text.splitlines() == [
        "We look at Car_1. It sees 2 other entities: Pedestrian_2 and Car_3.",
        "Car_1 is a reckless car. Pedestrian_2 is an old pedestrian. Car_3 is an ambulance, tiro car.",
        "Car_1 is at an intersection. Car_3 is in an intersection.",
        "Car_1 and Pedestrian_2 are close to each other. Car_1 is next to Car_3.",
        "Pedestrian_2 is on the left of Car_1.",
        "Priority, highest first: Pedestrian_2 > Car_1 > Car_3.",
        "Car_3 is about to collide with Car_1.",
    ]


def test_a_priority_relation_that_is_no_order_is_listed_pair_by_pair():
    facts = SceneFacts("A", ("A", "B"), {"A": ("IsCar",), "B": ("IsCar",)},
                       (("HigherPri", "A", "B"), ("HigherPri", "B", "A"), ("Foo", "A", "B")))
    text = describe(facts)
    assert "A has higher priority than B. B has higher priority than A." in text
    assert "Also true: Foo(A, B)." in text
    assert "Nobody is at or in an intersection." in text


def test_every_relation_of_a_simulated_frame_appears_in_its_text():
    """Each true fact of real frames is mentioned; names of entities not in the view never appear."""
    for c in _collect(1)[:60]:
        text = describe(c.facts)
        for pred, a, b in c.facts.relations:
            if pred in ("IsClose", "NextTo", "LeftOf", "RightOf", "CollidingClose"):
                assert a in text and b in text
        assert text.startswith(f"We look at {c.agent_name}.")
