"""z3 engine: the rules as an SMT problem, solved per ego, built the fast way.

Semantics (same as the reference's, docs/reference.md#the-decision-procedure; same answer as
:mod:`core.logic.engines.compiled`): over the closed domain of the ego's K entities, every ground atom is fixed, each
defined action A satisfies the Clark completion ``A == Or(bodies of A's clauses over all bindings)``, undefined
actions are false, and constraints are asserted as ``Not(body)``; unsat (only possible through a constraint)
gives the default.

Why it is fast: the reference builds a fresh solver per agent per step, declares an uninterpreted sort,
re-evaluates rule strings and asserts quantified formulas plus every atom one by one. Here the quantifiers are
expanded once per domain size K into a propositional *template* (closed-world domain made explicit: a
binding is a tuple of domain positions), asserted once into a solver that is kept per thread and per K. Each
ego's atoms are passed as assumption literals to ``check`` — no string processing, no re-assertion, no
push/pop. Only atoms the clauses can read are variables of the template.

The per-ego calls go through z3's C API bindings (``z3.Z3_solver_check_assumptions``, ``Z3_model_eval``) with
the assumption array built from pre-computed AST pointers: z3py's ``Solver.check(*lits)`` re-checks the sort
of every literal in Python, which costs more than the solve itself for a few hundred atoms.

Threads: a z3 context is not thread-safe, so every thread gets its own ``z3.Context`` and templates
(kept per thread id); results are plain numpy arrays.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from types import SimpleNamespace
from typing import Any

import numpy as np
import z3

from core.base.codes import ACTION_INDEX, ACTION_NAMES
from core.base.errors import RuleError
from core.logic.engines.decisions import Decisions
from core.logic.grounding.grounder import Interpretation
from core.logic.lang.program import Program
from core.logic.lang.syntax import EGO, Clause

__all__ = ["Z3Engine", "Z3Interrupted"]


class Z3Interrupted(RuntimeError):
    """A check returned ``unknown``: interrupted (:meth:`Z3Engine.interrupt`) or past ``timeout_ms``."""


_SAT, _UNSAT = 1, -1  # Z3_L_TRUE, Z3_L_FALSE


def _addr(e: z3.ExprRef) -> int:
    return int(ctypes.cast(e.as_ast(), ctypes.c_void_p).value or 0)


class _Model:
    """The solver's current model through the C API (reference-counted for the ``with`` block)."""

    def __init__(self, t: "_Template") -> None:
        self.cref = t.ctx.ref()
        self.model = z3.Z3_solver_get_model(self.cref, t.solver.solver)

    def __enter__(self) -> "_Model":
        z3.Z3_model_inc_ref(self.cref, self.model)
        return self

    def __exit__(self, *exc: object) -> None:
        z3.Z3_model_dec_ref(self.cref, self.model)

    def eval_int(self, ast: Any) -> int:
        out = (z3.Ast * 1)()
        if not z3.Z3_model_eval(self.cref, self.model, ast, True, out):
            raise RuntimeError("z3 could not evaluate a term in the model")
        z3.Z3_inc_ref(self.cref, out[0])
        try:
            return int(z3.Z3_get_numeral_string(self.cref, out[0]))
        finally:
            z3.Z3_dec_ref(self.cref, out[0])


#: the z3 template expands every clause into one disjunct per binding (K^m for m variables and K entities in
#: view); beyond this many disjuncts in one template the step is refused instead of exhausting memory
MAX_BINDINGS = 1 << 20


def _check_template_size(program: Program, k: int) -> None:
    """Refuse (RuleError at the largest clause's line) a template of more than MAX_BINDINGS disjuncts."""
    sizes = [(k ** len(c.variables), c) for c in program.clauses]
    if sum(n for n, _ in sizes) <= MAX_BINDINGS:
        return
    n, c = max(sizes, key=lambda t: t[0])
    pos = c.pos
    raise RuleError(f"clause {c.label} has {k}^{len(c.variables)} = {n} bindings of its {len(c.variables)} variables "
                    f"over {k} entities in view; the z3 engine expands at most {MAX_BINDINGS} per step (use the "
                    f"compiled engine, which evaluates linked variables in groups; see docs/rules.md, 'Limits')",
                    program.file, pos.line if pos else None, pos.col if pos else None)


