"""Token classes the rule editor colours (core.logic.lang.highlight_tokens), clause extents, comment toggling."""
from __future__ import annotations

from core.logic.lang.highlight_tokens import (
    DISABLED_PREFIX,
    START,
    classify_line,
    classify_text,
    clause_spans,
    set_clause_enabled,
    toggle_comment,
    word_at,
)
from core.logic.lang.parser import parse_raw

PREDS = {"IsCar": False, "NextTo": False, "Stop": True, "Slow": True}


def kinds(line: str, state: int = START) -> list[tuple[str, str]]:
    spans, _ = classify_line(line, state, PREDS)
    return [(s.kind, s.text) for s in spans]


def test_semantic_roles_of_a_clause():
    got = kinds("near: Stop(X) :- IsCar(Y), \\+ Slow(X), Not(NextTo(X, _)), IsBuss(Y). % why")
    assert ("label", "near") in got
    assert ("head", "Stop") in got
    assert ("predicate", "IsCar") in got and ("predicate", "NextTo") in got
    assert ("action", "Slow") in got                  # an action used in a body
    assert ("unknown", "IsBuss") in got               # not in the ontology
    assert ("keyword", "Not") in got and ("keyword", "\\+") in got and ("keyword", ":-") in got
    assert ("ego", "X") in got and ("variable", "Y") in got and ("anonymous", "_") in got
    assert got[-1] == ("comment", "% why")


def test_head_that_is_not_an_action_and_constraints():
    assert ("head-error", "IsCar") in kinds("IsCar(X) :- NextTo(X, Y).")
    got = kinds(":- Stop(X), Slow(X).")
    assert ("action", "Stop") in got and ("head", "Stop") not in got


def test_state_carries_over_lines():
    lines = classify_text("Stop(X) :-\n    IsCar(Y),\n    Stop2(Y).\nSlow(X).", PREDS)
    assert ("predicate", "IsCar") in [(s.kind, s.text) for s in lines[1]]
    assert ("unknown", "Stop2") in [(s.kind, s.text) for s in lines[2]]
    assert ("head", "Slow") in [(s.kind, s.text) for s in lines[3]]


def test_directives_strings_and_bad_characters():
    got = kinds('#task "Stop" reward=-5 dead=true.')
    assert got[0] == ("directive", "#task") and ("string", '"Stop"') in got and ("number", "-5") in got
    assert ("directive", "reward") in got
    assert ("error", "@") in kinds("Stop(X) :- @")
    assert kinds('#task "unterminated')[-1][0] == "error"


def test_clause_spans_and_enable_disable_round_trip():
    text = "% c\n#ontology full.\nStop(X) :- IsCar(Y),\n   NextTo(X, Y).\n:- Stop(X), Slow(X).\nSlow(X) :- IsCar(X)"
    spans = clause_spans(text)
    assert [(c.first, c.last, c.enabled) for c in spans] == [(3, 4, True), (5, 5, True), (6, 6, True)]
    off, span = set_clause_enabled(text, 4, False)
    assert off.split("\n")[2].startswith(DISABLED_PREFIX) and off.split("\n")[3].startswith(DISABLED_PREFIX)
    assert [(c.first, c.last, c.enabled) for c in clause_spans(off)][0] == (3, 4, False)
    assert set_clause_enabled(off, 3, False) is None          # already disabled
    # the parser reads a disabled clause as a comment
    raw = parse_raw(off.replace("Slow(X) :- IsCar(X)", "Slow(X) :- IsCar(X)."))
    assert len(raw.sections[0].items) == 2
    on, _ = set_clause_enabled(off, 3, True)
    assert on == text
    assert set_clause_enabled(text, 1, False) is None         # a comment line is no clause


def test_toggle_comment_and_word_at():
    assert toggle_comment(["Stop(X).", "", "Slow(X)."]) == ["% Stop(X).", "", "% Slow(X)."]
    assert toggle_comment(["% Stop(X).", "  %Slow(X)."]) == ["Stop(X).", "  Slow(X)."]
    assert toggle_comment(["% a", "b"]) == ["% % a", "% b"]       # mixed: comment all
    assert word_at("Stop(X) :- IsCa", 15) == (11, "IsCa")
