"""Helpers for the logic-core tests: hand-built cities, random truth tables, and a reference-style z3 oracle.

The oracle re-creates the reference's solve (docs/reference.md#the-decision-procedure) from the *reference formula
tree* (our safe AST walk, no eval): an uninterpreted sort, one constant per entity, every atom asserted, the
quantified rules, and the closed-world axiom ``ForAll(x, Or(x == e_1, ...))`` for each bound variable. It is
independent of our clause conversion, so agreeing with it shows the importer and the engines keep the reference's
meaning.
"""
from __future__ import annotations

import numpy as np
import z3

from core.base.codes import ACTION_INDEX, ACTION_NAMES, Heading, Kind
from core.base.world import AgentTable, WorldSnapshot
from core.logic.grounding.grounder import Grounder, TableInterpretation
from core.logic.lang.ontology import Ontology, load_ontology
from core.logic.lang.reference import FAnd, FAtom, FEq, FExists, FImplies, FNot, FOr, Formula
from core.map.model import CityMap
from tests.support.paths import ROOT

ONTOLOGIES = ROOT / "configs" / "ontologies"
RULES = ROOT / "configs" / "rules"


L, R, U, D, N = Heading.LEFT, Heading.RIGHT, Heading.UP, Heading.DOWN, Heading.NONE
CAR, PED = Kind.CAR, Kind.PEDESTRIAN


def ontology(name: str) -> Ontology:
    return load_ontology(ONTOLOGIES / f"{name}.yaml")


def blank_city(h: int = 60, w: int = 60) -> CityMap:
    """A CityMap with empty layers; tests paint intersections themselves."""
    z = np.zeros((h, w))
    return CityMap("test", h, w, (), (), z.astype(np.float32), z.astype(np.int8), z.astype(np.int16),
                   z.astype(bool), np.zeros((3, h, w), dtype=np.int16))


def snap(agents, step=0):
    """agents: list of (kind, (row, col), heading, priority, concepts)."""
    names, kinds, pris, cons = [], [], [], []
    counters = {CAR: 0, PED: 0}
    for kind, _, _, pri, concepts in agents:
        counters[kind] += 1
        names.append(f"{kind.label}_{counters[kind]}")
        kinds.append(int(kind))
        pris.append(pri)
        cons.append(concepts)
    table = AgentTable.build(names, kinds, pris, cons)
    pos = np.array([a[1] for a in agents], dtype=np.int32).reshape(-1, 2)
    head = np.array([int(a[2]) for a in agents], dtype=np.int8)
    return WorldSnapshot(step, table, pos, head)


def ground(agents, onto="full", city=None, seed=0, **kw):
    city = city or blank_city()
    return Grounder(city, ontology(onto)).ground(snap(agents), np.random.default_rng(seed), **kw)


def random_tables(onto: Ontology, rng: np.random.Generator, egos: int, kmax: int, density: float
                  ) -> TableInterpretation:
    """Random per-ego truth tables for every grounded predicate; domain sizes 1..kmax."""
    sizes = rng.integers(1, kmax + 1, size=egos)
    valid = np.arange(kmax)[None, :] < sizes[:, None]
    unary = {p.name: rng.random((egos, kmax)) < density for p in onto.unary}
    binary = {p.name: rng.random((egos, kmax, kmax)) < density * 0.6 for p in onto.binary}
    return TableInterpretation(onto, valid, unary, binary)