class _Template:
    """The grounded completion of a program for domain size K, in one solver."""

    def __init__(self, program: Program, k: int, ctx: z3.Context, timeout_ms: int | None) -> None:
        self.k = k
        onto = program.ontology
        self.atoms: dict[tuple[str, tuple[int, ...]], z3.BoolRef] = {}
        self.acts = [z3.Bool(f"{a}(X)", ctx) for a in ACTION_NAMES]
        self.true = z3.BoolVal(True, ctx)
        self.ctx = ctx

        def atom(pred: str, idx: tuple[int, ...]) -> z3.BoolRef:
            key = (pred, idx)
            v = self.atoms.get(key)
            if v is None:
                v = z3.Bool(f"{pred}({','.join(map(str, idx))})", ctx)
                self.atoms[key] = v
            return v

        def bodies(clause: Clause) -> tuple[list[z3.BoolRef], list[tuple[int, ...]]]:
            vars_ = clause.variables
            out, binds = [], []
            for binding in itertools.product(range(k), repeat=len(vars_)):
                env = dict(zip(vars_, binding))
                env[EGO] = 0
                lits = []
                for lit in clause.body:
                    p = onto[lit.pred]
                    if p.is_action:
                        t = self.acts[ACTION_INDEX[p.name]]
                    else:
                        t = atom(p.name, tuple(env[a] for a in lit.args))
                    lits.append(t if lit.positive else z3.Not(t))
                out.append(z3.And(lits) if len(lits) > 1 else (lits[0] if lits else self.true))
                binds.append(binding)
            return out, binds

        _check_template_size(program, k)
        s = z3.Solver(ctx=ctx)
        s.set("model.compact", False)  # model compaction costs more than the tiny models it saves
        if timeout_ms:
            s.set("timeout", int(timeout_ms))
        self.witness_terms: dict[int, z3.ArithRef] = {}
        self.witness_decode: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
        self.defined: list[int] = []
        for a, name in enumerate(ACTION_NAMES):
            clauses = program.clauses_for(name)
            if not clauses:
                s.add(z3.Not(self.acts[a]))
                continue
            self.defined.append(a)
            all_bodies: list[z3.BoolRef] = []
            decode: list[tuple[int, tuple[int, ...]]] = []
            for c in clauses:
                b, binds = bodies(c)
                all_bodies += b
                decode += [(c.id, bd) for bd in binds]
            s.add(self.acts[a] == z3.Or(all_bodies))
            self.witness_terms[a] = self._chain(all_bodies)
            self.witness_decode[a] = decode
        self.guard = z3.Bool("constraints", ctx)
        cons = program.constraints
        self.cons_term = None
        if cons:
            cb: list[z3.BoolRef] = []
            decode = []
            for c in cons:
                b, binds = bodies(c)
                cb += b
                decode += [(c.id, bd) for bd in binds]
            s.add(z3.Implies(self.guard, z3.Not(z3.Or(cb))))
            self.cons_term = self._chain(cb)
            self.cons_decode = decode
        self.solver = s
        # packed action value: one model evaluation gives all four
        self.packed = z3.Sum([z3.If(self.acts[a], 1 << a, 0) for a in range(4)]) if self.defined else None
        self.packed_ast = self.packed.as_ast() if self.packed is not None else None
        self.witness_asts = {a: term.as_ast() for a, term in self.witness_terms.items()}
        self.cons_ast = self.cons_term.as_ast() if self.cons_term is not None else None
        # gather plan: atom order for assumption literals
        keys = list(self.atoms)
        self.keys = keys
        # assumption literals as raw AST pointers (the z3 objects are kept alive in these lists)
        self.pos_lits = [self.atoms[key] for key in keys]
        self.neg_lits = [z3.Not(v) for v in self.pos_lits]
        n = len(keys)
        self.n_lits = n
        self.pos_addr = np.array([_addr(x) for x in self.pos_lits] + [_addr(self.guard)], dtype=np.uint64)
        self.neg_addr = np.array([_addr(x) for x in self.neg_lits] + [_addr(self.guard)], dtype=np.uint64)
        self.plan: list[tuple[str, int, np.ndarray, np.ndarray | None]] = []
        by_pred: dict[str, list[tuple[int, tuple[int, ...]]]] = {}
        for i, (pred, idx) in enumerate(keys):
            by_pred.setdefault(pred, []).append((i, idx))
        self.order = np.zeros(len(keys), dtype=np.int64)
        col = 0
        for pred, items in by_pred.items():
            arity = onto[pred].arity
            ii = np.array([idx[0] for _, idx in items], dtype=np.int64)
            jj = np.array([idx[1] for _, idx in items], dtype=np.int64) if arity == 2 else None
            self.plan.append((pred, arity, ii, jj))
            for t, (i, _) in enumerate(items):
                self.order[col + t] = i
            col += len(items)

    def _chain(self, terms: list[z3.BoolRef]) -> z3.ArithRef:
        """Index of the first true term (-1 if none): one model evaluation gives the witness."""
        expr: z3.ArithRef = z3.IntVal(-1, self.ctx)
        for i in range(len(terms) - 1, -1, -1):
            expr = z3.If(terms[i], z3.IntVal(i, self.ctx), expr)
        return expr

    def values(self, interp: Interpretation, rows: np.ndarray) -> np.ndarray:
        """bool [len(rows), n_atoms] truth of each template atom for each ego row (atom order = self.keys)."""
        cols = []
        k = self.k
        for pred, arity, ii, jj in self.plan:
            if arity == 1:
                u = interp.unary_local(pred)[rows, :k]
                cols.append(u[:, ii])
            else:
                b = interp.binary_local(pred)[rows, :k, :k]
                cols.append(b[:, ii, jj])
        if not cols:
            return np.zeros((len(rows), 0), dtype=bool)
        vals = np.concatenate(cols, axis=1)
        out = np.empty_like(vals)
        out[:, self.order] = vals
        return out


