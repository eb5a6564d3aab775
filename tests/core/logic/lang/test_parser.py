"""Rule language: syntax, errors with positions, validation against the ontology, stratification, files."""
from __future__ import annotations

import pytest

from core.base.errors import ConfigError, RuleError
from core.logic.lang.ontology import load_ontology, loads_ontology
from core.logic.lang.program import TaskSection, load_rules, parse_program, parse_rules
from tests.support.logic import ONTOLOGIES, RULES, ontology

FULL = ontology("full")


def err(text, onto=FULL) -> RuleError:
    with pytest.raises(RuleError) as e:
        parse_rules(text, onto, file="r.rules")
    return e.value


def test_paper_clause_parses():
    p = parse_program("Stop(X) :- Not(IsAmbulance(X)), IsAtInter(X), IsInInter(Y).", FULL)
    (c,) = p.clauses
    assert c.head == "Stop" and c.label == "Stop#1" and c.variables == ("Y",)
    assert [str(lit) for lit in c.body] == ["Not(IsAmbulance(X))", "IsAtInter(X)", "IsInInter(Y)"]


def test_disjunction_labels_comments_and_synonyms():
    p = parse_program("""
        % comment line
        Stop(X) :- IsAtInter(X), IsInInter(Y).   % trailing comment
        near: Stop(X) :- CollidingClose(X, _), \\+ IsAmbulance(X).
        Stop(X) :- CollidingClose(X, _), NextTo(_, X).
        Fast(X) :- not Stop(X), IsBus(X).
        Slow(X).
        :- Slow(X), Fast(X).
    """.replace("not Stop(X)", "Not(Stop(X))"), FULL)
    assert [c.label for c in p.clauses] == ["Stop#1", "near", "Stop#3", "Fast#1", "Slow#1", "constraint#1"]
    assert p.clauses[2].variables[0] != p.clauses[2].variables[1], "each _ is a fresh variable"
    assert str(p.clauses[1]) == "near: Stop(X) :- CollidingClose(X, _), Not(IsAmbulance(X))."
    assert p.strata == (("Slow", "Stop"), ("Fast",))  # within a stratum: core.base.codes.Action order
    assert p.constraints[0].head is None and p.clauses[4].body == ()


@pytest.mark.parametrize("text,line,col,msg", [
    ("Stop(X) :- IsAtInter(X)", 1, 24, "expected ',' or '.'"),
    ("Stop(X) :- IsAtInter(X),\n  .", 2, 3, "expected a body literal"),
    ("Stop(X) :- IsAtInter(X) IsInInter(Y).", 1, 25, "expected ',' or '.'"),
    ("Stop X :- IsCar(X).", 1, 6, "expected '(' after predicate 'Stop'"),
    ("Stop(X) :- IsCar(X, ).", 1, 21, "expected a variable"),
    ("Stop(X) :- IsCar(car_1).", 1, 18, "constant"),
    ("Stop(X) :- IsCar(X) ; IsBus(X).", 1, 21, "unexpected character ';'"),
    ('#task "x reward=1.', 1, 7, "unterminated string"),
    ("#rule x.", 1, 2, "unknown directive"),
    ("Stop(X) :- Not(IsCar(X).", 1, 24, "')' to close Not("),
])
def test_syntax_errors_have_line_col_and_expectation(text, line, col, msg):
    e = err(text)
    assert (e.file, e.line, e.col) == ("r.rules", line, col), str(e)
    assert msg in e.message
    assert str(e).startswith(f"r.rules:{line}:{col}: ")


@pytest.mark.parametrize("text,col,msg", [
    ("Stop(X) :- IsAmbulanc(X).", 12, "unknown predicate 'IsAmbulanc'; did you mean IsAmbulance"),
    ("Stop(X) :- NextTo(X).", 12, "arity mismatch: NextTo takes 2 arguments, got 1"),
    ("IsCar(X) :- IsBus(X).", 1, "the head must be an action predicate"),
    ("Stop(Y) :- IsBus(Y).", 1, "must be the ego variable X"),
    ("Stop(X, Y) :- IsBus(Y).", 1, "arity mismatch: Stop takes 1 argument"),
    ("Stop(X) :- Slow(Y), IsBus(Y).", 12, "can only be applied to the ego X"),
])
def test_semantic_errors(text, col, msg):
    e = err(text)
    assert e.line == 1 and e.col == col and msg in e.message, str(e)


