"""Out-of-range numbers in configuration files (agents, ontologies, SPF blocks) are reported with file and line
instead of overflowing later (OverflowError) or silently producing nonsense (.inf reach, .nan angle)."""
from __future__ import annotations

import warnings

import pytest

from core.agents.io import loads_agent_set
from core.errors import ConfigError
from core.logic import loads_ontology
from tests.support.paths import ROOT

ONTOLOGY = (ROOT / "configs" / "ontologies" / "full.yaml").read_text(encoding="utf-8")


def test_huge_priority_is_a_located_error():
    text = "version: 1\nagents:\n- {type: Car, id: 1, priority: 3000000000}\n- {type: Pedestrian, id: 1}\n"
    with pytest.raises(ConfigError) as ei:
        loads_agent_set(text, "agents.yaml")
    assert ei.value.file == "agents.yaml" and ei.value.line == 3 and "at most 1000000" in ei.value.message
    loads_agent_set(text.replace("3000000000", "1000000"), "agents.yaml")


def _ontology_line(old: str, new: str) -> tuple[str, int]:
    assert old in ONTOLOGY, old
    return ONTOLOGY.replace(old, new, 1), ONTOLOGY[:ONTOLOGY.index(old)].count("\n") + 1


@pytest.mark.parametrize("old, new, expect", [
    ("fov: 25", "fov: 100000000000000000000", "'fov' must be at most 8192"),
    ("range: {pedestrian: 3, car: 8}", "range: {pedestrian: .inf, car: 8}", "finite"),
    ("range: {pedestrian: 3, car: 8}", "range: {pedestrian: 3, car: .nan}", "finite"),
    ("angle: 0.1", "angle: .nan", "'angle' must be an angle in radians between 0 and π"),
    ("angle: 0.1", "angle: 7", "between 0 and π"),
    ("params: {min: 12, max: 20}", "params: {min: 30, max: 5}", "min (30) must be smaller than max (5)"),
    ("params: {max: 12}", "params: {max: 1.0e400}", "finite"),
])
def test_bad_ontology_parameters_are_located_errors(old, new, expect):
    text, line = _ontology_line(old, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning on the way to the error
        with pytest.raises(ConfigError) as ei:
            loads_ontology(text, "onto.yaml")
    assert ei.value.file == "onto.yaml" and ei.value.line == line and expect in ei.value.message, ei.value


def test_spf_block_numbers_must_be_finite():
    from core.tasks.spf_settings import parse_spf_block
    from core.yamlio import loads_yaml

    base = ("ego: Car_1\naction_cost: [-1, 0, 1, -2]\nsplits:\n  val: {max_priority: 7, max_horizon: 100, "
            "reset_dist: {ambulance: 1}}\n")
    parse_spf_block(loads_yaml(base, "m.yaml"), "m.yaml")
    for bad, expect in (("action_cost: [-1, 0, .nan, -2]", "finite"), ("max_priority: 7", "max_priority must be"),
                        ("ambulance: 1}", "must be a number")):
        good = {"action_cost: [-1, 0, .nan, -2]": "action_cost: [-1, 0, 1, -2]", "max_priority: 7":
                "max_priority: 7", "ambulance: 1}": "ambulance: 1}"}[bad]
        text = base.replace(good, {"max_priority: 7": "max_priority: 3000000000",
                                   "ambulance: 1}": "ambulance: .inf}"}.get(bad, bad))
        with pytest.raises(ConfigError, match=expect):
            parse_spf_block(loads_yaml(text, "m.yaml"), "m.yaml")
