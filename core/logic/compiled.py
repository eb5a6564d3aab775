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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..codes import ACTION_INDEX, ACTION_NAMES, Action
from ..errors import RuleError
from .decisions import Decisions, TaskCheck, task_violations
from .fast import kernels as fast_kernels
from .grounding import DENSE_PAIR_AGENTS, Interpretation
from .joins import plan_joins
from .ontology import Ontology
from .program import Program, TaskSection
from .syntax import EGO, Clause

__all__ = ["CompiledEngine", "TaskChecker", "check_task"]

_A_TRUE = 8  # row of the action table that is constant true
#: a many-variable clause is broadcast densely while (egos × K^variables) stays under this many truth values
DENSE_LIMIT = 1 << 22
#: the factorised evaluation refuses a clause whose largest join needs more truth values per ego than this
#: (K^w for w linked variables and K entities in view; 2^25 = 32 Mi, e.g. K = 8 and w = 8)
JOIN_LIMIT = 1 << 25
#: clauses joining more variables at once are refused when the engine is built (no view could afford them)
MAX_JOIN_WIDTH = 12
#: variables besides X per clause (numpy arrays have at most 64 axes; witnesses are stored per variable)
MAX_VARIABLES = 32


class _Slots:
    """Registry of the truth-table slices the compiled clauses read.

    ego slots: ("u", p) = P(X); ("bxx", p) = P(X, X) → arrays [E].
    var slots: ("u", p) = P(V); ("bxv", p) = P(X, V); ("bvx", p) = P(V, X); ("bvv", p) = P(V, V) → [E, K];
    ("valid", "") = the domain mask (slot 0), read like a literal so a variable's range costs no extra op.
    """

    VALID = 0

    def __init__(self) -> None:
        self.ego: dict[tuple[str, str], int] = {}
        self.var: dict[tuple[str, str], int] = {("valid", ""): self.VALID}

    def ego_slot(self, key: tuple[str, str]) -> int:
        return self.ego.setdefault(key, len(self.ego))

    def var_slot(self, key: tuple[str, str]) -> int:
        return self.var.setdefault(key, len(self.var))

    def tables(self, interp: Interpretation) -> tuple[np.ndarray, np.ndarray]:
        """T0 [2*S0+1, E] and T1 [2*S1+1, E, K]: positive slices, their negations, a true row.

        The positive slices come from the interpretation in two batched calls (a grounding gathers them from
        its global tables at once)."""
        e, k = interp.valid.shape
        s0, s1 = len(self.ego), len(self.var)
        t0 = np.empty((2 * s0 + 1, e), dtype=bool)
        if s0:
            t0[:s0] = interp.ego_slices(tuple(self.ego))
        np.logical_not(t0[:s0], out=t0[s0:2 * s0])
        t0[2 * s0] = True
        t1 = np.empty((2 * s1 + 1, e, k), dtype=bool)
        t1[:s1] = interp.var_slices(tuple(self.var))
        np.logical_not(t1[:s1], out=t1[s1:2 * s1])
        t1[2 * s1] = True
        return t0, t1

    def ego_table(self, interp: Interpretation) -> np.ndarray:
        """T0 of :meth:`tables` alone."""
        s0 = len(self.ego)
        t0 = np.empty((2 * s0 + 1, interp.valid.shape[0]), dtype=bool)
        if s0:
            t0[:s0] = interp.ego_slices(tuple(self.ego))
        np.logical_not(t0[:s0], out=t0[s0:2 * s0])
        t0[2 * s0] = True
        return t0

    def bit_tables(self, interp: Interpretation, kern) -> tuple[np.ndarray, np.ndarray] | None:
        """T0 as in :meth:`tables` and T1 as bit rows uint64 [2*S1+1, E] (bit j = entity j: the positive
        slices, their negations — padding bits set, as the bool negations — and an all-true row), for the
        compiled kernels (``kern``); None when views hold more than 64 entities or T0 has more than 64 rows."""
        e, k = interp.valid.shape
        s1 = len(self.var)
        if k > 64 or 2 * len(self.ego) + 1 > 64:   # a word per view entry set, and per ego's T0 column
            return None
        pos = interp.var_bits(tuple(self.var), kern)
        if pos is None:
            return None
        full = np.uint64((1 << k) - 1)
        b1 = np.empty((2 * s1 + 1, e), dtype=np.uint64)
        b1[:s1] = pos
        np.invert(pos, out=b1[s1:2 * s1])
        b1[s1:2 * s1] &= full
        b1[2 * s1] = full
        return self.ego_table(interp), b1


