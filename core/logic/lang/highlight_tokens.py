"""What each piece of a rule line *is*, for the rule editor's colouring; and where each clause of a text lies.

Why here and not in the editor widget: a ``QSyntaxHighlighter`` colours one line (block) at a time and must be
fast and tolerant of half-typed text, while the parser (:mod:`core.logic.lang.parser`) stops at the first error. This
module classifies the characters of one line with the same lexical rules as the parser, carrying a small state
from line to line (are we before a statement, in a head, in a body), and tells the semantic roles apart with the
ontology: the action in a head, a known predicate, an unknown one, an action used in a body, variables, the ego.
It is plain Python so the widget only maps kinds to colours, and tests check the classification without Qt.

Clause extents (:func:`clause_spans`) use the same lexer: the editor's per-clause enable/disable comments out the
lines of one clause with the :data:`DISABLED_PREFIX` marker, which the parser reads as a comment.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from core.logic.lang.syntax import EGO

__all__ = ["Span", "LineState", "classify_line", "classify_text", "clause_spans", "ClauseSpan", "DISABLED_PREFIX",
           "KINDS", "toggle_comment", "set_clause_enabled", "word_at"]

#: Marker that starts each line of a disabled clause. It begins with ``%``, so the parser and the CLI read the
#: disabled clause as a comment; the editor shows it struck through and can enable it again.
DISABLED_PREFIX = "%- "

#: Every kind :func:`classify_line` returns (the editor has one text format per kind).
KINDS = ("comment", "disabled", "directive", "string", "number", "punct", "keyword", "label", "head",
         "head-error", "predicate", "action", "unknown", "variable", "ego", "anonymous", "error")

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<comment>%[^\n]*)
  | (?P<number>[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"?)
  | (?P<punct>:-|\\\+|[(),.:=\#])
""", re.VERBOSE)

# line-to-line states (a QSyntaxHighlighter block state is an int)
START, HEAD, BODY, DIRECTIVE = 0, 1, 2, 3


@dataclass(frozen=True)
class Span:
    """``length`` characters from ``start`` (0-based, within the line) are of ``kind``; ``text`` is the piece."""

    start: int
    length: int
    kind: str
    text: str = ""


class LineState(int):
    """The lexer state at the end of a line (an int, as a highlighter stores it)."""


def classify_line(line: str, state: int, predicates: dict[str, bool] | None) -> tuple[list[Span], int]:
    """Spans of one line and the state at its end. ``predicates`` maps each ontology predicate name to whether
    it is an action (None: no ontology known, every predicate counts as known). ``state`` is the previous line's
    end state (:data:`START` for the first line)."""
    spans: list[Span] = []
    if line.startswith(DISABLED_PREFIX):
        return [Span(0, len(line), "disabled", line)], state
    i, n = 0, len(line)
    label_ok = state == START
    while i < n:
        m = _TOKEN.match(line, i)
        if m is None:
            spans.append(Span(i, 1, "error", line[i]))
            i += 1
            continue
        kind, text = m.lastgroup or "", m.group()
        j = m.end()
        if kind == "ws":
            i = j
            continue
        if kind == "comment":
            spans.append(Span(i, j - i, "comment", text))
        elif kind == "string":
            spans.append(Span(i, j - i, "string" if len(text) > 1 and text.endswith('"') else "error", text))
        elif kind == "number":
            spans.append(Span(i, j - i, "number", text))
        elif kind == "punct":
            if text == "#" and state == START:
                state = DIRECTIVE
                w = _TOKEN.match(line, j)
                end = w.end() if w is not None and w.lastgroup == "name" else j
                spans.append(Span(i, end - i, "directive", line[i:end]))
                j = end
            elif text == ".":
                spans.append(Span(i, 1, "punct", text))
                state = START
                label_ok = True
            elif text == ":-":
                spans.append(Span(i, 2, "keyword", text))
                state = BODY
            elif text == "\\+":
                spans.append(Span(i, 2, "keyword", text))
            else:
                spans.append(Span(i, 1, "punct", text))
        else:  # a name
            nxt = _next_char(line, j)
            if state == DIRECTIVE:
                spans.append(Span(i, j - i, "directive" if nxt == "=" else "label", text))
            elif label_ok and state == START and nxt == ":" and not line.startswith(":-", _skip_ws(line, j)):
                spans.append(Span(i, j - i, "label", text))
            elif text in ("Not", "not") and nxt == "(":
                spans.append(Span(i, j - i, "keyword", text))
            elif nxt == "(":
                spans.append(Span(i, j - i, _predicate_kind(text, state, predicates), text))
                if state == START:
                    state = HEAD
            elif text == "_":
                spans.append(Span(i, 1, "anonymous", text))
            elif text == EGO:
                spans.append(Span(i, j - i, "ego", text))
            elif text[0].isupper() or text[0] == "_":
                spans.append(Span(i, j - i, "variable", text))
            else:
                spans.append(Span(i, j - i, "error", text))
            label_ok = False
        i = j
    return spans, state


