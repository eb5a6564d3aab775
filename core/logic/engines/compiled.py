"""Compiled engine: stratified evaluation of the clauses as boolean array operations over all egos at once.

Why this shape: a decision is "for each head, does some clause have a binding of its existential variables
over the ego's domain that makes every literal true". With every ego's domain padded to K entities, one
variable means one ``[E, K]`` axis. All clauses of a head with at most one existential variable are evaluated
together: their literals are gathered from a stacked table of ``[E, K]`` slices (negations pre-computed, a
constant-true row pads short clauses), reduced with ``all`` over literals and ``any`` over the variable axis —
a handful of numpy calls per head, whatever the number of agents. Clauses with two or more existential
variables broadcast over ``[E, K, K, ...]``. Heads are evaluated stratum by stratum, so ``Not(Stop(X))`` in a
body reads the already final Stop. Constraints are checked last; a violated one makes the ego's problem
unsatisfiable (default Normal), as in the reference.

The clause machinery itself (slots, literal classification, the flat group and wide clauses, their limits) is
core/logic/engines/compiled_clauses.py; this module decides heads, strata and the fired clauses (:class:`CompiledEngine`)
and checks SPF task rules with a fixed action (:class:`TaskChecker`).
"""
from __future__ import annotations

import numpy as np

from core.base.codes import ACTION_INDEX, ACTION_NAMES, Action
from core.logic.engines.compiled_clauses import (
    A_TRUE,
    BitRows,
    ClauseSet,
    FlatGroup,
    Lit,
    Slots,
    WideClause,
    classify,
    minus_ones,
    to_global,
)
from core.logic.engines.decisions import Decisions, TaskCheck, task_violations
from core.logic.fast import kernels as fast_kernels
from core.logic.grounding.grounder import DENSE_PAIR_AGENTS, Interpretation
from core.logic.lang.program import Program, TaskSection
from core.logic.lang.syntax import Clause

__all__ = ["CompiledEngine", "TaskChecker", "check_task"]