@dataclass
class _Lit:
    kind: str  # "act" | "ego" | "var" | "pair"
    positive: bool
    slot: int = 0  # ego/var slot or action index
    pred: str = ""
    axes: tuple[int, ...] = ()  # variable positions (0-based among the clause's existential variables)


def _classify(clause: Clause, onto: Ontology, slots: _Slots) -> list[_Lit]:
    vars_ = clause.variables
    out = []
    for lit in clause.body:
        p = onto[lit.pred]
        args = lit.args
        if p.is_action:
            out.append(_Lit("act", lit.positive, ACTION_INDEX[p.name]))
            continue
        if p.arity == 1:
            if args[0] == EGO:
                out.append(_Lit("ego", lit.positive, slots.ego_slot(("u", p.name)), p.name))
            else:
                out.append(_Lit("var", lit.positive, slots.var_slot(("u", p.name)), p.name,
                                (vars_.index(args[0]),)))
            continue
        a, b = args
        if a == EGO and b == EGO:
            out.append(_Lit("ego", lit.positive, slots.ego_slot(("bxx", p.name)), p.name))
        elif a == EGO:
            out.append(_Lit("var", lit.positive, slots.var_slot(("bxv", p.name)), p.name, (vars_.index(b),)))
        elif b == EGO:
            out.append(_Lit("var", lit.positive, slots.var_slot(("bvx", p.name)), p.name, (vars_.index(a),)))
        elif a == b:
            out.append(_Lit("var", lit.positive, slots.var_slot(("bvv", p.name)), p.name, (vars_.index(a),)))
        else:
            out.append(_Lit("pair", lit.positive, 0, p.name, (vars_.index(a), vars_.index(b))))
    return out


