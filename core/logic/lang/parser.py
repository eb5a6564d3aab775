"""Hand-written lexer and recursive-descent parser for ``.rules`` files.

Why hand-written: the grammar is tiny (clauses, literals, three directives), and a hand-written parser gives
exact ``line:col`` positions and "expected …, got …" messages without a dependency. Text is only ever
tokenised, never evaluated. The output is a raw tree (:class:`RawFile`); :mod:`core.logic.lang.program` checks it
against an ontology.

Grammar (EBNF)::

    file       = { directive | statement } ;
    directive  = "#" ( "section" NAME | "task" (STRING | NAME) { NAME "=" value } | "ontology" NAME ) "." ;
    statement  = [ NAME ":" ] ( atom [ ":-" body ] | ":-" body ) "." ;
    body       = literal { "," literal } ;
    literal    = atom | "Not" "(" atom ")" | "\\+" atom ;
    atom       = NAME "(" term { "," term } ")" ;
    term       = VARIABLE | "_" ;               (* variables start with an upper-case letter or "_" *)
    value      = NUMBER | STRING | NAME ;
    comment    = "%" … end of line ;
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple

from core.base.errors import RuleError, SourcePos
from core.logic.lang.syntax import Atom, Literal

__all__ = ["Token", "tokenize", "iter_tokens", "check_rule_size", "MAX_RULE_CHARS", "RawClause", "RawTask", "RawSection", "RawFile", "parse_raw", "MAIN_SECTION"]

#: Name of the implicit section of a file without ``#section`` directives.
MAIN_SECTION = "main"

_TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<comment>%[^\n]*)
  | (?P<number>[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<punct>:-|\\\+|[(),.:=\#])
""", re.VERBOSE)

#: Longest rule text accepted (characters). Rule files are hand-written (the bundled ones are under 10 kB); a
#: bigger text is refused before it is tokenised. Documented in docs/rules.md ("Limits").
MAX_RULE_CHARS = 250_000
#: Longest number literal in a directive (``reward=``): more digits than any meaningful reward, and far below
#: what Python refuses to convert.
MAX_NUMBER_CHARS = 40


class Token(NamedTuple):
    """One token. A named tuple rather than a frozen dataclass: it is built for every token of every parse (the rule
    editor re-parses after each keystroke) and a tuple is cheaper to make."""

    kind: str  # name | number | string | punct | eof
    text: str
    line: int
    col: int

    def describe(self) -> str:
        if self.kind == "eof":
            return "end of file"
        if self.kind == "string":
            return f"string {self.text}"
        return f"'{self.text}'"


def check_rule_size(text: str, file: str | None = None) -> None:
    """Refuse a rule text longer than :data:`MAX_RULE_CHARS` (RuleError at 1:1)."""
    if len(text) > MAX_RULE_CHARS:
        raise RuleError(f"rule text too long ({len(text)} characters; the limit is {MAX_RULE_CHARS})", file, 1, 1)


def iter_tokens(text: str, file: str | None = None) -> Iterator[Token]:
    """Tokens one by one (comments and whitespace dropped), ending with an ``eof`` token. Lazy, so a parser
    reading it reports the first syntax error without tokenising the rest of the file."""
    check_rule_size(text, file)
    line, line_start, i, n = 1, 0, 0, len(text)
    while i < n:
        m = _TOKEN_RE.match(text, i)
        col = i - line_start + 1
        if m is None:
            ch = text[i]
            if ch == '"':
                raise RuleError("unterminated string (a string must end on the same line)", file, line, col)
            raise RuleError(f"unexpected character {ch!r}", file, line, col)
        kind = m.lastgroup or ""
        if kind == "nl":
            line += 1
            line_start = m.end()
        elif kind not in ("ws", "comment"):
            yield Token(kind, m.group(), line, col)
        i = m.end()
    yield Token("eof", "", line, i - line_start + 1)


def tokenize(text: str, file: str | None = None) -> list[Token]:
    """Split rule text into tokens (comments and whitespace dropped). Raises :class:`RuleError`."""
    return list(iter_tokens(text, file))


