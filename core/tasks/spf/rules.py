"""Rules evaluated directly on the SPF observation vector: the oracle's decision and the task-rule check.

Why: in SPF the ego's view is truncated to ``fov_entities`` entities and the observation vector holds *every* ontology
predicate over exactly those entities (docs/reference.md#spf-observation). The expert rules and the task rules only
read predicates of the ego's view, so both are pure functions of (observation, number of real entities, chosen
action). Evaluating them on the vector costs one numpy gather for all clauses — the env calls them every step, where
the general engine's per-call overhead on a one-row view would dominate the step.

Semantics are those of :class:`core.logic.CompiledEngine` / :class:`core.logic.TaskChecker` (tests check
agreement on thousands of random states): existential variables range over the real entities of the view
(placeholders excluded), bindings are enumerated first-variable-major in view order so the witness is the
lexicographically smallest one, heads are evaluated stratum by stratum, a violated constraint gives the
default Normal, and a task rule is violated when a clause body holds (action literals judged with the chosen
action fixed) and the clause's head is not the chosen action (docs/reference.md#task-rule-semantics).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.base.codes import ACTION_INDEX, Action
from core.logic.lang.ontology import Ontology
from core.logic.lang.program import Program, TaskSection
from core.logic.lang.syntax import EGO, Clause

__all__ = ["ObservationLayout", "ViewRules", "ViewDecision", "ViewCheck", "oracle_action"]


@dataclass(frozen=True)
class ObservationLayout:
    """Where each predicate lives in the observation (docs/reference.md#spf-observation):
    ``blocks[name] = (offset, arity)``; a unary block holds ``P(e0..e{n-1})``, a binary block ``P(ei, ej)``
    row-major (i major)."""

    n: int
    blocks: dict[str, tuple[int, int]]
    size: int

    @classmethod
    def of(cls, ontology: Ontology, n_entities: int) -> "ObservationLayout":
        blocks = {}
        off = 0
        for p in ontology.grounded:
            blocks[p.name] = (off, p.arity)
            off += n_entities ** p.arity
        return cls(n_entities, blocks, off)

    def index(self, pred: str, *entities: int) -> int:
        off, arity = self.blocks[pred]
        if len(entities) != arity:
            raise ValueError(f"{pred} takes {arity} argument(s)")
        if arity == 1:
            return off + entities[0]
        return off + entities[0] * self.n + entities[1]

    def describe(self) -> list[tuple[str, int, int]]:
        """(predicate, first index, last index) for documentation and the studio."""
        return [(name, off, off + self.n ** ar - 1) for name, (off, ar) in self.blocks.items()]


@dataclass(frozen=True)
class ViewDecision:
    holds: tuple[bool, bool, bool, bool]   # Slow, Normal, Fast, Stop derived
    clause: tuple[int, int, int, int]      # clause id that fired per action (-1: not derived)
    witness: tuple[tuple[int, ...], ...]   # per action: entity indices (in the view) bound to the variables
    unsat: bool = False

    @property
    def action(self) -> Action:
        return oracle_action(self.holds)


@dataclass(frozen=True)
class ViewCheck:
    action: int
    reward: float
    fail: bool
    violated: tuple[int, ...]              # clause ids (task-section ids) whose rule is violated
    witness: tuple[tuple[int, ...], ...]   # per violated clause: view entity indices bound to its variables


def oracle_action(holds: Sequence[bool]) -> Action:
    """The oracle's conversion (docs/reference.md#spf-oracle): the first derived action in the order Slow, Normal,
    Fast, Stop; nothing derived → Normal."""
    for a in (Action.SLOW, Action.NORMAL, Action.FAST, Action.STOP):
        if holds[a]:
            return a
    return Action.NORMAL


class _Compiled:
    """Index tables of a clause list over the extended observation vector."""

    def __init__(self, clauses: Sequence[Clause], ontology: Ontology, layout: ObservationLayout) -> None:
        n, d = layout.n, layout.size
        self.valid0 = 2 * d          # valid_j at valid0 + j
        self.true = 2 * d + n
        self.false = 2 * d + n + 1
        self.ext_size = 2 * d + n + 2
        self.clauses = list(clauses)
        nv = max([len(c.variables) for c in self.clauses] + [0])
        bmax = n ** nv
        rows: list[list[list[int]]] = []
        self.acts: list[tuple[tuple[int, bool], ...]] = []
        self.bindings: list[list[tuple[int, ...]]] = []
        for c in self.clauses:
            vars_ = list(c.variables)
            binds = list(itertools.product(range(n), repeat=len(vars_)))
            self.bindings.append(binds)
            lit_rows: list[list[int]] = []
            acts = []
            for lit in c.body:
                p = ontology[lit.pred]
                if p.is_action:
                    acts.append((ACTION_INDEX[p.name], lit.positive))
                    continue
                row = []
                for b in binds:
                    ent = {EGO: 0, **{v: b[k] for k, v in enumerate(vars_)}}
                    idx = layout.index(p.name, *(ent[a] for a in lit.args))
                    row.append(idx if lit.positive else d + idx)
                lit_rows.append(row + [self.true] * (bmax - len(binds)))
            for k in range(len(vars_)):  # each variable ranges over the real entities only
                lit_rows.append([self.valid0 + b[k] for b in binds] + [self.true] * (bmax - len(binds)))
            if not lit_rows:
                lit_rows.append([self.true] * bmax)
            lit_rows[0] = lit_rows[0][: len(binds)] + [self.false] * (bmax - len(binds))
            rows.append(lit_rows)
            self.acts.append(tuple(acts))
        lmax = max([len(r) for r in rows] + [1])
        self.idx: np.ndarray = np.full((len(rows), lmax, bmax), self.true, dtype=np.int64)
        for i, r in enumerate(rows):
            self.idx[i, : len(r)] = np.asarray(r, dtype=np.int64)
        self.ids = [c.id for c in self.clauses]

    def bases(self, ext: np.ndarray) -> tuple[list[bool], list[int]]:
        """Body truth without action literals per clause, and the first satisfying binding's index."""
        if not self.clauses:
            return [], []
        m = ext[self.idx].all(axis=1)  # [C, B]
        return m.any(axis=1).tolist(), m.argmax(axis=1).tolist()


class ViewRules:
    """A rule program (decisions) or a task section (checks) compiled against an observation layout."""

    def __init__(self, rules: Program | TaskSection, layout: ObservationLayout) -> None:
        self.rules = rules
        self.layout = layout
        self.ontology = rules.ontology
        d, n = layout.size, layout.n
        self._ext = np.zeros(2 * d + n + 2, dtype=bool)
        self.task: TaskSection | None
        if isinstance(rules, TaskSection):
            self.task = rules
            clauses = rules.clauses
            self._rule_of = {c.id: r for r in rules.rules for c in r.clauses}
        else:
            self.task = None
            clauses = rules.clauses
        self.c = _Compiled(clauses, self.ontology, layout)
        self._pos = {cid: k for k, cid in enumerate(self.c.ids)}
        if isinstance(rules, Program):
            self._heads = [(ACTION_INDEX[h], [self._pos[c.id] for c in rules.clauses_for(h)]) for h in rules.heads]
            self._constraints = [self._pos[c.id] for c in rules.constraints]

    def extend(self, obs: np.ndarray, n_real: int) -> np.ndarray:
        """The extended vector the compiled tables index: [obs, not obs, real-entity mask, true, false]. Rules
        compiled on the same layout share it (the env builds it once per step for the oracle and the check)."""
        d, n = self.layout.size, self.layout.n
        ext = self._ext.copy()
        o = np.asarray(obs) > 0.5
        ext[:d] = o
        ext[d:2 * d] = ~o
        ext[2 * d: 2 * d + min(n_real, n)] = True
        ext[2 * d + n] = True
        return ext

    def _witness(self, k: int, b: int) -> tuple[int, ...]:
        binds = self.c.bindings[k]
        return binds[b] if b < len(binds) else ()

    def decide(self, obs: np.ndarray, n_real: int, ext: np.ndarray | None = None) -> ViewDecision:
        """The program's decision for the ego (entity 0) of the view (``ext``: a prepared :meth:`extend`)."""
        assert self.task is None, "decide() needs a rule program, not a task section"
        base, first = self.c.bases(self.extend(obs, n_real) if ext is None else ext)
        holds = [False, False, False, False]
        fired = [-1, -1, -1, -1]
        wit: list[tuple[int, ...]] = [(), (), (), ()]

        def acts_ok(k: int) -> bool:
            return all(holds[a] == pos for a, pos in self.c.acts[k])

        for a, ks in self._heads:
            for k in ks:
                if base[k] and acts_ok(k):
                    holds[a] = True
                    fired[a] = self.c.ids[k]
                    wit[a] = self._witness(k, first[k])
                    break
        unsat = False
        for k in self._constraints:
            if base[k] and acts_ok(k):
                unsat = True
                break
        if unsat:
            return ViewDecision((False,) * 4, (-1,) * 4, ((),) * 4, True)
        return ViewDecision(tuple(holds), tuple(fired), tuple(wit))  # type: ignore[arg-type]

    def check(self, obs: np.ndarray, n_real: int, action: int, ext: np.ndarray | None = None) -> ViewCheck:
        """Judge the chosen ``action`` against the task rules (docs/reference.md#task-rule-semantics)."""
        assert self.task is not None, "check() needs a task section"
        base, first = self.c.bases(self.extend(obs, n_real) if ext is None else ext)
        action = int(action)
        violated = []
        witness = []
        hit_rules: dict[str, bool] = {}
        for k, cl in enumerate(self.c.clauses):
            assert cl.head is not None   # every task rule clause has a head (core.logic.lang.program checks)
            if not base[k] or ACTION_INDEX[cl.head] == action:
                continue
            if not all((a == action) == pos for a, pos in self.c.acts[k]):
                continue
            violated.append(cl.id)
            witness.append(self._witness(k, first[k]))
            hit_rules[self._rule_of[cl.id].name] = True
        reward = 0.0
        fail = False
        for r in self.task.rules:
            if r.name in hit_rules:
                reward += r.reward
                fail = fail or r.dead
        return ViewCheck(action, reward, fail, tuple(violated), tuple(witness))

    def check_all(self, obs: np.ndarray, n_real: int) -> list[ViewCheck]:
        """:meth:`check` for each of the four actions."""
        ext = self.extend(obs, n_real)
        return [self.check(obs, n_real, a, ext) for a in range(4)]
