"""Ontology files the loader fuzzer (tools/fuzz, docs/fuzzing.md) found crashing: a whole number beyond the float
range as an angle or a distance raised OverflowError (math.isfinite on a 400-digit int) instead of a located error."""
from __future__ import annotations

import pytest

from core.base.errors import ConfigError
from core.logic.lang.ontology import loads_ontology
from tests.support.paths import ROOT

ONTOLOGY = (ROOT / "configs" / "ontologies" / "full.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("old, new, expect", [
    ("angle: 0.1", "angle: " + "9" * 400, "'angle' must be an angle in radians"),
    ("range: {pedestrian: 3, car: 8}", "range: {pedestrian: " + "7" * 400 + ", car: 8}", "at most 8192"),
])
def test_huge_whole_numbers_are_located_errors(old, new, expect):
    assert old in ONTOLOGY
    line = ONTOLOGY[:ONTOLOGY.index(old)].count("\n") + 1
    with pytest.raises(ConfigError, match=expect) as ei:
        loads_ontology(ONTOLOGY.replace(old, new, 1), "o.yaml")
    assert ei.value.file == "o.yaml" and ei.value.line == line
