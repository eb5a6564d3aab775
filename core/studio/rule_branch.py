"""Apply edited rules *from the shown step* as a branch of the same recording (no Qt).

Why: a rule author who changes a rule wants to see what the new rules decide in the situation on the screen,
with the history that led there still in the recording (to compare, to scrub back, to save). So this is the
studio's branch (the recorded steps after the shown step k are discarded, as stepping from a past state does),
and the edited rules decide from step k on while steps 0..k keep the decisions and explanations of the rules
that made them. The recording's meta says which program decided which steps (core/sim/rule_segments.py):

* ``meta["rule_segments"]`` gains an entry for the edited program from step k (segments from k on are replaced),
  and ``meta["clauses"]`` its clauses with ids after the kept segments' ones, so the recorded ``fired`` ids of
  every step index the one table the colourings, statistics and coverage read, and the inspector renders each
  firing with the clause of the program that decided that step;
* the simulation re-simulates the recording through step k with the recorded programs and continues with the
  edited one (:func:`core.studio.apply.start_config` builds the schedule), and so does a reopened project;
* ``branched_from`` records the step, seed and the provenance, with ``"rules": true``.

Call :func:`branch_rules_in_place` *before* the project's config changes: the program that decided the recording
so far is the project's current one when the recording has no segments yet. Agents edited but not applied may
differ only in concepts and priorities (:func:`branch_problem`); they then change at step k as well.
"""
from __future__ import annotations

from typing import Any

from core.sim.replay import config_texts
from core.sim.rule_segments import SEGMENTS_KEY, segment_entry, segments
from core.sim.simulation import clause_table
from core.studio.apply import BRANCH_KEY, apply_status, branch_in_place, continue_problem

__all__ = ["branch_problem", "branch_rules_in_place", "rules_segments_text"]


def branch_problem(session: Any) -> str | None:
    """Why the shown recording cannot be continued with edited rules in place, or None: the re-simulation of
    steps 0..k runs the project's city and agents, so they must be the ones that made the recording — or differ
    only in concepts and priorities, which then change at step k too (the agent editor's branch in place,
    :func:`core.studio.apply.branch_in_place`; :func:`branch_rules_in_place` does both)."""
    st = apply_status(session)
    if st is None or session.history is None:
        return "there is no recording"
    if st.recorded is None:
        return "the recording does not say which city and agents made it (an older file)"
    if st.pending and not st.city_changed and continue_problem(session) is None:
        return None
    if st.pending:
        what = " and ".join(w for w, c in (("city", st.city_changed), ("agents", st.agents_changed)) if c)
        return (f"the {what} were edited since this recording (apply them first in the agent editor, or "
                f"re-simulate from step 0 with the edited rules)")
    return None


def branch_rules_in_place(session: Any, k: int, config: Any) -> int:
    """Keep the recording's states 0..k, discard the rest and let ``config``'s program decide from step k on (see
    the module docstring); returns the step branched at. ``session.project.config`` must still be the config
    that made the recording."""
    history, old = session.history, session.project.config
    status = apply_status(session)
    assert status is not None   # the session has a project (its config was read above)
    agents_too = status.agents_changed    # only concepts/priorities (branch_problem)
    k = int(min(max(k, 0), session.num_steps))
    meta = history.meta
    entries = segments(meta) or [segment_entry(0, 0, old.program, old.rule_section)]
    keep = [e for e in entries if int(e["step"]) < k]
    offset = int(keep[-1]["offset"]) + int(keep[-1]["count"]) if keep else 0
    program = config.program
    parent = {"step": k, "seed": int(meta.get("seed", session.project.seed)), "provenance": meta.get("provenance"),
              "in_place": True, "rules": True}
    session.truncate(k)
    clauses = [dict(c) for c in meta.get("clauses") or [] if int(c["id"]) < offset]
    clauses += [dict(c, id=int(c["id"]) + offset, segment=len(keep)) for c in clause_table(program)]
    meta["clauses"] = clauses
    meta[SEGMENTS_KEY] = keep + [segment_entry(k, offset, program, config.rule_section)]
    texts = dict(meta.get("config_texts") or {})
    new_texts = config_texts(config)
    texts.update({role: new_texts[role] for role in ("rules", "ontology")})
    meta["config_texts"] = texts            # a read-only replay of the saved file loads the newest program
    meta["rule_section"] = config.rule_section
    meta[BRANCH_KEY] = parent
    history.widen_witness(max(1, int(program.max_vars)))
    if agents_too:      # the edited concepts/priorities hold from step k on as well
        branch_in_place(session, k)
        meta[BRANCH_KEY] = {**parent, "in_place": True}
    return k


def rules_segments_text(meta: dict) -> str | None:
    """One line for the status bar / episode info: which steps which rules decided ("rules: steps 0–7 first
    program, from step 8 edited (12 clauses)"); None for a recording decided by one program."""
    entries = segments(meta)
    if len(entries) < 2:
        return None
    parts = []
    for i, e in enumerate(entries):
        end = entries[i + 1]["step"] - 1 if i + 1 < len(entries) else None
        span = f"steps {e['step']}–{end}" if end is not None else f"from step {e['step']}"
        parts.append(f"{span}: {e['count']} clauses")
        parts[-1] += f" [{e['section']}]" if e.get("section") else ""
    return f"Rules changed during the recording ({len(entries)} programs): " + "; ".join(parts)