def _skip_ws(line: str, j: int) -> int:
    while j < len(line) and line[j] in " \t":
        j += 1
    return j


def _next_char(line: str, j: int) -> str:
    j = _skip_ws(line, j)
    return line[j] if j < len(line) else ""


def _predicate_kind(name: str, state: int, predicates: dict[str, bool] | None) -> str:
    if predicates is None:
        return "head" if state in (START, HEAD) else "predicate"
    is_action = predicates.get(name)
    if state in (START, HEAD):     # the head of a clause
        return "head" if is_action else "head-error"
    if is_action is None:
        return "unknown"
    return "action" if is_action else "predicate"


def classify_text(text: str, predicates: dict[str, bool] | None) -> list[list[Span]]:
    """Spans of every line of ``text`` (what the highlighter computes block by block)."""
    state = START
    out = []
    for line in text.split("\n"):
        spans, state = classify_line(line, state, predicates)
        out.append(spans)
    return out


@dataclass(frozen=True)
class ClauseSpan:
    """A statement's lines (1-based, inclusive) and whether it is disabled (every line has the marker)."""

    first: int
    last: int
    enabled: bool


def clause_spans(text: str) -> list[ClauseSpan]:
    """Every clause / constraint of ``text`` (directives excluded), enabled or disabled, by lines. Tolerant: an
    unfinished statement at the end runs to its last token."""
    out: list[ClauseSpan] = []
    lines = text.split("\n")
    state = START
    in_stmt = in_dir = False
    first = last = 0
    off_first: int | None = None
    for no, line in enumerate(lines, 1):
        if line.startswith(DISABLED_PREFIX):
            if off_first is None:
                off_first = no
            if _ends_statement(line[len(DISABLED_PREFIX):]):
                out.append(ClauseSpan(off_first, no, False))
                off_first = None
            continue
        if off_first is not None:   # a disabled clause whose '.' was lost: it ends where the marker ends
            out.append(ClauseSpan(off_first, no - 1, False))
            off_first = None
        spans, state = classify_line(line, state, None)
        for s in spans:
            if s.kind == "comment":
                continue
            if s.kind == "directive" and not in_stmt and not in_dir:
                in_dir = True
                continue
            if s.kind == "punct" and s.text == ".":
                if in_dir:
                    in_dir = False
                elif in_stmt:
                    out.append(ClauseSpan(first, no, True))
                    in_stmt = False
                continue
            if not in_dir and not in_stmt:
                in_stmt, first = True, no
            last = no
    if off_first is not None:
        out.append(ClauseSpan(off_first, len(lines), False))
    if in_stmt:
        out.append(ClauseSpan(first, last, True))
    return sorted(out, key=lambda c: c.first)


def _ends_statement(line: str) -> bool:
    spans, _ = classify_line(line, BODY, None)
    real = [s for s in spans if s.kind != "comment"]
    return bool(real) and real[-1].kind == "punct" and real[-1].text == "."


def set_clause_enabled(text: str, line: int, enabled: bool) -> tuple[str, ClauseSpan] | None:
    """``text`` with the clause at ``line`` (1-based) enabled or disabled, and that clause's span; None when no
    clause covers the line or it already is in that state."""
    for c in clause_spans(text):
        if c.first <= line <= c.last:
            if c.enabled == enabled:
                return None
            lines = text.split("\n")
            for k in range(c.first - 1, c.last):
                lines[k] = lines[k][len(DISABLED_PREFIX):] if enabled else DISABLED_PREFIX + lines[k]
            return "\n".join(lines), ClauseSpan(c.first, c.last, enabled)
    return None


def toggle_comment(lines: Iterable[str]) -> list[str]:
    """Comment or uncomment lines, like an IDE's Ctrl+/: when every non-blank line is already a ``%`` comment,
    remove one ``%`` (and one following space) from each; otherwise prefix each non-blank line with ``% ``."""
    lines = list(lines)
    body = [ln for ln in lines if ln.strip()]
    if body and all(ln.lstrip().startswith("%") for ln in body):
        out = []
        for ln in lines:
            k = ln.find("%")
            if k < 0 or ln[:k].strip():
                out.append(ln)
                continue
            rest = ln[k + 1:]
            out.append(ln[:k] + (rest[1:] if rest.startswith(" ") else rest))
        return out
    return [("% " + ln) if ln.strip() else ln for ln in lines]


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def word_at(line: str, col: int) -> tuple[int, str]:
    """The identifier ending at 0-based ``col`` of ``line`` (what completion completes): (start, prefix)."""
    start = col
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
        start -= 1
    return start, line[start:col]
