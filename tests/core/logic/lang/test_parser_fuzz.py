"""Robustness: random text and token soups into the rule parser and the reference importer. Only our own error
types come out, always with a position."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.base.errors import ConfigError, LogiCityError, RuleError
from core.io.yamlio import loads_yaml
from core.logic.lang.ontology import loads_ontology
from core.logic.lang.program import parse_rules
from core.logic.lang.reference import parse_reference_formula, reference_ontology_from_data, reference_rules_from_data
from tests.support.logic import ontology

FULL = ontology("full")
SETTINGS = settings(max_examples=400, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

RULE_TOKENS = ["Stop", "Slow", "Fast", "Normal", "IsCar", "NextTo", "IsClose", "Not", "not", "X", "Y", "_",
               "car", "(", ")", ",", ".", ":-", ":", "\\+", "#", "section", "task", "ontology", "sim", "=",
               "reward", "dead", "true", '"name"', '"open', "-5", "1e3", "% c\n", "\n", "lbl", "Foo", "é", ";",
               "Not(", "IsCar(X)", "Stop(X) :-", "#section task.", "#task \"t\" reward=-1."]
FORMULA_TOKENS = ["Stop(entity)", "Slow(entity)", "==", "Exists(", "[dummyA]", "[dummyA, dummyB]", "[", "]", ",",
                  ")", "(", "And(", "Or(", "Not(", "Implies(", "ForAll(", "IsCar(", "NextTo(", "dummyA", "dummyB",
                  "entity", "x", "lambda", "__import__", ".", "1", "'s'", "os.system", "*", "**", "<", "!=",
                  "\n", " ", "IsCar(entity)", "NextTo(entity, dummyA)", "yield", ":", "=", "if", "else"]


def _check_rule_error(text: str) -> None:
    try:
        parse_rules(text, FULL, file="fuzz.rules")
    except RuleError as e:
        assert e.line is not None and e.col is not None and e.file == "fuzz.rules"


def _check_formula(text: str) -> None:
    try:
        parse_reference_formula(text, FULL, "f.yaml", 3, 1)
    except RuleError as e:
        assert e.line is not None and e.line >= 3


@SETTINGS
@given(st.text(max_size=300))
def test_parser_random_text(text):
    _check_rule_error(text)


@SETTINGS
@given(st.lists(st.sampled_from(RULE_TOKENS), max_size=60), st.sampled_from([" ", "", "\n"]))
def test_parser_token_soup(tokens, sep):
    _check_rule_error(sep.join(tokens))


@SETTINGS
@given(st.text(max_size=200))
def test_formula_random_text(text):
    _check_formula(text)


@SETTINGS
@given(st.lists(st.sampled_from(FORMULA_TOKENS), max_size=60), st.sampled_from([" ", ""]))
def test_formula_token_soup(tokens, sep):
    _check_formula(sep.join(tokens))


def test_deep_nesting_is_an_error_not_a_crash():
    for text in ["Not(" * 3000 + "IsCar(entity)" + ")" * 3000, "(" * 10000, "And(" * 150 + "IsCar(entity)" +
                 ")" * 150, "Stop(entity) == " + "Not(" * 250 + "IsCar(entity)" + ")" * 250]:
        _check_formula(text)
    _check_rule_error("Stop(X) :- " + "Not(" * 5000)


YAML_SNIPPETS = ["Rules:", "  Sim:", "  Task:", "  - name: R", "    - name: R", "      formula: |",
                 "        Stop(entity) == IsCar(entity)", "        Implies(IsCar(entity), Stop(entity))",
                 "      reward: -1", "      dead: true", "      dead: maybe", "  - Stop:", "      formula: 3",
                 "Predicates:", "  - IsCar:", "      arity: 1", "      arity: 7", "      function: x.IsCar",
                 "      function: None", "      semantic: true", "  - Stop:", "- a", "[", "{", "&a", "*a",
                 "!!python/object:os.system", "key: [1, 2"]


@SETTINGS
@given(st.lists(st.sampled_from(YAML_SNIPPETS), max_size=14))
def test_importer_yaml_soup(lines):
    text = "\n".join(lines) + "\n"
    try:
        data = loads_yaml(text, "soup.yaml")
        reference_rules_from_data(data, FULL, "soup.yaml")
    except LogiCityError as e:
        assert isinstance(e, (ConfigError, RuleError))
        assert e.line is not None, str(e)
    try:
        data = loads_yaml(text, "soup.yaml")
        reference_ontology_from_data(data, "soup", "master", "soup.yaml")
    except LogiCityError as e:
        assert isinstance(e, (ConfigError, RuleError)) and e.line is not None, str(e)


@SETTINGS
@given(st.text(max_size=200))
def test_ontology_random_text(text):
    try:
        loads_ontology(text, "o.yaml")
    except ConfigError as e:
        assert e.line is not None, str(e)