class CompiledEngine:
    """``CompiledEngine(program).decide(interp) -> Decisions``. Stateless after construction; thread-safe.

    All clause bodies are first evaluated *without* their action literals in one batched pass (their truth
    over the ego's domain does not depend on the actions); then, stratum by stratum, each head combines them
    with its action literals — cheap ``[E]`` operations — so ``Not(Stop(X))`` sees the final Stop.
    """

    def __init__(self, program: Program) -> None:
        if not program.stratified:
            raise ValueError("program is not stratified; it can be analysed but not run")
        self.program = program
        onto = program.ontology
        self.slots = Slots()
        clauses = program.clauses
        self.v = program.max_vars
        lits = [classify(c, onto, self.slots) for c in clauses]
        no_act = [[lt for lt in ls if lt.kind != "act"] for ls in lits]
        flat_rows = [i for i, c in enumerate(clauses) if len(c.variables) <= 1]
        self.flat = FlatGroup(flat_rows, [no_act[i] for i in flat_rows]) if flat_rows else None
        self.wide = [WideClause(i, no_act[i], len(c.variables), c, program.file) for i, c in enumerate(clauses)
                     if len(c.variables) > 1]
        self.s0, self.s1 = len(self.slots.ego), len(self.slots.var)
        if self.flat is not None:
            self.flat.finalize(self.s0, self.s1)
        for wc in self.wide:
            wc.finalize(self.s0, self.s1)

        def group(cl: tuple[Clause, ...]) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
            rows = np.array([c.id for c in cl], dtype=np.int64)
            acts = [[lt.slot + (0 if lt.positive else 4) for lt in lits[c.id] if lt.kind == "act"] for c in cl]
            width = max(len(a) for a in acts)
            idxa = np.array([a + [A_TRUE] * (width - len(a)) for a in acts], dtype=np.int64) if width else None
            return rows, idxa, rows.copy()

        self.heads = [(ACTION_INDEX[h], *group(program.clauses_for(h))) for h in program.heads]
        cons = program.constraints
        self.constraints = group(cons) if cons else None
        self._prepare_selection(lits)

    def _prepare_selection(self, lits: list[list[Lit]]) -> None:
        """Index tables for choosing, after all heads are known, each head's fired clause in one pass.

        Why this is exact: the program is acyclic, so a clause's action literals only name heads of lower
        strata (or never-defined actions) — values that are already final when its head is evaluated. A
        clause body recomputed with the *final* action values is therefore the body the head saw."""
        clauses = self.program.clauses
        n = len(clauses)
        acts = [[lt.slot + (0 if lt.positive else 4) for lt in ls if lt.kind == "act"] for ls in lits]
        width = max([len(a) for a in acts] + [0])
        # every clause's action literals [C, W] (padded with the true row); None when no clause has any
        self._all_idxa = np.array([a + [A_TRUE] * (width - len(a)) for a in acts], dtype=np.int64) \
            if width else None
        # per action (Slow, Normal, Fast, Stop): its clause rows in file order, padded by repeating the last
        # row (argmax picks the first true row, so a repeat never wins); undefined actions point at row 0
        per_action = [[c.id for c in self.program.clauses_for(name)] if name in self.program.heads else []
                      for name in ACTION_NAMES]
        rmax = max([len(r) for r in per_action] + [1])
        self._sel_rows = np.array([(r or [0]) + [(r or [0])[-1]] * (rmax - len(r or [0])) for r in per_action],
                                  dtype=np.int64) if n else np.zeros((4, 1), dtype=np.int64)
        self._sel_flat = self._sel_rows.ravel()
        self._sel_off = (np.arange(4) * self._sel_rows.shape[1])[:, None]
        self._clause_ids = np.array([c.id for c in clauses], dtype=np.int32)
        self._per_e: dict[int, tuple[np.ndarray, ...]] = {}
        self._select_plan: tuple | None = None

    def _kernel_select_plan(self) -> tuple:
        """The heads, selection rows and constraints as padded arrays for kernels.select (see its doc)."""
        h = len(self.heads)
        rmax = max([len(rows) for _, rows, _, _ in self.heads] + [1])
        wmax = max([idxa.shape[1] for _, _, idxa, _ in self.heads if idxa is not None] + [0])
        head_act = np.array([a for a, _, _, _ in self.heads], dtype=np.int64)
        head_rows = np.full((h, rmax), -1, dtype=np.int64)
        head_idxa = np.full((h, rmax, wmax), A_TRUE, dtype=np.int64)
        for i, (_, rows, idxa, _) in enumerate(self.heads):
            head_rows[i, : len(rows)] = rows
            if idxa is not None:
                head_idxa[i, : len(rows), : idxa.shape[1]] = idxa
        c = len(self.program.clauses)
        all_idxa = self._all_idxa if self._all_idxa is not None else np.zeros((c, 0), dtype=np.int64)
        if self.constraints is not None:
            con_rows, con_ids = self.constraints[0], self.constraints[2].astype(np.int32)
        else:
            con_rows, con_ids = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
        return (head_act, head_rows, head_idxa, np.ascontiguousarray(all_idxa, dtype=np.int64),
                np.ascontiguousarray(self._sel_rows, dtype=np.int64), self._clause_ids, con_rows, con_ids,
                int(self.v))

    def _templates(self, e: int) -> tuple[np.ndarray, ...]:
        """Per ego count (memoised; callers copy what they modify): arange(E), the initial action table
        [9, E] (rows 0-3 action a = False, 4-7 not a = True, 8 true), int32 [E] of -1, int32 [E, V] of -1."""
        t = self._per_e.get(e)
        if t is None:
            acts = np.ones((9, e), dtype=bool)
            acts[:4] = False
            t = self._per_e[e] = (np.arange(e), acts, np.full(e, -1, dtype=np.int32),
                                  np.full((e, self.v), -1, dtype=np.int32))
        return t

    def _bases(self, interp: Interpretation, kern=None) -> tuple[np.ndarray, np.ndarray]:
        """Body truth without action literals [C, E] and local witnesses [C, E, V]; ``kern``: the compiled
        kernels (core/logic/fast.py), used when given."""
        e = interp.valid.shape[0]
        c = len(self.program.clauses)
        v = max(self.v, 1)
        bits = self.slots.bit_tables(interp, kern) if kern is not None else None
        if bits is not None:
            return self._bit_bases(interp, kern, *bits, c, v)
        t0, t1 = self.slots.tables(interp)
        if self.flat is not None and not self.wide:
            body, w = self.flat.evaluate(t0, t1, None, interp.valid)  # compiled without action literals
            wit = np.empty((c, e, v), dtype=np.int64)
            wit[:, :, 0] = w
            if v > 1:
                wit[:, :, 1:] = -1
            return body, wit
        body = np.zeros((c, e), dtype=bool)
        wit = minus_ones((c, e, v))
        if self.flat is not None:
            b, w = self.flat.evaluate(t0, t1, None, interp.valid)
            body[self.flat.rows] = b
            wit[self.flat.rows, :, 0] = w
        for wc in self.wide:
            b, w = wc.evaluate(interp, t0, t1, None, self.s0, self.s1)
            body[wc.row] = b
            wit[wc.row, :, : wc.m] = w
        return body, wit

    def _bit_bases(self, interp: Interpretation, kern, t0: np.ndarray, b1: np.ndarray, c: int, v: int
                   ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_bases` on bit rows: the one-variable clauses in one compiled pass (kernels.flat_bodies),
        the wide clauses as before on the views they need, unpacked."""
        e, k = interp.valid.shape
        body = np.zeros((c, e), dtype=bool)
        wit = minus_ones((c, e, v))
        if self.flat is not None:
            fl = self.flat
            b, w = kern.flat_bodies(t0, b1, fl.idx0, fl.idx1, fl.var_rows)
            body[fl.rows] = b
            wit[fl.rows, :, 0] = w
        t1 = BitRows(b1, k, kern)
        for wc in self.wide:
            b, w = wc.evaluate(interp, t0, t1, None, self.s0, self.s1)
            body[wc.row] = b
            wit[wc.row, :, : wc.m] = w
        return body, wit

    def decide(self, interp: Interpretation) -> Decisions:
        e = interp.valid.shape[0]
        v = self.v
        egos = interp.ent[:, 0].astype(np.int32) if e else np.zeros(0, np.int32)
        if e == 0 or not len(self.program.clauses):
            return self._nothing_holds(interp, egos)
        kern = fast_kernels() if e > DENSE_PAIR_AGENTS else None   # small scenes never compile the kernels
        base, wit = self._bases(interp, kern)
        if kern is not None:   # the same steps as below, per ego in one compiled loop (kernels.select)
            plan = self._select_plan
            if plan is None:
                plan = self._select_plan = self._kernel_select_plan()
            holds, clause, witness, unsat, violated, vwit = kern.select(base, wit, interp.ent, *plan)
            return Decisions(self.program, interp.names, egos, holds, clause, witness, unsat, violated, vwit)
        arange, acts, violated, vwit = self._templates(e)
        # heads in stratum order: only whether each holds (the fired clause is chosen afterwards)
        acts = acts.copy()
        for a, rows, idxa, _ in self.heads:
            body = base[rows]
            if idxa is not None:
                body &= acts[idxa].all(axis=1)
            h = body.any(axis=0)
            acts[a] = h
            np.logical_not(h, out=acts[4 + a])
        full = base if self._all_idxa is None else base & acts[self._all_idxa].all(axis=1)  # [C, E]
        holds = np.ascontiguousarray(acts[:4].T)
        # per action: the first clause whose full body holds (rows of _sel_rows), and its local witness
        first = full[self._sel_rows].argmax(axis=1)                   # [4, E] position in the row list
        fired_row = self._sel_flat[first + self._sel_off].T           # [E, 4] clause row
        unsat = np.zeros(e, dtype=bool)
        violated, vwit = violated.copy(), vwit.copy()
        ent_pad = self._padded_ent(interp)
        if self.constraints is not None:
            rows, _, ids = self.constraints
            body = full[rows]
            unsat = body.any(axis=0)
            if unsat.any():
                cfirst = body.argmax(axis=0)
                violated = np.where(unsat, ids[cfirst], -1).astype(np.int32)
                holds[unsat] = False
                if v:
                    vsel = np.where(unsat[:, None], wit[rows[cfirst], arange][:, :v], -1)
                    vwit = ent_pad[arange[:, None], vsel]
        clause = np.where(holds, self._clause_ids[fired_row], -1).astype(np.int32)
        # local witness → global agent index (-1 stays -1: it selects ent_pad's padding column), only where
        # the clause fired
        wsel = np.where(holds[:, :, None], wit[fired_row, arange[:, None]][:, :, :v], -1)
        witness = ent_pad[arange[:, None, None], wsel]
        return Decisions(self.program, interp.names, egos, holds, clause, witness, unsat, violated, vwit)

    def _nothing_holds(self, interp: Interpretation, egos: np.ndarray) -> Decisions:
        """No ego, or an empty program: nothing derived (every ego defaults to Normal)."""
        e, v = interp.valid.shape[0], self.v
        return Decisions(self.program, interp.names, egos, np.zeros((e, 4), dtype=bool),
                         np.full((e, 4), -1, dtype=np.int32), np.full((e, 4, v), -1, dtype=np.int32),
                         np.zeros(e, dtype=bool), np.full(e, -1, dtype=np.int32), np.full((e, v), -1, dtype=np.int32))

    @staticmethod
    def _padded_ent(interp: Interpretation) -> np.ndarray:
        """int32 [E, K+1]: the domains plus a last column of -1, so that indexing with a local witness of -1
        (unbound) yields -1 directly."""
        ent = interp.ent
        out = np.empty((ent.shape[0], ent.shape[1] + 1), dtype=np.int32)
        out[:, :-1] = ent
        out[:, -1] = -1
        return out


class TaskChecker:
    """Fixed-action evaluation of an SPF task section (docs/reference.md#task-rule-semantics): the chosen
    action makes exactly one action predicate true for the ego; a rule is violated iff one of its clause bodies
    holds and that clause's head is not the chosen action."""

    def __init__(self, section: TaskSection) -> None:
        self.section = section
        self.slots = Slots()
        clauses = section.clauses
        self.set = ClauseSet(clauses, section.ontology, self.slots, section.file) if clauses else None
        if self.set is not None:
            self.set.finalize(len(self.slots.ego), len(self.slots.var))
        self.v = max([len(c.variables) for c in clauses] + [0])
        # a task clause always has an action head (program.py refuses one without), which Clause.head cannot say
        self.heads = np.array([ACTION_INDEX[c.head] for c in clauses], dtype=np.int64)  # type: ignore[index]

    def bodies(self, interp: Interpretation, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per clause body truth [C, E] and global witnesses [C, E, V] with ego e's action ``actions[e]``."""
        e = interp.valid.shape[0]
        c = len(self.section.clauses)
        if self.set is None or e == 0:
            return np.zeros((c, e), dtype=bool), np.full((c, e, self.v), -1, dtype=np.int32)
        t0, t1 = self.slots.tables(interp)
        acts = np.zeros((9, e), dtype=bool)
        onehot = np.asarray(actions)[None, :] == np.arange(4)[:, None]
        acts[:4] = onehot
        acts[4:8] = ~onehot
        acts[8] = True
        body, wit = self.set.evaluate(interp, t0, t1, acts, self.v)
        gw = np.stack([to_global(interp.ent, wit[i]) for i in range(c)]) if self.v else \
            np.full((c, e, 0), -1, dtype=np.int32)
        return body, gw

    def check_all(self, interp: Interpretation, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised: (reward float [E], fail bool [E]) for every ego row with its chosen action."""
        actions = np.asarray(actions, dtype=np.int64)
        body, _ = self.bodies(interp, actions)
        violated = body & (self.heads[:, None] != actions[None, :])
        e = interp.valid.shape[0]
        reward = np.zeros(e)
        fail = np.zeros(e, dtype=bool)
        for rule in self.section.rules:
            ids = [c.id for c in rule.clauses]
            hit = violated[ids].any(axis=0)
            reward += np.where(hit, rule.reward, 0.0)
            fail |= hit & rule.dead
        return reward, fail

    def check(self, interp: Interpretation, ego: int, action: Action | int) -> TaskCheck:
        """Judge one ego row's chosen action; violations carry the fired clause and its witness."""
        sub = _RowView(interp, ego)
        body, wit = self.bodies(sub, np.array([int(action)]))
        return task_violations(self.section, int(interp.ent[ego, 0]), Action(int(action)), body[:, 0],
                               wit[:, 0], interp.names)


class _RowView(Interpretation):
    """One ego row of an interpretation (so a single SPF check does not evaluate every agent)."""

    def __init__(self, base: Interpretation, row: int) -> None:
        self.base = base
        self.row = row
        self.ontology = base.ontology
        self.names = base.names
        self.ent = base.ent[row: row + 1]
        self.valid = base.valid[row: row + 1]

    def unary_local(self, pred: str) -> np.ndarray:
        return self.base.unary_local(pred)[self.row: self.row + 1]

    def binary_local(self, pred: str) -> np.ndarray:
        return self.base.binary_local(pred)[self.row: self.row + 1]


def check_task(section: TaskSection, interp: Interpretation, ego: int, action: Action | int) -> TaskCheck:
    """Convenience: judge ``action`` for ``ego`` against ``section`` (the checker is cached on the section)."""
    checker = section.__dict__.get("_checker")
    if checker is None:
        checker = TaskChecker(section)
        object.__setattr__(section, "_checker", checker)
    return checker.check(interp, ego, action)