class Z3Engine:
    """``Z3Engine(program).decide(interp) -> Decisions``; usable from any thread (one z3 context each)."""

    def __init__(self, program: Program, *, timeout_ms: int | None = None) -> None:
        if not program.stratified:
            raise ValueError("program is not stratified; it can be analysed but not run")
        self.program = program
        self.timeout_ms = timeout_ms
        # Per-thread state keyed by thread id, not threading.local: a Qt worker thread (QThread) enters Python
        # with a fresh thread state for every queued call, which would empty a threading.local each time and
        # rebuild every solver template at every step.
        self._threads: dict[int, SimpleNamespace] = {}
        self._contexts: list[z3.Context] = []
        self._contexts_lock = threading.Lock()
        self._generation = 0  # bumped by interrupt(); a decide() running across a bump stops
        self.v = program.max_vars

    def _template(self, k: int) -> _Template:
        st = self._threads.get(threading.get_ident())
        if st is None:
            st = SimpleNamespace(ctx=z3.Context(), templates={})
            with self._contexts_lock:
                self._contexts.append(st.ctx)
                self._threads[threading.get_ident()] = st
        t = st.templates.get(k)
        if t is None:
            t = _Template(self.program, k, st.ctx, self.timeout_ms)
            st.templates[k] = t
        return t

    def interrupt(self) -> None:
        """Cancel running checks in every thread using this engine (call from any thread, e.g. the GUI's
        Cancel button); the interrupted ``decide`` raises :class:`Z3Interrupted`."""
        with self._contexts_lock:
            self._generation += 1
            for ctx in self._contexts:
                ctx.interrupt()

    def decide(self, interp: Interpretation) -> Decisions:
        """Decide every ego row. Raises :class:`Z3Interrupted` if :meth:`interrupt` is called meanwhile."""
        try:
            return self._decide(interp, self._generation)
        except z3.Z3Exception as exc:  # "canceled" when interrupted during a model evaluation
            raise Z3Interrupted(f"z3 stopped: {exc}") from None

    def _decide(self, interp: Interpretation, generation: int) -> Decisions:
        e = interp.valid.shape[0]
        v = self.v
        holds = np.zeros((e, 4), dtype=bool)
        clause = np.full((e, 4), -1, dtype=np.int32)
        witness = np.full((e, 4, v), -1, dtype=np.int32)
        unsat = np.zeros(e, dtype=bool)
        violated = np.full(e, -1, dtype=np.int32)
        vwit = np.full((e, v), -1, dtype=np.int32)
        egos = interp.ent[:, 0].astype(np.int32) if e else np.zeros(0, np.int32)
        sizes = interp.valid.sum(axis=1)
        for k in np.unique(sizes):
            rows = np.nonzero(sizes == k)[0]
            t = self._template(int(k))
            cref = t.ctx.ref()
            sref = t.solver.solver
            n = t.n_lits
            vals = np.concatenate([t.values(interp, rows), np.ones((len(rows), 1), dtype=bool)], axis=1)
            lits = np.ascontiguousarray(np.where(vals, t.pos_addr, t.neg_addr))  # row r: atoms, then the guard
            for r, row in enumerate(rows):
                if self._generation != generation:
                    raise Z3Interrupted("interrupted")
                arr = (z3.Ast * (n + 1)).from_buffer(lits[r])
                res = z3.Z3_solver_check_assumptions(cref, sref, n + 1, arr)
                if res == _SAT:
                    self._read_model(t, interp, row, holds, clause, witness)
                elif res == _UNSAT:
                    unsat[row] = True
                    if t.cons_term is not None and z3.Z3_solver_check_assumptions(cref, sref, n, arr) == _SAT:
                        with _Model(t) as m:
                            idx = m.eval_int(t.cons_ast)
                        if idx >= 0:
                            cid, bd = t.cons_decode[idx]
                            violated[row] = cid
                            self._store(interp, row, bd, vwit[row])
                else:
                    raise Z3Interrupted(f"z3 gave no answer for ego row {row} ({t.solver.reason_unknown()})")
        if self._generation != generation:  # an interrupt may have cut a check short ("unknown" → here)
            raise Z3Interrupted("interrupted")
        return Decisions(self.program, interp.names, egos, holds, clause, witness, unsat, violated, vwit)

    def _read_model(self, t: _Template, interp: Interpretation, row: int | np.integer, holds: np.ndarray,
                    clause: np.ndarray, witness: np.ndarray) -> None:
        if t.packed is None:
            return
        with _Model(t) as m:
            bits = m.eval_int(t.packed_ast)
            for a in t.defined:
                if bits >> a & 1:
                    holds[row, a] = True
                    cid, bd = t.witness_decode[a][m.eval_int(t.witness_asts[a])]
                    clause[row, a] = cid
                    self._store(interp, row, bd, witness[row, a])

    @staticmethod
    def _store(interp: Interpretation, row: int | np.integer, binding: tuple[int, ...], out: np.ndarray) -> None:
        for i, local in enumerate(binding):
            out[i] = interp.ent[row, local]
