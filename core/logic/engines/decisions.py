"""Engine results as plain data: which actions hold for each ego, which clause fired, the witness binding.

Both engines return the same :class:`Decisions`. Fired clause = the first clause (file order) of that head
whose body holds; witness = the lexicographically smallest binding of the clause's existential variables
(variables in order of first appearance, entities in the ego's domain order: ego first, then in-view
agents ascending). That makes explanations deterministic and identical across engines.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from core.base.codes import ACTION_NAMES, Action
from core.logic.lang.program import Program, TaskSection
from core.logic.lang.syntax import EGO, Clause

__all__ = ["Decisions", "Explanation", "Firing", "TaskCheck", "Violation"]


@dataclass(frozen=True)
class Firing:
    """One clause that fired for an ego, with its binding (variable → agent)."""

    head: str | None  # action name, None for a violated constraint
    clause_id: int
    label: str
    number: int  # 1-based rank among clauses of the same head
    binding: tuple[tuple[str, int, str], ...]  # (variable, global agent index, agent name), X first
    literals: tuple[str, ...]  # body literals rendered with the binding
    user_label: bool = False

    def __str__(self) -> str:
        what = f"clause {self.number}" + (f" '{self.label}'" if self.user_label else "")
        body = ", ".join(self.literals) if self.literals else "true"
        if self.head is None:
            return f"unsat ← constraint {self.number}" + (f" '{self.label}'" if self.user_label else "") + \
                f": {body}"
        return f"{self.head} ← {what}: {body}"

    def to_dict(self) -> dict[str, Any]:
        return {"head": self.head, "clause_id": self.clause_id, "label": self.label, "number": self.number,
                "binding": [{"variable": v, "agent": a, "name": n} for v, a, n in self.binding],
                "literals": list(self.literals), "text": str(self)}


@dataclass(frozen=True)
class Explanation:
    """Why an agent got its actions in one step."""

    agent: int
    agent_name: str
    firings: tuple[Firing, ...]
    default_normal: bool
    unsat: Firing | None = None

    @property
    def actions(self) -> tuple[str, ...]:
        return tuple(f.head for f in self.firings if f.head) or ("Normal",)

    def __str__(self) -> str:
        lines = [str(f) for f in self.firings]
        if self.unsat is not None:
            lines.append(str(self.unsat))
            lines.append("Normal (default: a constraint is violated, the problem is unsatisfiable)")
        elif self.default_normal:
            lines.append("Normal (default: no action derived)")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "agent_name": self.agent_name, "actions": list(self.actions),
                "default_normal": self.default_normal, "firings": [f.to_dict() for f in self.firings],
                "unsat": self.unsat.to_dict() if self.unsat else None, "text": str(self)}


def make_firing(clause: Clause, ego_agent: int, witness: np.ndarray, names: tuple[str, ...]) -> Firing:
    def name(i: int) -> str:
        return names[i] if 0 <= i < len(names) else f"#{i}"

    binding = [(EGO, int(ego_agent), name(int(ego_agent)))]
    for v, a in zip(clause.variables, witness):
        binding.append(("_" if v.startswith("_#") else v, int(a), name(int(a))))
    lookup = {EGO: name(int(ego_agent))}
    lookup.update({v: name(int(a)) for v, a in zip(clause.variables, witness)})
    lits = tuple(lit.render(lookup) for lit in clause.body)
    return Firing(clause.head, clause.id, clause.label, clause.number, tuple(binding), lits, clause.user_label)


@dataclass(frozen=True, eq=False)
class Decisions:
    """Per ego row e (= agent e for a :class:`~core.logic.grounding.grounder.Grounding`):

    * ``holds`` bool [E, 4] in :class:`core.base.codes.Action` order — the action predicates derived true; an empty
      row means the default Normal.
    * ``clause`` int32 [E, 4] — id (``program.clauses`` index) of the fired clause, -1 when not derived.
    * ``witness`` int32 [E, 4, V] — global agent indices bound to the fired clause's existential variables (in
      ``clause.variables`` order), -1 beyond the clause's variables. V = ``program.max_vars``.
    * ``unsat`` bool [E] — a constraint held (no action derived, default Normal); ``violated`` int32 [E] its
      clause id (-1), ``violated_witness`` int32 [E, V].
    """

    program: Program
    names: tuple[str, ...]
    ego_agents: np.ndarray  # int32 [E] global index of each row's ego
    holds: np.ndarray
    clause: np.ndarray
    witness: np.ndarray
    unsat: np.ndarray
    violated: np.ndarray
    violated_witness: np.ndarray

    def __len__(self) -> int:
        return len(self.holds)

    @property
    def default_normal(self) -> np.ndarray:
        """bool [E]: nothing derived → the default action Normal applies."""
        return cast(np.ndarray, ~self.holds.any(axis=1))  # [E, A] reduced over one axis: an array

    @property
    def effective(self) -> np.ndarray:
        """bool [E, 4]: ``holds`` with Normal set where nothing was derived (what the simulator acts on)."""
        eff = self.holds.copy()
        eff[self.default_normal, Action.NORMAL] = True
        return eff

    def actions(self, row: int) -> tuple[Action, ...]:
        """Derived actions of one row, or ``(Action.NORMAL,)`` by default."""
        acts = tuple(Action(i) for i in range(4) if self.holds[row, i])
        return acts or (Action.NORMAL,)

    def firing(self, row: int, action: Action | int) -> Firing | None:
        cid = int(self.clause[row, int(action)])
        if cid < 0:
            return None
        return make_firing(self.program.clauses[cid], int(self.ego_agents[row]), self.witness[row, int(action)],
                           self.names)

    def explain(self, row: int) -> Explanation:
        """Which clause fired for each derived action (in evaluation order), or why Normal is the default."""
        firings = []
        for head in self.program.heads:
            a = ACTION_NAMES.index(head)
            f = self.firing(row, a)
            if f is not None:
                firings.append(f)
        unsat = None
        if self.unsat[row] and self.violated[row] >= 0:
            unsat = make_firing(self.program.clauses[int(self.violated[row])], int(self.ego_agents[row]),
                                self.violated_witness[row], self.names)
        ego = int(self.ego_agents[row])
        name = self.names[ego] if 0 <= ego < len(self.names) else f"#{ego}"
        return Explanation(ego, name, tuple(firings), not bool(self.holds[row].any()), unsat)

    def same_as(self, other: "Decisions", *, witnesses: bool = True) -> bool:
        ok = np.array_equal(self.holds, other.holds) and np.array_equal(self.unsat, other.unsat)
        if witnesses:
            ok = ok and np.array_equal(self.clause, other.clause) and np.array_equal(self.witness, other.witness)
        return bool(ok)


@dataclass(frozen=True)
class Violation:
    rule: str
    clause: str  # clause label
    clause_id: int
    witness: tuple[tuple[str, int, str], ...]  # (variable, agent, name)
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "clause": self.clause, "clause_id": self.clause_id,
                "witness": [{"variable": v, "agent": a, "name": n} for v, a, n in self.witness],
                "text": self.text}


@dataclass(frozen=True)
class TaskCheck:
    """Result of judging one chosen action against SPF task rules (docs/reference.md#task-rule-semantics).

    ``reward`` = sum of the rewards of violated rules (each rule counted once); ``fail`` = a violated rule is
    dead."""

    action: Action
    violations: tuple[Violation, ...] = field(default_factory=tuple)
    reward: float = 0.0
    fail: bool = False

    @property
    def violated_rules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v.rule for v in self.violations))

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action.label, "reward": self.reward, "fail": self.fail,
                "violations": [v.to_dict() for v in self.violations]}


def task_violations(section: TaskSection, ego_agent: int, action: Action, bodies: np.ndarray,
                    witness: np.ndarray, names: tuple[str, ...]) -> TaskCheck:
    """Assemble a :class:`TaskCheck` from per-clause body truth ``bodies[C]`` and witnesses ``[C, V]``."""
    clauses = section.clauses
    violations = []
    reward = 0.0
    fail = False
    for rule in section.rules:
        hit = False
        for c in rule.clauses:
            if bodies[c.id] and c.head != ACTION_NAMES[int(action)]:
                f = make_firing(c, ego_agent, witness[c.id], names)
                violations.append(Violation(rule.name, c.label, c.id, f.binding, str(f)))
                hit = True
        if hit:
            reward += rule.reward
            fail = fail or rule.dead
    del clauses
    return TaskCheck(Action(int(action)), tuple(violations), reward, fail)