# -- reference-style oracle ---------------------------------------------------------------------------------------
class ReferenceOracle:
    """Decide one ego problem the way the reference does (docs/reference.md#the-decision-procedure), from
    reference formula trees."""

    def __init__(self, formulas: list[Formula], onto: Ontology) -> None:
        self.formulas = formulas
        self.onto = onto
        self.ctx = z3.Context()
        self.sort = z3.DeclareSort("Entity", self.ctx)
        self.funcs = {p.name: z3.Function(p.name, *([self.sort] * p.arity), z3.BoolSort(self.ctx))
                      for p in onto.predicates}
        self.dummies: dict[str, z3.ExprRef] = {}
        self._solvers: dict[int, tuple[z3.Solver, list[z3.ExprRef]]] = {}

    def _term(self, f: Formula, consts: list[z3.ExprRef]) -> z3.ExprRef:
        def arg(a: str) -> z3.ExprRef:
            if a == "entity":
                return consts[0]
            return self.dummies.setdefault(a, z3.Const(a, self.sort))

        t = self._term
        if isinstance(f, FAtom):
            return self.funcs[f.pred](*[arg(a) for a in f.args])
        if isinstance(f, FNot):
            return z3.Not(t(f.arg, consts))
        if isinstance(f, FAnd):
            return z3.And([t(a, consts) for a in f.args])
        if isinstance(f, FOr):
            return z3.Or([t(a, consts) for a in f.args])
        if isinstance(f, FImplies):
            return z3.Implies(t(f.cond, consts), t(f.concl, consts))
        if isinstance(f, FEq):
            return t(f.left, consts) == t(f.right, consts)
        if isinstance(f, FExists):
            return z3.Exists([arg(v) for v in f.vars], t(f.body, consts))
        raise TypeError(f)

    def _solver(self, k: int) -> tuple[z3.Solver, list[z3.ExprRef]]:
        if k not in self._solvers:
            consts = [z3.Const(f"e{i}", self.sort) for i in range(k)]
            s = z3.Solver(ctx=self.ctx)
            for f in self.formulas:
                s.add(self._term(f, consts))
            for d in self.dummies.values():
                s.add(z3.ForAll([d], z3.Or([d == c for c in consts])))
            self._solvers[k] = (s, consts)
        return self._solvers[k]

    def _atoms(self, s: z3.Solver, consts: list[z3.ExprRef], interp: TableInterpretation, row: int) -> None:
        k = len(consts)
        for p in self.onto.grounded:
            f = self.funcs[p.name]
            if p.arity == 1:
                u = interp.unary_local(p.name)[row]
                for i in range(k):
                    s.add(f(consts[i]) if u[i] else z3.Not(f(consts[i])))
            else:
                b = interp.binary_local(p.name)[row]
                for i in range(k):
                    for j in range(k):
                        s.add(f(consts[i], consts[j]) if b[i, j] else z3.Not(f(consts[i], consts[j])))

    def decide(self, interp: TableInterpretation, row: int) -> tuple[np.ndarray, bool]:
        """(bool [4] in Action order: the action predicates true at the ego — empty on unsat, like the
        reference —, unsat)."""
        k = int(interp.valid[row].sum())
        s, consts = self._solver(k)
        s.push()
        self._atoms(s, consts, interp, row)
        res = s.check()
        out = np.zeros(4, dtype=bool)
        if res == z3.sat:
            m = s.model()
            for a in ACTION_NAMES:
                out[ACTION_INDEX[a]] = z3.is_true(m.eval(self.funcs[a](consts[0]), model_completion=False))
        elif res != z3.unsat:
            raise RuntimeError(res)
        s.pop()
        return out, res == z3.unsat

    def task_violations(self, interp: TableInterpretation, row: int, action: int) -> list[bool]:
        """Per formula: violated (unsat) with the ego's action one-hot fixed
        (docs/reference.md#task-rule-semantics)."""
        k = int(interp.valid[row].sum())
        consts = [z3.Const(f"e{i}", self.sort) for i in range(k)]
        out = []
        for f in self.formulas:
            s = z3.Solver(ctx=self.ctx)
            self.dummies.clear()
            s.add(self._term(f, consts))
            for d in self.dummies.values():
                s.add(z3.ForAll([d], z3.Or([d == c for c in consts])))
            self._atoms(s, consts, interp, row)
            for a in ACTION_NAMES:
                v = self.funcs[a](consts[0])
                s.add(v if ACTION_INDEX[a] == action else z3.Not(v))
            out.append(s.check() == z3.unsat)
        return out
