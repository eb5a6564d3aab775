"""The inspector's content for one agent at one recorded state, as plain data (no Qt).

Why: the GUI test "inspector matches the core explanation" compares the dock with this report and this report
with the logic core; keeping the extraction here makes the dock a formatter.

At the newest state nothing has been decided yet, so the decision, its explanation and the view table describe
the previous step (the one that led to the shown state); ``decision_step`` says which.

Sources: identity, position, heading, goal and the action come from the recorded episode. The fired clause and
its witness come from the *recorded* ``fired``/``witness`` arrays (what really happened). The table of true
predicates in the agent's view and the full explanation (every derived action) are recomputed by grounding the
recorded snapshot with the logic core; that is deterministic except for CollidingClose coin flips, so the
report says whether the recomputed clause agrees with the recorded one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..codes import ACTION_NAMES, HEADING_NAMES, Kind
from .colouring import detailed_type


@dataclass(frozen=True)
class ViewRow:
    """One entity in the agent's view: its true unary predicates and true relations to other entities."""

    name: str
    agent: int
    unary: tuple[str, ...]
    relations: tuple[str, ...]   # rendered "Pred(this, other)"


@dataclass(frozen=True)
class AgentReport:
    agent: int
    name: str
    kind: str
    detailed: str
    concepts: tuple[str, ...]
    priority: int
    step: int
    position: tuple[int, int]
    heading: str
    goal: tuple[int, int]
    goals_reached: int
    decision_step: int | None     # the step whose decision is shown: k, or k-1 at the newest state
    decided: str | None           # action decided during decision_step (None: nothing recorded yet)
    realised: str | None
    derived: tuple[str, ...]      # action predicates the rules derived (empty: default Normal)
    fired: str | None             # recorded fired clause with its witness, rendered
    fired_clause: int             # recorded clause id (-1: default / none)
    witness: tuple[tuple[str, str], ...]   # (variable, agent name) of the recorded firing
    explanation: str | None       # recomputed explanation text (all derived actions)
    recomputed_clause: int | None
    view: tuple[ViewRow, ...]
    actions: np.ndarray           # int8 [T] decided action per recorded step

    @property
    def consistent(self) -> bool:
        """The recomputed clause for the decided action equals the recorded one."""
        return self.recomputed_clause is None or self.recomputed_clause == self.fired_clause


class Inspector:
    """Builds reports for a project's configuration (ontology, program, city) over any episode view."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self._grounder = None
        self._engine = None
        self._program = None
        self.error: str | None = None

    @property
    def program(self):
        if self._program is None:
            self._program = self.config.program
        return self._program

    @property
    def grounder(self):
        if self._grounder is None:
            from ..logic.grounding import Grounder

            self._grounder = Grounder(self.config.city, self.config.ontology)
        return self._grounder

    def _engine_or_none(self):
        if self._engine is None and self.error is None:
            try:
                from ..logic.compiled import CompiledEngine

                self._engine = CompiledEngine(self.program)
            except Exception as exc:  # a program the compiled engine cannot run: explain from records only
                self.error = f"{type(exc).__name__}: {exc}"
        return self._engine

    def report(self, episode, k: int, agent: int, *, recompute: bool = True, seed: int = 0) -> AgentReport:
        snap = episode.snapshot(k)
        agents = snap.agents
        names = tuple(agents.names)
        decided = realised = fired_text = None
        derived: tuple[str, ...] = ()
        fired_clause = -1
        witness: tuple[tuple[str, str], ...] = ()
        d = k if k < episode.num_steps else (k - 1 if k > 0 else None)
        if d is not None:
            rec = episode.step_record(d)
            decided = ACTION_NAMES[int(rec.decided[agent])]
            realised = ACTION_NAMES[int(rec.realised[agent])]
            derived = tuple(ACTION_NAMES[a] for a in range(4) if rec.holds[agent, a])
            fired_clause = int(rec.fired[agent])
            if fired_clause >= 0 and fired_clause < len(getattr(self.program, "clauses", ())):
                from ..logic.decisions import make_firing

                f = make_firing(self.program.clauses[fired_clause], agent, np.asarray(rec.witness[agent]), names)
                fired_text = str(f)
                witness = tuple((v, n) for v, _, n in f.binding)
            elif fired_clause < 0:
                fired_text = f"{decided} (default: no rule derived an action)" if decided == "Normal" and \
                    not derived else None
        explanation = None
        recomputed = None
        view: tuple[ViewRow, ...] = ()
        if recompute:
            try:
                g = self.grounder.ground(snap if d in (None, k) else episode.snapshot(d), np.random.default_rng(seed))
                ev = g.ego_view(agent)
                view = tuple(ViewRow(r.name, r.agent, tuple(r.unary),
                                     tuple(f"{p}({r.name}, {o})" for p, o in r.relations)) for r in ev.rows)
                eng = self._engine_or_none()
                if eng is not None:
                    dec = eng.decide(g)
                    explanation = str(dec.explain(agent))
                    if decided is not None:
                        recomputed = int(dec.clause[agent, ACTION_NAMES.index(decided)])
            except Exception as exc:  # never let a logic-core problem take the inspector down
                explanation = f"(could not recompute the explanation: {type(exc).__name__}: {exc})"
        pos = snap.positions[agent]
        goal = episode.goals(k)[agent]
        reached = int(np.asarray(episode.array("reached")[:k, agent]).sum()) if k else 0
        return AgentReport(
            agent=agent, name=names[agent], kind=Kind(int(agents.kinds[agent])).label,
            detailed=detailed_type(agents, agent), concepts=tuple(agents.concept_names(agent)),
            priority=int(agents.priorities[agent]), step=k, position=(int(pos[0]), int(pos[1])),
            heading=HEADING_NAMES[int(snap.headings[agent])], goal=(int(goal[0]), int(goal[1])),
            goals_reached=reached, decision_step=d, decided=decided, realised=realised, derived=derived, fired=fired_text,
            fired_clause=fired_clause, witness=witness, explanation=explanation, recomputed_clause=recomputed,
            view=view, actions=np.asarray(episode.array("decided")[:, agent], np.int8).copy())