class _FlatGroup:
    """Clauses with at most one existential variable, evaluated together."""

    def __init__(self, rows: list[int], lits: list[list[_Lit]]) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)  # positions in the caller's clause list
        self.lits = lits
        self.has_var = [any(lt.kind == "var" for lt in ls) for ls in lits]

    def finalize(self, s0: int, s1: int) -> None:
        def pad(lists: list[list[int]], fill: int) -> np.ndarray:
            width = max([len(x) for x in lists] + [1])
            return np.array([x + [fill] * (width - len(x)) for x in lists], dtype=np.int64)

        self.idx0 = pad([[lt.slot + (0 if lt.positive else s0) for lt in ls if lt.kind == "ego"]
                         for ls in self.lits], 2 * s0)
        self.idx1 = pad([([_Slots.VALID] if has else []) + [lt.slot + (0 if lt.positive else s1) for lt in ls
                                                             if lt.kind == "var"]
                         for ls, has in zip(self.lits, self.has_var)], 2 * s1)
        self.idxa = pad([[lt.slot + (0 if lt.positive else 4) for lt in ls if lt.kind == "act"]
                         for ls in self.lits], _A_TRUE)
        self.any_var = any(self.has_var)
        self.no_ego = bool((self.idx0 == 2 * s0).all())
        self.no_act = bool((self.idxa == _A_TRUE).all())
        self.var_rows = np.asarray(self.has_var, dtype=bool)

    def evaluate(self, t0: np.ndarray, t1: np.ndarray, acts: np.ndarray | None, valid: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
        """bodies bool [C, E] and witness local index [C, E] (-1 when the clause has no variable); ``acts``
        may be None when the group was compiled without action literals."""
        c = len(self.rows)
        e = valid.shape[0]
        body = np.ones((c, e), dtype=bool) if self.no_ego else t0[self.idx0].all(axis=1)
        if not self.no_act:
            assert acts is not None
            body &= acts[self.idxa].all(axis=1)
        if self.any_var:
            m = t1[self.idx1].all(axis=1)  # the domain mask is one of the gathered slices
            body &= m.any(axis=2)
            wit = np.where(self.var_rows[:, None], m.argmax(axis=2), -1)
        else:
            wit = np.full((c, e), -1, dtype=np.int64)
        return body, wit


class _WideClause:
    """A clause with two or more existential variables: broadcast over [E', K, ..., K] for the egos E' whose
    ego-only literals hold while that is small (:data:`DENSE_LIMIT`); otherwise evaluated variable by variable
    (:mod:`core.logic.joins`, same answer) in ego chunks of bounded memory, or refused with a :class:`RuleError`
    naming the clause when even that would exceed :data:`JOIN_LIMIT` truth values per ego."""

    def __init__(self, row: int, lits: list[_Lit], nvars: int, clause: Clause, file: str | None) -> None:
        self.row = row
        self.lits = lits
        self.m = nvars
        self.clause = clause
        self.file = file
        if nvars > MAX_VARIABLES:
            raise self._refuse(f"clause {clause.label} has {nvars} variables besides X; the compiled engine "
                               f"evaluates at most {MAX_VARIABLES}")

    def finalize(self, s0: int, s1: int) -> None:
        self.idx0 = np.array([lt.slot + (0 if lt.positive else s0) for lt in self.lits if lt.kind == "ego"]
                             + [2 * s0], dtype=np.int64)
        self.idxa = np.array([lt.slot + (0 if lt.positive else 4) for lt in self.lits if lt.kind == "act"]
                             + [_A_TRUE], dtype=np.int64)
        # per variable: the domain mask and that variable's one-variable literals, gathered and and-ed at once
        self.per_var = [np.array([_Slots.VALID] + [lt.slot + (0 if lt.positive else s1) for lt in self.lits
                                                   if lt.kind == "var" and lt.axes == (i,)], dtype=np.int64)
                        for i in range(self.m)]
        self.pairs = [(lt.pred, lt.axes, lt.positive) for lt in self.lits if lt.kind == "pair"]
        self.plan = plan_joins(self.m, [tuple(sorted(axes)) for _, axes, _ in self.pairs])  # type: ignore[misc]
        if self.plan.width > MAX_JOIN_WIDTH:
            raise self._refuse(f"clause {self.clause.label} links {self.plan.width} of its variables so that they "
                               f"must be evaluated together; the compiled engine joins at most {MAX_JOIN_WIDTH} "
                               f"(see docs/rules.md, 'Limits')")

    def _refuse(self, message: str) -> RuleError:
        pos = self.clause.pos
        return RuleError(message, self.file, pos.line if pos else None, pos.col if pos else None)

    def evaluate(self, interp: Interpretation, t0: np.ndarray, t1: np.ndarray, acts: np.ndarray | None, s0: int,
             s1: int) -> tuple[np.ndarray, np.ndarray]:
        """body [E] and local witness [E, m]; action literals are included only when ``acts`` is given."""
        e, k = interp.valid.shape
        m = self.m
        ego = t0[self.idx0].all(axis=0)
        if acts is not None:
            ego &= acts[self.idxa].all(axis=0)
        rows = np.flatnonzero(ego)
        if len(rows) == 0:
            return ego, _minus_ones((e, m))
        r = len(rows)
        if r * k ** m > DENSE_LIMIT:
            return self._evaluate_joined(interp, t1, rows, e, k)
        acc: np.ndarray | None = None
        for i, idx in enumerate(self.per_var):  # each variable's domain mask and one-variable literals
            shape = [r] + [1] * m
            shape[1 + i] = k
            u = _take(t1, idx, rows).all(axis=0).reshape(shape)
            acc = u if acc is None else acc & u
        assert acc is not None
        for pred, (i, j), positive in self.pairs:
            b = interp.binary_rows(pred, rows)
            if i > j:
                b, (i, j) = b.transpose(0, 2, 1), (j, i)
            shape = [r] + [1] * m
            shape[1 + i] = shape[1 + j] = k
            b = b.reshape(shape)
            acc = acc & (b if positive else ~b)
        flat = acc.reshape(r, -1)
        hit = flat.any(axis=1)
        # the first true binding in row-major order (first variable major), unravelled to one index per variable
        first = np.stack(np.unravel_index(flat.argmax(axis=1), (k,) * m), axis=1)
        body = np.zeros(e, dtype=bool)
        body[rows] = hit
        wit = _minus_ones((e, m))
        wit[rows] = np.where(hit[:, None], first, -1)
        return body, wit


    def _evaluate_joined(self, interp: Interpretation, t1: np.ndarray, rows: np.ndarray, e: int, k: int
                         ) -> tuple[np.ndarray, np.ndarray]:
        """The factorised evaluation (core/logic/joins.py) over ego chunks of at most JOIN_LIMIT values."""
        cost = self.plan.cost(k)
        if cost > JOIN_LIMIT:
            raise self._refuse(f"clause {self.clause.label} needs {k}^{self.plan.width} = {cost} truth values per "
                               f"agent ({self.plan.width} linked variables, {k} entities in view); the limit is "
                               f"{JOIN_LIMIT} (see docs/rules.md, 'Limits')")
        body = np.zeros(e, dtype=bool)
        wit = _minus_ones((e, self.m))
        chunk = max(1, JOIN_LIMIT // cost)
        for start in range(0, len(rows), chunk):
            part = rows[start:start + chunk]
            unary = [_take(t1, idx, part).all(axis=0) for idx in self.per_var]
            tables = []
            for pred, (i, j), positive in self.pairs:
                b = interp.binary_rows(pred, part)
                if i > j:
                    b = b.transpose(0, 2, 1)
                tables.append(b if positive else ~b)
            b, w = self.plan.evaluate(unary, tables)
            body[part] = b
            wit[part] = w
        return body, wit


class _BitRows:
    """The one-variable table T1 as bit rows (uint64 [2*S1+1, E], bit j = entity j; see _Slots.bit_tables), for
    the wide clauses, which read the slices of a few views only: :func:`_take` unpacks just those."""

    def __init__(self, bits: np.ndarray, k: int, kern) -> None:
        self.bits, self.k, self.kern = bits, k, kern


def _take(t1: "np.ndarray | _BitRows", idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """bool [len(idx), len(rows), K] = ``t1[idx[:, None], rows]`` for either form of T1."""
    if isinstance(t1, _BitRows):
        return t1.kern.unpack_rows(t1.bits, np.asarray(idx, dtype=np.int64), np.asarray(rows, dtype=np.int64),
                                   t1.k)
    return t1[idx[:, None], rows]


def _minus_ones(shape: tuple[int, ...], dtype: type = np.int64) -> np.ndarray:
    """``np.full(shape, -1)`` without its Python-level overhead (called several times per step)."""
    out = np.empty(shape, dtype=dtype)
    out.fill(-1)
    return out


class _ClauseSet:
    """A compiled list of clauses: flat group + wide clauses, results in list order."""

    def __init__(self, clauses: Sequence[Clause], onto: Ontology, slots: _Slots, file: str | None = None) -> None:
        self.clauses = list(clauses)
        self.ids = np.array([c.id for c in self.clauses], dtype=np.int64)
        self.nvars = max([len(c.variables) for c in self.clauses] + [0])
        flat_rows, flat_lits, self.wide = [], [], []
        for r, c in enumerate(self.clauses):
            lits = _classify(c, onto, slots)
            if len(c.variables) <= 1:
                flat_rows.append(r)
                flat_lits.append(lits)
            else:
                self.wide.append(_WideClause(r, lits, len(c.variables), c, file))
        self.flat = _FlatGroup(flat_rows, flat_lits) if flat_rows else None

    def finalize(self, s0: int, s1: int) -> None:
        self.s0, self.s1 = s0, s1
        if self.flat is not None:
            self.flat.finalize(s0, s1)
        for wc in self.wide:
            wc.finalize(s0, s1)

    def evaluate(self, interp: Interpretation, t0: np.ndarray, t1: np.ndarray, acts: np.ndarray, v: int
             ) -> tuple[np.ndarray, np.ndarray]:
        """bodies [C, E] and local witnesses [C, E, v] (-1 padded)."""
        e = interp.valid.shape[0]
        c = len(self.clauses)
        if self.flat is not None and not self.wide:
            body, w = self.flat.evaluate(t0, t1, acts, interp.valid)
            wit = np.full((c, e, v), -1, dtype=np.int64)
            if v:
                wit[:, :, 0] = w
            return body, wit
        body = np.zeros((c, e), dtype=bool)
        wit = np.full((c, e, max(v, 1)), -1, dtype=np.int64)
        if self.flat is not None:
            b, w = self.flat.evaluate(t0, t1, acts, interp.valid)
            body[self.flat.rows] = b
            wit[self.flat.rows, :, 0] = w
        for wc in self.wide:
            b, w = wc.evaluate(interp, t0, t1, acts, self.s0, self.s1)
            body[wc.row] = b
            wit[wc.row, :, : wc.m] = w
        return body, wit[:, :, :v]


def _to_global(ent: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Local witness indices [E, V] → global agent indices (-1 kept)."""
    e = ent.shape[0]
    safe = np.maximum(local, 0)
    g = ent[np.arange(e)[:, None], safe]
    return np.where(local >= 0, g, -1).astype(np.int32)


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
        self.slots = _Slots()
        clauses = program.clauses
        self.v = program.max_vars
        lits = [_classify(c, onto, self.slots) for c in clauses]
        no_act = [[lt for lt in ls if lt.kind != "act"] for ls in lits]
        flat_rows = [i for i, c in enumerate(clauses) if len(c.variables) <= 1]
        self.flat = _FlatGroup(flat_rows, [no_act[i] for i in flat_rows]) if flat_rows else None
        self.wide = [_WideClause(i, no_act[i], len(c.variables), c, program.file) for i, c in enumerate(clauses)
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
            idxa = np.array([a + [_A_TRUE] * (width - len(a)) for a in acts], dtype=np.int64) if width else None
            return rows, idxa, rows.copy()

        self.heads = [(ACTION_INDEX[h], *group(program.clauses_for(h))) for h in program.heads]
        cons = program.constraints
        self.constraints = group(cons) if cons else None
        self._prepare_selection(lits)

    def _prepare_selection(self, lits: list[list[_Lit]]) -> None:
        """Index tables for choosing, after all heads are known, each head's fired clause in one pass.

        Why this is exact: the program is acyclic, so a clause's action literals only name heads of lower
        strata (or never-defined actions) — values that are already final when its head is evaluated. A
        clause body recomputed with the *final* action values is therefore the body the head saw."""
        clauses = self.program.clauses
        n = len(clauses)
        acts = [[lt.slot + (0 if lt.positive else 4) for lt in ls if lt.kind == "act"] for ls in lits]
        width = max([len(a) for a in acts] + [0])
        # every clause's action literals [C, W] (padded with the true row); None when no clause has any
        self._all_idxa = np.array([a + [_A_TRUE] * (width - len(a)) for a in acts], dtype=np.int64) \
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
        head_idxa = np.full((h, rmax, wmax), _A_TRUE, dtype=np.int64)
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
        wit = _minus_ones((c, e, v))
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
        wit = _minus_ones((c, e, v))
        if self.flat is not None:
            fl = self.flat
            b, w = kern.flat_bodies(t0, b1, fl.idx0, fl.idx1, fl.var_rows)
            body[fl.rows] = b
            wit[fl.rows, :, 0] = w
        t1 = _BitRows(b1, k, kern)
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
        self.slots = _Slots()
        clauses = section.clauses
        self.set = _ClauseSet(clauses, section.ontology, self.slots, section.file) if clauses else None
        if self.set is not None:
            self.set.finalize(len(self.slots.ego), len(self.slots.var))
        self.v = max([len(c.variables) for c in clauses] + [0])
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
        gw = np.stack([_to_global(interp.ent, wit[i]) for i in range(c)]) if self.v else \
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
