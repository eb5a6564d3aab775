"""Clause coverage of a recorded episode: how often each clause decided an agent's action, and which never did.

Read from the episode's ``fired`` array ([T, N]: per step and agent, the id of the clause that fired for the
*decided* action — the first clause in file order whose body held — ``-1`` when no rule derived it (default
Normal) and ``-2`` when the action was forced by an override). Forced entries are not rule decisions and are
left out of every count and of the total. A clause that also held but was not the first, or that derived an
action other than the decided one, is not counted: coverage says which clauses *explain* the recorded
behaviour, exactly what the inspector shows.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["ClauseCount", "Coverage", "clause_coverage", "episode_coverage"]

FIRED_DEFAULT = -1
FIRED_FORCED = -2


@dataclass(frozen=True)
class ClauseCount:
    id: int
    label: str
    head: str
    count: int
    share: float                 # count / rule decisions
    line: int | None = None      # line in the analysed rule file, when the clause is found there

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "head": self.head, "count": self.count,
                "share": self.share, "line": self.line}


@dataclass(frozen=True)
class Coverage:
    steps: int
    agents: int
    decisions: int               # (step, agent) entries decided by the rules (forced ones excluded)
    forced: int
    default: int                 # decisions no rule derived (default Normal)
    clauses: tuple[ClauseCount, ...]
    first_step: int = 0          # counted from this step on (a rule branch: the steps its newest program decided)

    @property
    def never_fired(self) -> tuple[ClauseCount, ...]:
        return tuple(c for c in self.clauses if c.count == 0)

    def __str__(self) -> str:
        since = f" (steps {self.first_step}–{self.first_step + self.steps - 1}, decided by the newest rules)" \
            if self.first_step else ""
        lines = [f"coverage over {self.steps} steps{since} x {self.agents} agents: {self.decisions} rule decisions "
                 f"({self.default} default Normal, {self.forced} forced actions left out)"]
        for c in self.clauses:
            where = f" (line {c.line})" if c.line else ""
            lines.append(f"  {c.label}{where}: {c.count} ({100 * c.share:.1f} %)")
        never = ", ".join(c.label for c in self.never_fired)
        lines.append(f"never fired: {never or 'none'}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "first_step": self.first_step, "agents": self.agents,
                "decisions": self.decisions, "forced": self.forced,
                "default": self.default, "clauses": [c.to_dict() for c in self.clauses],
                "never_fired": [c.label for c in self.never_fired]}


def clause_coverage(fired: np.ndarray, clauses: Sequence[Mapping[str, Any]],
                    lines: Mapping[str, int | None] | None = None) -> Coverage:
    """Coverage from a ``fired`` array [T, N] and the clause table it refers to (``{"id", "head", "label"}``
    entries, as in an episode's ``meta["clauses"]``); ``lines`` maps labels to lines of a rule file."""
    fired = np.asarray(fired)
    t, n = fired.shape if fired.ndim == 2 else (0, 0)
    flat = fired.reshape(-1).astype(np.int64)
    forced = int((flat == FIRED_FORCED).sum())
    decided = flat[flat != FIRED_FORCED]
    counts = np.bincount(decided[decided >= 0], minlength=len(clauses)) if decided.size else \
        np.zeros(len(clauses), np.int64)
    total = int(decided.size)
    out = []
    for c in clauses:
        cid = int(c["id"])
        k = int(counts[cid]) if 0 <= cid < len(counts) else 0
        label = str(c.get("label", f"clause {cid}"))
        out.append(ClauseCount(cid, label, str(c.get("head")), k, k / total if total else 0.0,
                               (lines or {}).get(label)))
    return Coverage(t, n, total, forced, int((decided == FIRED_DEFAULT).sum()), tuple(out))


def episode_coverage(episode, program=None) -> Coverage:
    """Coverage of an :class:`core.sim.episode.Episode` (or buffer) with its own clause table; clause lines are
    taken from ``program`` (the analysed rule section) for clauses with the same label and text.

    A recording whose rules were changed from a step on (``meta["rule_segments"]``, core/sim/rule_segments.py)
    is covered over the steps its newest program decided, with that program's clauses (ids as in its own
    table): what the rule editor, which shows the newest rules, asks about."""
    clauses = list(episode.meta.get("clauses") or [])
    fired = episode.array("fired")
    segments = sorted((e for e in episode.meta.get("rule_segments") or [] if isinstance(e, dict)),
                      key=lambda e: int(e["step"]))
    first = 0
    if segments:   # the program that decided the newest recorded step (or the newest program, nothing recorded)
        decided = [e for e in segments if int(e["step"]) < episode.num_steps]
        last = decided[-1] if decided else segments[-1]
        first, offset, count = int(last["step"]), int(last["offset"]), int(last["count"])
        clauses = [dict(c, id=int(c["id"]) - offset) for c in clauses if offset <= int(c["id"]) < offset + count]
        fired = np.asarray(fired[first:], np.int64)
        fired = np.where(fired >= 0, fired - offset, fired)
    lines: dict[str, int | None] = {}
    if program is not None:
        texts = {str(c.get("label")): str(c.get("text")) for c in clauses}
        for c in program.clauses:
            if c.label in texts and texts[c.label] == str(c) and c.pos is not None:
                lines[c.label] = c.pos.line
    cov = clause_coverage(fired, clauses, lines)
    return replace(cov, first_step=first) if first else cov