def test_unstratified_negation_cycle_is_an_error():
    e = err("Stop(X) :- Not(Slow(X)), IsCar(X).\nSlow(X) :- Not(Stop(X)), IsBus(X).")
    assert "unstratified negation" in e.message and "Stop → Slow → Stop" in e.message
    assert (e.line, e.col) == (1, 16)


def test_positive_recursion_is_an_error():
    e = err("Stop(X) :- Slow(X).\nSlow(X) :- Stop(X).")
    assert "recursive definition" in e.message


def test_negative_self_loop():
    e = err("Stop(X) :- Not(Stop(X)).")
    assert "unstratified negation" in e.message


def test_duplicate_labels():
    e = err("a: Stop(X) :- IsBus(X).\na: Slow(X) :- IsBus(X).")
    assert "duplicate clause label 'a'" in e.message and e.line == 2


def test_sections_and_task_rules():
    rf = parse_rules("""
        #ontology full.
        #section sim.
        Stop(X) :- CollidingClose(X, Y).
        #section task.
        #task "Stop" reward=-5 dead=true description="should stop".
        Stop(X) :- CollidingClose(X, Y).
        #task Slow reward=-2.5.
        Slow(X) :- Not(Stop(X)), IsTiro(X).
        #section expert.
        Stop(X) :- CollidingClose(X, Y).
        Normal(X) :- Not(Stop(X)).
    """, FULL)
    assert list(rf.sections) == ["sim", "task", "expert"] and rf.ontology_hint == "full"
    task = rf.task()
    assert isinstance(task, TaskSection)
    assert [(r.name, r.reward, r.dead, r.description) for r in task.rules] == [
        ("Stop", -5.0, True, "should stop"), ("Slow", -2.5, False, "")]
    assert [c.label for c in task.clauses] == ["Stop#1", "Slow#1"]
    assert rf.program("expert").heads == ("Stop", "Normal")
    assert rf.program().name == "sim"
    # printing and re-parsing gives the same file
    again = parse_rules(rf.to_text(), FULL)
    assert again.to_text() == rf.to_text()


@pytest.mark.parametrize("text,msg", [
    ("#section task.\nStop(X) :- IsCar(X).", "must follow a #task header"),
    ('#section sim.\n#task "a" reward=1.\nStop(X) :- IsCar(X).', "only allowed in section 'task'"),
    ('#section task.\n#task "a" dead=true.\nStop(X) :- IsCar(X).', "needs reward"),
    ('#section task.\n#task "a" reward=1 dead=maybe.\nStop(X) :- IsCar(X).', "dead must be true or false"),
    ('#section task.\n#task "a" reward=1 colour=1.\nStop(X) :- IsCar(X).', "unknown #task option"),
    ("Stop(X) :- IsCar(X).\n#section sim.\nStop(X) :- IsCar(X).", "before the first #section"),
    ("#section sim.\n#section sim.", "appears twice"),
])
def test_section_errors(text, msg):
    assert msg in err(text).message


def test_parse_program_rejects_sectioned_text():
    with pytest.raises(RuleError):
        parse_program("#section sim.\nStop(X) :- IsCar(X).\n#section expert.\nStop(X) :- IsCar(X).", FULL)


def test_bundled_rule_files_load_with_their_ontologies():
    expect = {"sim_easy": ("easy", ["main"]), "sim_expert": ("full", ["main"]),
              "spf_easy": ("easy", ["sim", "task", "expert"]), "spf_medium": ("medium", ["sim", "task", "expert"]),
              "spf_hard": ("full", ["sim", "task", "expert"]), "spf_expert": ("full", ["sim", "task", "expert"]),
              "vap_easy": ("vap", ["main"]), "vap_hard": ("vap", ["main"])}
    for name, (onto, sections) in expect.items():
        rf = load_rules(RULES / f"{name}.rules", ontology(onto))
        assert list(rf.sections) == sections and rf.ontology_hint == onto
        assert parse_rules(rf.to_text(), ontology(onto)).to_text() == rf.to_text()


