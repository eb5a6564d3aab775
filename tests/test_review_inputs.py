"""Bad inputs found in review: each gets a clear, located message instead of a crash or an internal name."""
from __future__ import annotations

import pytest

from core.errors import ConfigError, RuleError
from core.logic import load_ontology, parse_program
from core.map.io import loads_map

from .studio_support import ROOT


def test_huge_map_is_refused_with_its_line():
    with pytest.raises(ConfigError) as err:
        loads_map("name: big\nsize: [100000, 100000]\nstreets: []\n", "big.yaml")
    assert "big.yaml:1" in str(err.value) and "too large" in str(err.value)


def test_type_errors_use_yaml_words_not_class_names():
    with pytest.raises(ConfigError) as err:
        loads_map("size: [10, 10]\nstreets: {a: 1}\n", "m.yaml")
    msg = str(err.value)
    assert "m.yaml:2" in msg and "a mapping" in msg and "Located" not in msg


def test_double_negation_is_explained():
    onto = load_ontology(ROOT / "configs" / "ontologies" / "full.yaml")
    with pytest.raises(RuleError) as err:
        parse_program("Stop(X) :- Not(Not(IsCar(X))).", onto, "x.rules")
    assert "x.rules:1:16" in str(err.value) and "double negation" in str(err.value)


def test_screenshot_size_is_validated(capsys):
    from app.studio import _parser

    with pytest.raises(SystemExit):
        _parser().parse_args(["--screenshot", "o.png", "--size", "abc"])
    assert "WIDTHxHEIGHT" in capsys.readouterr().err
    assert _parser().parse_args(["--size", "800x600"]).size == (800, 600)
