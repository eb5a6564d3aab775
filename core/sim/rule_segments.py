"""Rule segments: one recording decided by different rule programs in consecutive step ranges.

Why: the rule editor's *apply from the shown step* branches the recording at step k and lets the edited rules
decide from there, keeping steps 0..k (the studio's branch, as the agent editor's concept/priority branch does).
The steps before k were decided by the old rules and the steps from k by the new ones, so every reader of a
recorded clause id (inspector, colourings, statistics, coverage) must know which program produced which step:

* the episode meta's ``clauses`` table holds every segment's clauses, one after the other, with *global* ids:
  a segment's clause ``i`` is recorded in ``fired`` as ``offset + i``. Readers that only look a clause id up in
  ``meta["clauses"]`` (colour by fired clause, statistics, coverage) need nothing else;
* ``meta["rule_segments"]`` lists the segments in step order, each ``{"step", "offset", "count", "section",
  "rules", "ontology"}``: the step from which it decides, where its clauses start in the table, how many, and the
  texts of its program (the section that ran, as rule text) and of its ontology, so a reopened project
  re-simulates every segment with the rules that decided it and the inspector renders a firing with the clause
  that really fired. A recording without the key was decided by one program (its ``clauses``).

:func:`schedule` turns the meta into :class:`RuleSegment` objects for :meth:`core.sim.simulation.Simulation.
set_rule_schedule`; :func:`clauses_for` gives the clause objects indexed by global id for the inspector.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping

from core.base.errors import LogiCityError
from core.logic.lang.ontology import loads_ontology
from core.logic.lang.program import parse_program

__all__ = ["SEGMENTS_KEY", "RuleSegment", "segment_entry", "segments", "schedule", "clauses_for", "offset_at",
           "program_texts", "check"]

SEGMENTS_KEY = "rule_segments"


@dataclass(eq=False)
class RuleSegment:
    """A rule program deciding from ``step`` on; its clause ``i`` is recorded as ``offset + i``. Engines are
    built on first use, in the thread that steps the simulation (a z3 engine keeps its context there)."""

    step: int
    offset: int
    program: Any
    _engines: dict = field(default_factory=dict)

    @property
    def ontology(self) -> Any:
        return self.program.ontology

    def engine(self, name: str, make: Any) -> Any:
        """The engine ``name`` for this program, built once with ``make(name, program)`` (the simulation's
        ``make_engine``; passed in so this module does not import the simulation)."""
        if name not in self._engines:
            self._engines[name] = make(name, self.program)
        return self._engines[name]


def program_texts(program: Any) -> tuple[str, str]:
    """(rule text, ontology YAML) that parse back into ``program`` (its clauses in the same order, so clause
    ``i`` keeps id ``i``; labels given by the user are written, generated ones come back the same)."""
    return program.to_text(), program.ontology.to_yaml()


def segment_entry(step: int, offset: int, program: Any, section: str | None) -> dict:
    """The meta entry of ``program`` deciding from ``step`` with its clauses at ``offset`` (module docstring)."""
    rules, ontology = program_texts(program)
    return {"step": int(step), "offset": int(offset), "count": len(program.clauses), "section": section,
            "rules": rules, "ontology": ontology}


def segments(meta: Mapping[str, Any]) -> list[dict]:
    """The meta's segment entries in step order ([] for a recording decided by one program)."""
    entries = meta.get(SEGMENTS_KEY) or []
    return sorted((e for e in entries if isinstance(e, dict)), key=lambda e: int(e.get("step", 0)))


@lru_cache(maxsize=16)
def _parse(rules: str, ontology: str) -> Any:
    return parse_program(rules, loads_ontology(ontology, "<recorded ontology>"), "<recorded rules>")


def schedule(meta: Mapping[str, Any]) -> dict[int, RuleSegment]:
    """step -> :class:`RuleSegment` for every segment of the meta (empty without segments); raises
    :class:`~core.base.errors.LogiCityError` when a recorded program does not parse."""
    return {int(e["step"]): RuleSegment(int(e["step"]), int(e["offset"]), _parse(e["rules"], e["ontology"]))
            for e in segments(meta)}


def offset_at(meta: Mapping[str, Any], step: int) -> int:
    """Where the clauses of the program that decided ``step`` start in ``meta["clauses"]`` (0 without
    segments)."""
    out = 0
    for e in segments(meta):
        if int(e["step"]) <= step:
            out = int(e["offset"])
    return out


def clauses_for(meta: Mapping[str, Any], program: Any) -> tuple:
    """The clause objects a recorded ``fired`` id indexes: every segment's clauses in table order, or
    ``program``'s clauses for a recording without segments (episode files are checked on opening: every
    segment's texts parse, :func:`check`)."""
    entries = segments(meta)
    if not entries:
        return tuple(getattr(program, "clauses", ()))
    out: list = []
    for e in entries:
        out[int(e["offset"]):] = list(_parse(e["rules"], e["ontology"]).clauses)
    return tuple(out)


def check(meta: Mapping[str, Any]) -> str | None:
    """Why the meta's segments cannot be used (a text that does not parse, clause counts that do not match the
    table), or None."""
    for i, e in enumerate(segments(meta)):
        try:
            program = _parse(e["rules"], e["ontology"])
        except LogiCityError as exc:
            return f"entry {i} (from step {e['step']}): its rules do not parse: {exc}"
        if len(program.clauses) != int(e["count"]):
            return f"entry {i} (from step {e['step']}) has {len(program.clauses)} clauses, not {e['count']}"
    return None
