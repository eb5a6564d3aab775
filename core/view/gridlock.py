"""The text of "Show the cycle" for a gridlock (core/sim/gridlock.py): which agents wait on which, through which
recorded clause and witness, the clauses' text and the agents stuck behind the cycle. Plain lines, so the studio's
dialog, the CLI and tests show the same words."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from core.logic.engines.decisions import make_firing
from core.sim.gridlock import Gridlock, WaitLink, clause_label


def describe(g: Gridlock, names: Sequence[str], clauses: Sequence[Mapping[str, Any]] | None = None,
             state: int | None = None, program: Any = None) -> list[str]:
    """Lines for "Show the cycle": the cycle's agents with the clause and witness linking each to the next, the
    clauses' text, then the agents stuck behind it at ``state`` (default: at its end, or now while it lasts). With
    the rule ``program`` each firing is rendered with the agents' names bound, as the inspector shows it."""
    end = f"until step {g.end}" if g.end is not None else "still locked at the end of the recording"
    out = [f"Gridlock detected at step {g.step} ({len(g.cycle)} agents in the cycle, standing still since step "
           f"{g.since}; {end})", "", "Cycle (each waits on the next):"]
    for lk in g.links:
        out.append(f"  {names[lk.agent]} stops by {clause_label(lk.clause, clauses)} waiting on "
                   f"{names[lk.waits_on]} (recorded at step {lk.step})")
        text = firing_text(lk, names, program)
        if text:
            out.append(f"      {text}")
    out += ["", "Clauses:"]
    for cid in g.clauses():
        text = next((str(c.get("text", "")) for c in clauses or () if c.get("id") == cid), "")
        out.append(f"  {clause_label(cid, clauses)}: {text}".rstrip())
    if state is None:
        behind = g.blocked_at(g.end) if g.end is not None else [b for b in g.blocked if b.left is None]
        when = f"step {g.end}" if g.end is not None else "the end"
    else:
        behind, when = g.blocked_at(state), f"step {state}"
    if behind:
        out += ["", f"Stuck behind it at {when} ({len(behind)}):"]
        for b in behind:
            out.append(f"  {names[b.agent]} waits on {names[b.link.waits_on]} "
                       f"({clause_label(b.link.clause, clauses)}, since step {b.joined})")
    return out


def firing_text(link: WaitLink, names: Sequence[str], program: Any) -> str | None:
    """The recorded firing behind ``link`` rendered with names (``Stop ← clause 7: …, CollidingClose(X=Car_1,
    Y=Car_2)``); None without the rule program or when the clause is not in it."""
    clauses = getattr(program, "clauses", None)
    if not clauses or not 0 <= link.clause < len(clauses):
        return None
    clause = clauses[link.clause]
    witness = np.asarray(link.witness or (link.waits_on,), np.int64)
    return str(make_firing(clause, link.agent, witness[: len(clause.variables)], tuple(names)))
