"""Rule diagnostics: every problem of a rule text at once, each at ``file:line:col``, for the editor and the CLI.

Why not just :func:`~core.logic.lang.program.parse_rules`: loading stops at the first error, which is right for
running rules but not for an editor's Problems list or a CI check, which want every unknown predicate, every
arity mismatch and the warnings (unused variables, unsafe negation) of the whole file in one pass. The checks
here mirror the loader's: a text with no ``error`` diagnostic loads, and a text that does not load has at least
one ``error`` (the loader's own message is reported when the per-literal checks find nothing).

A syntax error stops the pass (the parser cannot recover a statement reliably), so it is the only diagnostic
then. Cost: one tokenise + parse + one pass over the literals; well under a millisecond per clause
(bench/rules.py measures the largest bundled file).
"""
from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from core.base.errors import RuleError, SourcePos
from core.logic.lang.ontology import Ontology
from core.logic.lang.parser import RawClause, RawFile, RawTask, parse_raw
from core.logic.lang.program import rule_file_from_raw
from core.logic.lang.syntax import EGO, Literal

__all__ = ["Diagnostic", "diagnose", "has_errors", "ERROR", "WARNING"]

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    """One problem: ``severity`` (error | warning), ``code`` (a stable short name for filters and tests), 1-based
    ``line``/``col`` and ``length`` (characters to underline; 1 when unknown)."""

    severity: str
    code: str
    message: str
    line: int
    col: int
    length: int = 1
    file: str | None = None

    def __str__(self) -> str:
        loc = ":".join(str(x) for x in (self.file, self.line, self.col) if x is not None)
        return f"{loc}: {self.severity}: {self.message} [{self.code}]"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    return any(d.severity == ERROR for d in diags)


def _suggest(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _show(var: str) -> str:
    return "_" if var.startswith("_#") else var


def diagnose(text: str, ontology: Ontology, file: str | None = None) -> list[Diagnostic]:
    """All diagnostics of a rule text, sorted by position. Never raises for bad rule text."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        raw = parse_raw(text, file)
    except RuleError as exc:
        return [Diagnostic(ERROR, "syntax", exc.message, exc.line or 1, exc.col or 1, 1, file)]
    out: list[Diagnostic] = []
    for clause in _raw_clauses(raw):
        out += _clause_diagnostics(clause, ontology, file)
    if not any(d.severity == ERROR for d in out):
        # the loader's remaining checks (stratification, labels, #task options, sections); first error only
        try:
            rule_file_from_raw(raw, ontology, check=True)
        except RuleError as exc:
            code = "stratification" if ("unstratified" in exc.message or "recursive" in exc.message) else "semantic"
            out.append(Diagnostic(ERROR, code, exc.message, exc.line or 1, exc.col or 1, 1, file))
    out.sort(key=lambda d: (d.line, d.col, d.severity != ERROR))
    return out


def _raw_clauses(raw: RawFile) -> list[RawClause]:
    out: list[RawClause] = []
    for sec in raw.sections:
        for item in sec.items:
            if isinstance(item, RawTask):
                out += item.clauses
            else:
                out.append(item)
    return out


def _diag(severity: str, code: str, message: str, pos: SourcePos | None, length: int,
          file: str | None) -> Diagnostic:
    return Diagnostic(severity, code, message, pos.line if pos else 1, pos.col if pos else 1, max(1, length), file)


def _clause_diagnostics(c: RawClause, onto: Ontology, file: str | None) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    if c.head is not None:
        h = c.head
        p = onto.get(h.pred)
        if p is None:
            out.append(_diag(ERROR, "unknown-predicate",
                             f"unknown predicate {h.pred!r} in the head{_suggest(h.pred, onto.names)}", h.pos,
                             len(h.pred), file))
        elif not p.is_action:
            acts = ", ".join(a.name for a in onto.actions) or "none in this ontology"
            out.append(_diag(ERROR, "head-not-action", f"the head must be an action predicate ({acts}); {h.pred} "
                             f"is a {p.kind} predicate", h.pos, len(h.pred), file))
        elif len(h.args) != 1:
            out.append(_diag(ERROR, "arity", f"arity mismatch: {h.pred} takes 1 argument, got {len(h.args)}", h.pos,
                             len(h.pred), file))
        elif h.args[0] != EGO:
            out.append(_diag(ERROR, "head-not-ego", f"the head's argument must be the ego variable {EGO}, got "
                             f"{_show(h.args[0])}", h.pos, len(h.pred), file))
    for lit in c.body:
        a = lit.atom
        p = onto.get(a.pred)
        if p is None:
            out.append(_diag(ERROR, "unknown-predicate", f"unknown predicate {a.pred!r}{_suggest(a.pred, onto.names)}",
                             a.pos, len(a.pred), file))
        elif len(a.args) != p.arity:
            out.append(_diag(ERROR, "arity", f"arity mismatch: {a.pred} takes {p.arity} argument"
                             f"{'s' * (p.arity > 1)}, got {len(a.args)}", a.pos, len(a.pred), file))
        elif p.is_action and a.args != (EGO,):
            out.append(_diag(ERROR, "action-not-ego", f"action predicate {a.pred} can only be applied to the ego "
                             f"{EGO} in a body", a.pos, len(a.pred), file))
    out += _variable_warnings(c.body, file)
    return out


def _variable_warnings(body: list[Literal], file: str | None) -> list[Diagnostic]:
    """Unused variables and unsafe negation.

    *Unused variable*: a named variable that occurs once in a clause in which another existential variable
    links two or more literals (``IsYoung(Y), IsYoung(Z), NextTo(Y, W)``: W was probably meant to be Z; write
    ``_`` for "some entity"). A lone existential such as ``IsInInter(Y)`` ("someone is in the intersection") is
    the normal idiom and not reported. *Unsafe negation*: a variable that occurs only inside negated literals:
    ``Not(IsCar(Y))`` alone means "some entity in view is not a car" — the ego itself included — which is rarely
    what was meant."""
    seen: dict[str, list[tuple[Literal, bool]]] = {}
    for lit in body:
        for a in lit.args:
            if a == EGO:
                continue
            seen.setdefault(a, []).append((lit, lit.positive))
    linked = any(len(uses) > 1 for uses in seen.values())
    out: list[Diagnostic] = []
    for var, uses in seen.items():
        lit0 = uses[0][0]
        if not var.startswith("_") and len(uses) == 1 and linked:
            out.append(_diag(WARNING, "unused-variable", f"variable {var} is used only once (a typo? write _ for "
                             f"'some entity')", lit0.pos, len(lit0.pred), file))
        if not any(pos for _, pos in uses):
            out.append(_diag(WARNING, "unsafe-negation", f"variable {_show(var)} occurs only in negated literals: "
                             f"it ranges over every entity in view, the ego included (bind it with a positive "
                             f"literal)", lit0.pos, len(lit0.pred), file))
    return out
