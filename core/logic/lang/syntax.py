"""Syntax tree of the rule language (see ``docs/rules.md``).

Plain frozen dataclasses: the parser builds them, :mod:`core.logic.lang.program` validates them against an ontology,
the engines compile them. ``X`` is the ego everywhere; every other variable is existential over the entities in
the ego's view (the ego included).
"""
from __future__ import annotations

from dataclasses import dataclass

from core.base.errors import SourcePos

__all__ = ["EGO", "Atom", "Literal", "Clause", "format_clause"]

#: The ego variable. Heads are always ``Action(X)``.
EGO = "X"


def _show(var: str) -> str:
    """Anonymous variables (``_`` in the source) are stored as ``_#k`` and shown as ``_``."""
    return "_" if var.startswith("_#") else var


@dataclass(frozen=True)
class Atom:
    pred: str
    args: tuple[str, ...]
    pos: SourcePos | None = None

    def __str__(self) -> str:
        return f"{self.pred}({', '.join('_' if a.startswith('_#') else a for a in self.args)})"


@dataclass(frozen=True)
class Literal:
    atom: Atom
    positive: bool = True

    @property
    def pred(self) -> str:
        return self.atom.pred

    @property
    def args(self) -> tuple[str, ...]:
        return self.atom.args

    @property
    def pos(self) -> SourcePos | None:
        return self.atom.pos

    def __str__(self) -> str:
        return str(self.atom) if self.positive else f"Not({self.atom})"

    def render(self, binding: dict[str, str]) -> str:
        """The literal with each variable shown as ``V=Name`` (explanations)."""
        args = ", ".join(f"{_show(a)}={binding[a]}" if a in binding else _show(a) for a in self.atom.args)
        s = f"{self.atom.pred}({args})"
        return s if self.positive else f"Not({s})"


@dataclass(frozen=True)
class Clause:
    """``head(X) :- body.``; ``head`` None = integrity constraint ``:- body.``.

    ``id`` is the clause's index in its program/section; ``number`` is its 1-based rank among clauses with the
    same head (constraints count separately), used for default labels like ``Stop#2``.
    """

    head: str | None
    body: tuple[Literal, ...]
    label: str
    id: int = 0
    number: int = 1
    pos: SourcePos | None = None
    user_label: bool = False

    @property
    def variables(self) -> tuple[str, ...]:
        """Existential variables in order of first appearance (witness order)."""
        out: list[str] = []
        for lit in self.body:
            for a in lit.args:
                if a != EGO and a not in out:
                    out.append(a)
        return tuple(out)

    @property
    def is_constraint(self) -> bool:
        return self.head is None

    def __str__(self) -> str:
        return format_clause(self)


def format_clause(c: Clause, *, with_label: bool | None = None) -> str:
    """Source text of a clause. Labels are printed when user-given (or when ``with_label`` is True)."""
    show = c.user_label if with_label is None else with_label
    prefix = f"{c.label}: " if show else ""
    body = ", ".join(str(lit) for lit in c.body)
    if c.head is None:
        return f"{prefix}:- {body}."
    head = f"{c.head}({EGO})"
    return f"{prefix}{head} :- {body}." if body else f"{prefix}{head}."
