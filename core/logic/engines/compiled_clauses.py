"""Compiled clauses: clause bodies turned into gathers and reductions over stacked [E, K] truth slices.

Why a module of its own: evaluating one clause body over every ego's domain is the same job whether the
actions are decided (core/logic/engines/compiled.py ``CompiledEngine``) or fixed by a chosen action (``TaskChecker``,
SPF task rules). This module holds that shared machinery: :class:`Slots` registers the truth-table slices the
clauses read and builds the tables (bool, or bit rows for the compiled kernels); :func:`classify` turns each
literal into a slot read; :class:`FlatGroup` evaluates all clauses with at most one existential variable in a
handful of numpy calls; :class:`WideClause` evaluates a clause with more variables densely or join by join
(core/logic/engines/joins.py) within the limits below, or refuses it with a located RuleError; :class:`ClauseSet`
combines both for a list of clauses. The engines decide only how heads, strata and actions use these bodies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, cast

import numpy as np

from core.base.codes import ACTION_INDEX
from core.base.errors import RuleError
from core.logic.engines.joins import plan_joins
from core.logic.grounding.interpretation import Interpretation
from core.logic.lang.ontology import Ontology
from core.logic.lang.syntax import EGO, Clause

__all__ = ["A_TRUE", "DENSE_LIMIT", "JOIN_LIMIT", "MAX_JOIN_WIDTH", "MAX_VARIABLES", "Slots", "Lit", "classify",
           "FlatGroup", "WideClause", "BitRows", "minus_ones", "ClauseSet", "to_global"]

A_TRUE = 8  # row of the action table that is constant true
#: a many-variable clause is broadcast densely while (egos × K^variables) stays under this many truth values
DENSE_LIMIT = 1 << 22
#: the factorised evaluation refuses a clause whose largest join needs more truth values per ego than this
#: (K^w for w linked variables and K entities in view; 2^25 = 32 Mi, e.g. K = 8 and w = 8)
JOIN_LIMIT = 1 << 25
#: clauses joining more variables at once are refused when the engine is built (no view could afford them)
MAX_JOIN_WIDTH = 12
#: variables besides X per clause (numpy arrays have at most 64 axes; witnesses are stored per variable)
MAX_VARIABLES = 32


class Slots:
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
class Lit:
    kind: str  # "act" | "ego" | "var" | "pair"
    positive: bool
    slot: int = 0  # ego/var slot or action index
    pred: str = ""
    axes: tuple[int, ...] = ()  # variable positions (0-based among the clause's existential variables)


def classify(clause: Clause, onto: Ontology, slots: Slots) -> list[Lit]:
    vars_ = clause.variables
    out = []
    for lit in clause.body:
        p = onto[lit.pred]
        args = lit.args
        if p.is_action:
            out.append(Lit("act", lit.positive, ACTION_INDEX[p.name]))
            continue
        if p.arity == 1:
            if args[0] == EGO:
                out.append(Lit("ego", lit.positive, slots.ego_slot(("u", p.name)), p.name))
            else:
                out.append(Lit("var", lit.positive, slots.var_slot(("u", p.name)), p.name,
                                (vars_.index(args[0]),)))
            continue
        a, b = args
        if a == EGO and b == EGO:
            out.append(Lit("ego", lit.positive, slots.ego_slot(("bxx", p.name)), p.name))
        elif a == EGO:
            out.append(Lit("var", lit.positive, slots.var_slot(("bxv", p.name)), p.name, (vars_.index(b),)))
        elif b == EGO:
            out.append(Lit("var", lit.positive, slots.var_slot(("bvx", p.name)), p.name, (vars_.index(a),)))
        elif a == b:
            out.append(Lit("var", lit.positive, slots.var_slot(("bvv", p.name)), p.name, (vars_.index(a),)))
        else:
            out.append(Lit("pair", lit.positive, 0, p.name, (vars_.index(a), vars_.index(b))))
    return out


class FlatGroup:
    """Clauses with at most one existential variable, evaluated together."""

    def __init__(self, rows: list[int], lits: list[list[Lit]]) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)  # positions in the caller's clause list
        self.lits = lits
        self.has_var = [any(lt.kind == "var" for lt in ls) for ls in lits]

    def finalize(self, s0: int, s1: int) -> None:
        def pad(lists: list[list[int]], fill: int) -> np.ndarray:
            width = max([len(x) for x in lists] + [1])
            return np.array([x + [fill] * (width - len(x)) for x in lists], dtype=np.int64)

        self.idx0 = pad([[lt.slot + (0 if lt.positive else s0) for lt in ls if lt.kind == "ego"]
                         for ls in self.lits], 2 * s0)
        self.idx1 = pad([([Slots.VALID] if has else []) + [lt.slot + (0 if lt.positive else s1) for lt in ls
                                                             if lt.kind == "var"]
                         for ls, has in zip(self.lits, self.has_var)], 2 * s1)
        self.idxa = pad([[lt.slot + (0 if lt.positive else 4) for lt in ls if lt.kind == "act"]
                         for ls in self.lits], A_TRUE)
        self.any_var = any(self.has_var)
        self.no_ego = bool((self.idx0 == 2 * s0).all())
        self.no_act = bool((self.idxa == A_TRUE).all())
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


class WideClause:
    """A clause with two or more existential variables: broadcast over [E', K, ..., K] for the egos E' whose
    ego-only literals hold while that is small (:data:`DENSE_LIMIT`); otherwise evaluated variable by variable
    (:mod:`core.logic.engines.joins`, same answer) in ego chunks of bounded memory, or refused with a :class:`RuleError`
    naming the clause when even that would exceed :data:`JOIN_LIMIT` truth values per ego."""

    def __init__(self, row: int, lits: list[Lit], nvars: int, clause: Clause, file: str | None) -> None:
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
                             + [A_TRUE], dtype=np.int64)
        # per variable: the domain mask and that variable's one-variable literals, gathered and and-ed at once
        self.per_var = [np.array([Slots.VALID] + [lt.slot + (0 if lt.positive else s1) for lt in self.lits
                                                   if lt.kind == "var" and lt.axes == (i,)], dtype=np.int64)
                        for i in range(self.m)]
        self.pairs = [(lt.pred, lt.axes, lt.positive) for lt in self.lits if lt.kind == "pair"]
        self.plan = plan_joins(self.m, [(min(axes), max(axes)) for _, axes, _ in self.pairs])
        if self.plan.width > MAX_JOIN_WIDTH:
            raise self._refuse(f"clause {self.clause.label} links {self.plan.width} of its variables so that they "
                               f"must be evaluated together; the compiled engine joins at most {MAX_JOIN_WIDTH} "
                               f"(see docs/rules.md, 'Limits')")

    def _refuse(self, message: str) -> RuleError:
        pos = self.clause.pos
        return RuleError(message, self.file, pos.line if pos else None, pos.col if pos else None)

    def evaluate(self, interp: Interpretation, t0: np.ndarray, t1: np.ndarray | BitRows, acts: np.ndarray | None,
                 s0: int, s1: int) -> tuple[np.ndarray, np.ndarray]:
        """body [E] and local witness [E, m]; action literals are included only when ``acts`` is given."""
        e, k = interp.valid.shape
        m = self.m
        # the reductions below keep at least one axis, so each is an array (numpy's stubs also allow a scalar)
        ego = cast(np.ndarray, t0[self.idx0].all(axis=0))
        if acts is not None:
            ego &= acts[self.idxa].all(axis=0)
        rows = np.flatnonzero(ego)
        if len(rows) == 0:
            return ego, minus_ones((e, m))
        r = len(rows)
        if r * k ** m > DENSE_LIMIT:
            return self._evaluate_joined(interp, t1, rows, e, k)
        acc: np.ndarray | None = None
        for i, idx in enumerate(self.per_var):  # each variable's domain mask and one-variable literals
            shape = [r] + [1] * m
            shape[1 + i] = k
            u = cast(np.ndarray, _take(t1, idx, rows).all(axis=0)).reshape(shape)
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
        hit = cast(np.ndarray, flat.any(axis=1))
        # the first true binding in row-major order (first variable major), unravelled to one index per variable
        first = np.stack(np.unravel_index(flat.argmax(axis=1), (k,) * m), axis=1)
        body = np.zeros(e, dtype=bool)
        body[rows] = hit
        wit = minus_ones((e, m))
        wit[rows] = np.where(hit[:, None], first, -1)
        return body, wit


    def _evaluate_joined(self, interp: Interpretation, t1: np.ndarray | BitRows, rows: np.ndarray, e: int, k: int
                         ) -> tuple[np.ndarray, np.ndarray]:
        """The factorised evaluation (core/logic/engines/joins.py) over ego chunks of at most JOIN_LIMIT values."""
        cost = self.plan.cost(k)
        if cost > JOIN_LIMIT:
            raise self._refuse(f"clause {self.clause.label} needs {k}^{self.plan.width} = {cost} truth values per "
                               f"agent ({self.plan.width} linked variables, {k} entities in view); the limit is "
                               f"{JOIN_LIMIT} (see docs/rules.md, 'Limits')")
        body = np.zeros(e, dtype=bool)
        wit = minus_ones((e, self.m))
        chunk = max(1, JOIN_LIMIT // cost)
        for start in range(0, len(rows), chunk):
            part = rows[start:start + chunk]
            unary = [cast(np.ndarray, _take(t1, idx, part).all(axis=0)) for idx in self.per_var]
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


class BitRows:
    """The one-variable table T1 as bit rows (uint64 [2*S1+1, E], bit j = entity j; see Slots.bit_tables), for
    the wide clauses, which read the slices of a few views only: :func:`_take` unpacks just those."""

    def __init__(self, bits: np.ndarray, k: int, kern) -> None:
        self.bits, self.k, self.kern = bits, k, kern


def _take(t1: "np.ndarray | BitRows", idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """bool [len(idx), len(rows), K] = ``t1[idx[:, None], rows]`` for either form of T1."""
    if isinstance(t1, BitRows):
        return t1.kern.unpack_rows(t1.bits, np.asarray(idx, dtype=np.int64), np.asarray(rows, dtype=np.int64),
                                   t1.k)
    return t1[idx[:, None], rows]


def minus_ones(shape: tuple[int, ...], dtype: type = np.int64) -> np.ndarray:
    """``np.full(shape, -1)`` without its Python-level overhead (called several times per step)."""
    out: np.ndarray = np.empty(shape, dtype=dtype)
    out.fill(-1)
    return out


class ClauseSet:
    """A compiled list of clauses: flat group + wide clauses, results in list order."""

    def __init__(self, clauses: Sequence[Clause], onto: Ontology, slots: Slots, file: str | None = None) -> None:
        self.clauses = list(clauses)
        self.ids = np.array([c.id for c in self.clauses], dtype=np.int64)
        self.nvars = max([len(c.variables) for c in self.clauses] + [0])
        flat_rows, flat_lits, self.wide = [], [], []
        for r, c in enumerate(self.clauses):
            lits = classify(c, onto, slots)
            if len(c.variables) <= 1:
                flat_rows.append(r)
                flat_lits.append(lits)
            else:
                self.wide.append(WideClause(r, lits, len(c.variables), c, file))
        self.flat = FlatGroup(flat_rows, flat_lits) if flat_rows else None

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


def to_global(ent: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Local witness indices [E, V] → global agent indices (-1 kept)."""
    e = ent.shape[0]
    safe = np.maximum(local, 0)
    g = ent[np.arange(e)[:, None], safe]
    return np.where(local >= 0, g, -1).astype(np.int32)