def test_rules_against_a_smaller_ontology_fail_clearly():
    with pytest.raises(RuleError, match="unknown predicate 'IsPolice'"):
        load_rules(RULES / "sim_expert.rules", ontology("easy"))


def test_missing_rule_file():
    with pytest.raises(RuleError, match="file not found"):
        load_rules(RULES / "nope.rules", FULL)


# -- ontology files ---------------------------------------------------------------------------------------------
def test_bundled_ontologies():
    for name, n_unary, n_binary in [("easy", 7, 2), ("medium", 8, 4), ("full", 11, 6), ("vap", 11, 6)]:
        o = load_ontology(ONTOLOGIES / f"{name}.yaml")
        assert (len(o.unary), len(o.binary), [a.name for a in o.actions]) == (
            n_unary, n_binary, ["Stop", "Fast", "Normal", "Slow"])
        p = o["IsClose"] if "IsClose" in o else None
        if p:
            assert dict(p.params) == {"min": 12, "max": 20} and p.kind == "spatial"
    cc = load_ontology(ONTOLOGIES / "vap.yaml")["CollidingClose"]
    assert dict(cc.params["range"]) == {"pedestrian": 4, "car": 11}
    assert dict(load_ontology(ONTOLOGIES / "easy.yaml").view["behind"]) == {"left": 1, "right": 2, "up": 1,
                                                                         "down": 2}


def test_ontology_round_trip_and_defaults():
    o = loads_ontology("ontology: tiny\npredicates:\n  - {name: Near, arity: 2, kind: spatial, grounding: "
                       "next_to}\n  - {name: Stop, arity: 1, kind: action}\n")
    assert o["Near"].params["max"] == 12 and o.view["fov"] == 25
    again = loads_ontology(o.to_yaml())
    assert again.names == o.names and dict(again["Near"].params) == dict(o["Near"].params)


@pytest.mark.parametrize("body,msg,line", [
    ("  - {name: A, arity: 1, kind: semantic, grounding: os.system}\n", "unknown grounding function", 3),
    ("  - {name: A, arity: 1, kind: semantic, grounding: is_close}\n", "has arity 2", 3),
    ("  - {name: Jump, arity: 1, kind: action}\n", "must be one of Slow, Normal, Fast, Stop", 3),
    ("  - {name: A, arity: 3, kind: semantic}\n", "arity must be 1 or 2", 3),
    ("  - {name: A, arity: 2, kind: spatial, grounding: is_close, params: {min: -1}}\n", "non-negative", 3),
    ("  - {name: A, arity: 2, kind: spatial, grounding: is_close, params: {mid: 1}}\n", "unknown parameter", 3),
    ("  - {name: A, arity: 1, kind: nice}\n", "kind must be one of", 3),
    ("  - {name: Not, arity: 1, kind: semantic}\n", "invalid predicate name", 3),
    ("  - {name: A, arity: 1, kind: semantic, colour: red}\n", "unknown key 'colour'", 3),
    ("  - {name: A, arity: 1, kind: semantic}\n  - {name: A, arity: 1, kind: semantic}\n", "duplicate", 4),
])
def test_ontology_errors(body, msg, line):
    with pytest.raises(ConfigError) as e:
        loads_ontology("ontology: x\npredicates:\n" + body, "o.yaml")
    assert msg in e.value.message and e.value.line == line and e.value.file == "o.yaml", str(e.value)


def test_double_negation_is_explained():
    onto = load_ontology(ONTOLOGIES / "full.yaml")
    with pytest.raises(RuleError) as err:
        parse_program("Stop(X) :- Not(Not(IsCar(X))).", onto, "x.rules")
    assert "x.rules:1:16" in str(err.value) and "double negation" in str(err.value)
