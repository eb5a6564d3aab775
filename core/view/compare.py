"""Agents side by side (no Qt): the facts of several inspector reports as rows, and which rows differ.

Why: "why does Car_2 stop while Car_5 goes?" is answered by putting their recorded decisions, fired clauses,
witnesses and states next to each other; the Compare panel (widgets/inspect/agent_compare.py) formats these rows and a
test checks them against the reports without a QApplication.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from core.view.inspect import AgentReport


@dataclass(frozen=True)
class CompareRow:
    label: str
    values: tuple[str, ...]     # one per compared agent, in order

    @property
    def differs(self) -> bool:
        return len(set(self.values)) > 1


def _clause_label(report: AgentReport, clauses: Sequence[Mapping[str, Any]]) -> str:
    if report.decided is None:
        return "—"
    if report.forced:
        return "forced"
    c = report.fired_clause
    if 0 <= c < len(clauses):
        return str(clauses[c].get("label", c))
    return "default" if c == -1 else str(c)


def compare_rows(reports: Sequence[AgentReport], clauses: Sequence[Mapping[str, Any]] = ()) -> tuple[CompareRow, ...]:
    """The facts of ``reports`` (the same state, one per agent) as rows; ``clauses`` = the episode's clause table
    (``meta["clauses"]``) names the fired clauses."""
    def row(label: str, fn) -> CompareRow:
        return CompareRow(label, tuple(fn(r) for r in reports))

    return (
        row("Type", lambda r: f"{r.kind} ({r.detailed})"),
        row("Concepts", lambda r: ", ".join(r.concepts) or "—"),
        row("Priority", lambda r: str(r.priority)),
        row("Action", lambda r: "—" if r.decided is None else r.decided + (" (forced)" if r.forced else "")),
        row("Fired clause", lambda r: _clause_label(r, clauses)),
        row("Witness", lambda r: ", ".join(f"{v} = {n}" for v, n in r.witness if n != r.name) or "—"),
        row("Rules derived", lambda r: ", ".join(r.derived) or "—"),
        row("Position", lambda r: f"{r.position[0]}, {r.position[1]}"),
        row("Heading", lambda r: r.heading),
        row("Goal", lambda r: f"{r.goal[0]}, {r.goal[1]}"),
        row("Goals reached", lambda r: str(r.goals_reached)),
    )
