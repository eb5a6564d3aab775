"""Ontology files: out-of-range parameters (field of view, ranges, angles, min/max) are reported with file and line
instead of overflowing later or silently producing nonsense (.inf reach, .nan angle)."""
from __future__ import annotations

import warnings

import pytest

from core.base.errors import ConfigError
from core.logic.lang.ontology import loads_ontology
from tests.support.paths import ROOT

ONTOLOGY = (ROOT / "configs" / "ontologies" / "full.yaml").read_text(encoding="utf-8")


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