class _TokenStream:
    """Tokens pulled from :func:`iter_tokens` as the parser reaches them, a batch at a time (index access like a
    list; past the end, the ``eof`` token). Batches keep the per-token cost of laziness low; a syntax error is
    still found after at most one batch beyond it."""

    BATCH = 256

    def __init__(self, tokens: Iterator[Token]) -> None:
        self._it = tokens
        self._buf: list[Token] = []
        self._done = False

    def __getitem__(self, i: int) -> Token:
        try:
            return self._buf[i]
        except IndexError:
            pass
        while len(self._buf) <= i and not self._done:
            more = list(itertools.islice(self._it, self.BATCH))
            self._buf.extend(more)
            self._done = len(more) < self.BATCH
        return self._buf[min(i, len(self._buf) - 1)]


@dataclass
class RawClause:
    head: Atom | None
    body: list[Literal]
    label: str | None
    pos: SourcePos
    label_pos: SourcePos | None = None


@dataclass
class RawTask:
    name: str
    options: dict[str, tuple[object, SourcePos]]
    pos: SourcePos
    clauses: list[RawClause] = field(default_factory=list)


@dataclass
class RawSection:
    name: str
    pos: SourcePos | None
    items: list[RawClause | RawTask] = field(default_factory=list)


@dataclass
class RawFile:
    sections: list[RawSection]
    ontology_hint: str | None = None
    file: str | None = None


def _unescape(s: str) -> str:
    body = s[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


class _Parser:
    def __init__(self, toks: _TokenStream, file: str | None) -> None:
        self.toks = toks
        self.i = 0
        self.file = file
        self.anon = 0

    # -- helpers ------------------------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[self.i + k]

    def error(self, msg: str, tok: Token | None = None) -> RuleError:
        t = tok or self.tok
        return RuleError(msg, self.file, t.line, t.col)

    def expected(self, what: str) -> RuleError:
        return self.error(f"expected {what}, got {self.tok.describe()}")

    def is_punct(self, text: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text == text

    def take_punct(self, text: str, what: str | None = None) -> Token:
        if not self.is_punct(text):
            raise self.expected(what or f"'{text}'")
        t = self.tok
        self.i += 1
        return t

    def take_name(self, what: str) -> Token:
        if self.tok.kind != "name":
            raise self.expected(what)
        t = self.tok
        self.i += 1
        return t

    def pos(self, t: Token | None = None) -> SourcePos:
        t = t or self.tok
        return SourcePos(t.line, t.col)

    # -- grammar ------------------------------------------------------------------------------------------
    def parse(self) -> RawFile:
        main = RawSection(MAIN_SECTION, None)
        sections: list[RawSection] = [main]
        current = main
        task: RawTask | None = None
        hint: str | None = None
        while self.tok.kind != "eof":
            if self.is_punct("#"):
                hash_tok = self.tok
                self.i += 1
                word = self.take_name("a directive name (section, task or ontology) after '#'")
                if word.text == "section":
                    name = self.take_name("a section name")
                    self.take_punct(".", "'.' to end the #section directive")
                    if any(s.name == name.text for s in sections if s is not main):
                        raise self.error(f"section {name.text!r} appears twice", name)
                    current = RawSection(name.text, self.pos(hash_tok))
                    sections.append(current)
                    task = None
                elif word.text == "task":
                    task = self.task_header(hash_tok)
                    current.items.append(task)
                elif word.text == "ontology":
                    name = self.take_name("an ontology name")
                    self.take_punct(".", "'.' to end the #ontology directive")
                    hint = name.text
                else:
                    raise self.error(f"unknown directive '#{word.text}' (expected #section, #task or "
                                     f"#ontology)", word)
                continue
            clause = self.statement()
            if task is not None:
                task.clauses.append(clause)
            else:
                current.items.append(clause)
        if len(sections) > 1:
            if main.items:
                first = main.items[0]
                p = first.pos
                raise RuleError("clauses before the first #section directive: put them inside a section",
                                self.file, p.line, p.col)
            sections = sections[1:]
        return RawFile(sections, hint, self.file)

    def task_header(self, hash_tok: Token) -> RawTask:
        if self.tok.kind == "string":
            name = _unescape(self.tok.text)
            self.i += 1
        elif self.tok.kind == "name":
            name = self.tok.text
            self.i += 1
        else:
            raise self.expected("a task rule name (a name or a quoted string)")
        options: dict[str, tuple[object, SourcePos]] = {}
        while not self.is_punct("."):
            key = self.take_name("an option (reward=…, dead=…, description=…) or '.'")
            self.take_punct("=", f"'=' after {key.text!r}")
            vtok = self.tok
            if vtok.kind == "number":
                if len(vtok.text) > MAX_NUMBER_CHARS:
                    raise self.error(f"number too long ({len(vtok.text)} characters; at most {MAX_NUMBER_CHARS})",
                                     vtok)
                value: object = float(vtok.text) if any(c in vtok.text for c in ".eE") else int(vtok.text)
            elif vtok.kind == "string":
                value = _unescape(vtok.text)
            elif vtok.kind == "name":
                value = vtok.text
            else:
                raise self.expected(f"a value for {key.text!r}")
            self.i += 1
            if key.text in options:
                raise self.error(f"option {key.text!r} given twice", key)
            options[key.text] = (value, self.pos(vtok))
        self.take_punct(".")
        return RawTask(name, options, self.pos(hash_tok))

    def statement(self) -> RawClause:
        start = self.tok
        label = None
        label_pos = None
        if self.tok.kind == "name" and self.peek().kind == "punct" and self.peek().text == ":":
            label = self.tok.text
            label_pos = self.pos()
            self.i += 2
        body: list[Literal]
        if self.is_punct(":-"):
            self.i += 1
            body = self.body()
            self.take_punct(".", "',' or '.' after a body literal")
            return RawClause(None, body, label, self.pos(start), label_pos)
        if self.tok.kind != "name":
            raise self.expected("a clause (Head(X) :- Body.), a constraint (:- Body.) or a '#' directive")
        head = self.atom()
        body = []
        if self.is_punct(":-"):
            self.i += 1
            body = self.body()
            self.take_punct(".", "',' or '.' after a body literal")
        else:
            self.take_punct(".", "':-' or '.' after the head")
        return RawClause(head, body, label, self.pos(start), label_pos)

    def body(self) -> list[Literal]:
        lits = [self.literal()]
        while self.is_punct(","):
            self.i += 1
            lits.append(self.literal())
        return lits

    def literal(self) -> Literal:
        if self.is_punct("\\+"):
            self.i += 1
            return Literal(self.atom(), False)
        if self.tok.kind == "name" and self.tok.text in ("Not", "not"):
            self.i += 1
            self.take_punct("(", "'(' after Not")
            if self.tok.kind == "name" and self.tok.text in ("Not", "not") or self.is_punct("\\+"):
                raise self.expected("an atom inside Not(...) (double negation is not allowed: write the atom "
                                    "itself)")
            atom = self.atom()
            self.take_punct(")", "')' to close Not(")
            return Literal(atom, False)
        if self.tok.kind != "name":
            raise self.expected("a body literal (P(X, Y), Not(P(X)) or \\+ P(X))")
        return Literal(self.atom(), True)

    def atom(self) -> Atom:
        name = self.take_name("a predicate name")
        self.take_punct("(", f"'(' after predicate {name.text!r} (atoms are written P(X) or P(X, Y))")
        args = [self.term()]
        while self.is_punct(","):
            self.i += 1
            args.append(self.term())
        self.take_punct(")", "',' or ')' in the argument list")
        return Atom(name.text, tuple(args), self.pos(name))

    def term(self) -> str:
        t = self.tok
        if t.kind != "name":
            raise self.expected("a variable (X for the ego, another upper-case name for other entities)")
        if t.text == "_":
            self.i += 1
            self.anon += 1
            return f"_#{self.anon}"  # cannot clash with a written name; printed back as "_"
        if not (t.text[0].isupper() or t.text[0] == "_"):
            raise self.error(f"{t.text!r} is a constant; arguments must be variables (X = the ego, other "
                             f"upper-case names = entities in view)", t)
        self.i += 1
        return t.text


def parse_raw(text: str, file: str | None = None) -> RawFile:
    """Parse rule text into a :class:`RawFile` (syntax only). Raises :class:`RuleError` with a position."""
    if not isinstance(text, str):
        raise RuleError("rule text must be a string", file)
    return _Parser(_TokenStream(iter_tokens(text, file)), file).parse()
