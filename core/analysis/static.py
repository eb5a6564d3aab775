"""Static analysis of a rule program for the rule editor: stratification, conflicts, dead clauses, undefined uses.

Conflicts and dead clauses are decided by z3 over small closed domains (the ego plus a few entities), with the
ontology's consistency constraints (an entity has exactly one type; car concepts only on cars and pedestrian
concepts only on pedestrians; binary relations are irreflexive; priorities are a numeric order; distance bands
and left/right are exclusive and symmetric where the geometry says so). Every clause and every ontology
constraint is a *tracked* assumption: dropping a clause replaces its body by an unconstrained value, so a
minimal unsat core (``smt.core.minimize``) names exactly the clauses and constraints that make a conflict
impossible. Each call uses its own ``z3.Context`` (safe from any thread).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Iterable

import networkx as nx
import z3

from core.base.codes import ACTION_NAMES
from core.logic.lang.program import DependencyEdge, Program
from core.logic.lang.syntax import EGO, Clause

__all__ = ["StratificationReport", "stratification", "WitnessScene", "ConflictResult", "conflicts",
           "DeadClause", "dead_clauses", "UndefinedUse", "undefined_predicates", "AnalysisReport", "analyze"]

_CAR_CONCEPTS = ("is_ambulance", "is_bus", "is_police", "is_tiro", "is_reckless")
_PED_CONCEPTS = ("is_old", "is_young")


# -- stratification ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StratificationReport:
    stratified: bool
    strata: tuple[tuple[str, ...], ...]
    edges: tuple[DependencyEdge, ...]
    cycles: tuple[tuple[str, ...], ...]  # each cycle as a node list (first node not repeated)
    negative_cycles: tuple[tuple[str, ...], ...]

    def __str__(self) -> str:
        if self.stratified:
            return "stratified: " + " | ".join(", ".join(s) for s in self.strata)
        lines = ["not stratified:"]
        for c in self.cycles:
            neg = c in self.negative_cycles
            lines.append(("  negative cycle " if neg else "  cycle ") + " → ".join(c + (c[0],)))
        return "\n".join(lines)


def stratification(program: Program) -> StratificationReport:
    """Dependency edges between action predicates, strata (evaluation order), and any cycles."""
    edges = tuple(program.dependencies())
    g = nx.DiGraph()
    g.add_nodes_from(c.head for c in program.clauses if c.head)
    for e in edges:
        g.add_edge(e.head, e.body)
    cycles = tuple(tuple(c) for c in nx.simple_cycles(g))
    neg = []
    for c in cycles:
        pairs = set(zip(c, c[1:] + c[:1]))
        if any(e.negative and (e.head, e.body) in pairs for e in edges):
            neg.append(c)
    return StratificationReport(not cycles, program.strata if not cycles else (), edges, cycles, tuple(neg))


# -- undefined uses --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UndefinedUse:
    predicate: str
    reason: str  # "action without clauses (always false)" | "ontology predicate without grounding (always false)"
    clauses: tuple[str, ...]


def undefined_predicates(program: Program) -> list[UndefinedUse]:
    """Predicates used in bodies that are neither defined by a clause (actions) nor grounded (others)."""
    onto = program.ontology
    defined = {c.head for c in program.clauses if c.head is not None}  # not program.heads: empty if cyclic
    uses: dict[str, list[str]] = {}
    for c in program.clauses:
        for lit in c.body:
            uses.setdefault(lit.pred, [])
            if c.label not in uses[lit.pred]:
                uses[lit.pred].append(c.label)
    out = []
    for pred, labels in uses.items():
        p = onto[pred]
        if p.is_action and pred not in defined:
            out.append(UndefinedUse(pred, "action without clauses (always false)", tuple(labels)))
        elif not p.is_action and not p.is_grounded:
            out.append(UndefinedUse(pred, "ontology predicate without grounding (always false)", tuple(labels)))
    return out


# -- SMT encoding ------------------------------------------------------------------------------------------------
class _Encoding:
    """Program completion over a domain of size k with tracked clauses and ontology constraints."""

    def __init__(self, program: Program, k: int, timeout_ms: int | None) -> None:
        self.program = program
        self.k = k
        self.ctx = ctx = z3.Context()
        self.solver = s = z3.Solver(ctx=ctx)
        s.set("smt.core.minimize", True)
        if timeout_ms:
            s.set("timeout", int(timeout_ms))
        self.onto = onto = program.ontology
        self.acts = {a: z3.Bool(f"{a}(X)", ctx) for a in ACTION_NAMES}
        self.atoms: dict[tuple[str, tuple[int, ...]], z3.BoolRef] = {}
        self.tracks: dict[str, z3.BoolRef] = {}
        self.car = [z3.Bool(f"car({i})", ctx) for i in range(k)]
        self.used = [p for p in program.used_predicates() if not onto[p].is_action]
        for pred in self.used:
            p = onto[pred]
            for idx in itertools.product(range(k), repeat=p.arity):
                self.atom(pred, idx)
        # program completion with tracked clauses
        self.bodies: dict[int, list[z3.BoolRef]] = {}
        for c in program.clauses:
            self.bodies[c.id] = [self._body(c, b) for b in itertools.product(range(k), repeat=len(c.variables))]
        for a in ACTION_NAMES:
            cl = program.clauses_for(a)
            if not cl:
                s.add(z3.Implies(self.track(f"no clauses for {a}"), z3.Not(self.acts[a])))
                continue
            ds = []
            for c in cl:
                t = self.track(f"clause {c.label}")
                free = z3.Bool(f"free {c.label}", ctx)
                ds.append(z3.If(t, z3.Or(self.bodies[c.id]), free))
            s.add(self.acts[a] == z3.Or(ds))
        for c in program.constraints:
            t = self.track(f"constraint {c.label}")
            s.add(z3.Implies(t, z3.Not(z3.Or(self.bodies[c.id]))))
        self._ontology_constraints()

    def track(self, name: str) -> z3.BoolRef:
        t = z3.Bool(name, self.ctx)
        self.tracks[name] = t
        return t

    def atom(self, pred: str, idx: tuple[int, ...]) -> z3.BoolRef:
        key = (pred, idx)
        v = self.atoms.get(key)
        if v is None:
            v = z3.Bool(f"{pred}({','.join(self.entity(i) for i in idx)})", self.ctx)
            self.atoms[key] = v
        return v

    def entity(self, i: int) -> str:
        return EGO if i == 0 else f"E{i}"

    def _body(self, c: Clause, binding: tuple[int, ...]) -> z3.BoolRef:
        env = dict(zip(c.variables, binding))
        env[EGO] = 0
        lits = []
        for lit in c.body:
            p = self.onto[lit.pred]
            t = self.acts[p.name] if p.is_action else self.atom(p.name, tuple(env[a] for a in lit.args))
            lits.append(t if lit.positive else z3.Not(t))
        return z3.And(lits) if lits else z3.BoolVal(True, self.ctx)

    def _ontology_constraints(self) -> None:
        s, k, ctx = self.solver, self.k, self.ctx
        groups: dict[str, list[z3.BoolRef]] = {}

        def add(name: str, f: z3.BoolRef) -> None:
            groups.setdefault(name, []).append(f)

        by_g: dict[str, list[str]] = {}
        for pred in self.used:
            g = self.onto[pred].grounding
            by_g.setdefault(g or "", []).append(pred)
        for pred in self.used:
            p = self.onto[pred]
            g = p.grounding
            if p.arity == 1:
                for i in range(k):
                    v = self.atom(pred, (i,))
                    if g == "is_car":
                        add("ontology: an entity is one type", v == self.car[i])
                    elif g == "is_pedestrian":
                        add("ontology: an entity is one type", v == z3.Not(self.car[i]))
                    elif g in _CAR_CONCEPTS:
                        add("ontology: car concepts only on cars", z3.Implies(v, self.car[i]))
                    elif g in _PED_CONCEPTS:
                        add("ontology: pedestrian concepts only on pedestrians", z3.Implies(v, z3.Not(self.car[i])))
                    elif g is None:
                        add("ontology: ungrounded predicates are false", z3.Not(v))
            else:
                for i in range(k):
                    add("ontology: relations are irreflexive", z3.Not(self.atom(pred, (i, i))))
                if g is None:
                    for i, j in itertools.product(range(k), repeat=2):
                        add("ontology: ungrounded predicates are false", z3.Not(self.atom(pred, (i, j))))
                if g in ("is_close", "next_to"):
                    for i, j in itertools.combinations(range(k), 2):
                        add("ontology: distance relations are symmetric",
                            self.atom(pred, (i, j)) == self.atom(pred, (j, i)))
        if "higher_priority" in by_g:
            pri = [z3.Int(f"priority({self.entity(i)})", ctx) for i in range(k)]
            for i in range(k):
                add("ontology: priorities are numbers (pedestrians 0)",
                    z3.And(pri[i] >= 0, z3.Implies(z3.Not(self.car[i]), pri[i] == 0)))
            for pred in by_g["higher_priority"]:
                for i, j in itertools.permutations(range(k), 2):
                    add("ontology: priorities are numbers (pedestrians 0)", self.atom(pred, (i, j)) == (pri[i] < pri[j]))
        near = [(p, float(self.onto[p].params["max"])) for p in by_g.get("next_to", [])]
        close = [(p, float(self.onto[p].params["min"]), float(self.onto[p].params["max"]))
                 for p in by_g.get("is_close", [])]
        for (pn, nmax), (pc, cmin, _) in itertools.product(near, close):
            if nmax <= cmin:
                for i, j in itertools.permutations(range(k), 2):
                    add("ontology: next-to and close are exclusive",
                        z3.Not(z3.And(self.atom(pn, (i, j)), self.atom(pc, (i, j)))))
        # map geometry: "at" lines are removed from the "in" boxes, so no entity is both at and in an intersection
        for pa, pi in itertools.product(by_g.get("is_at_intersection", []), by_g.get("is_in_intersection", [])):
            for i in range(k):
                add("ontology: at and in an intersection are exclusive",
                    z3.Not(z3.And(self.atom(pa, (i,)), self.atom(pi, (i,)))))
        for pl, pr in itertools.product(by_g.get("left_of", []), by_g.get("right_of", [])):
            for i, j in itertools.permutations(range(k), 2):
                add("ontology: left and right are exclusive", z3.Not(z3.And(self.atom(pl, (i, j)), self.atom(pr, (i, j)))))
        for pcc in by_g.get("colliding_close", []):
            reach = max(float(v) for v in self.onto[pcc].params["range"].values())
            for pn, nmax in near:
                if reach < nmax:
                    for i, j in itertools.permutations(range(k), 2):
                        add("ontology: colliding implies next to",
                            z3.Implies(self.atom(pcc, (i, j)), self.atom(pn, (i, j))))
            for pc, cmin, _ in close:
                if reach <= cmin:
                    for i, j in itertools.permutations(range(k), 2):
                        add("ontology: colliding excludes close",
                            z3.Implies(self.atom(pcc, (i, j)), z3.Not(self.atom(pc, (i, j)))))
        for name, fs in groups.items():
            s.add(z3.Implies(self.track(name), z3.And(fs)))

    def check(self, goal: z3.BoolRef, drop: Iterable[str] = ()) -> tuple[z3.CheckSatResult, list[str]]:
        """Is ``goal`` satisfiable with every tracked assumption except those named in ``drop``?"""
        g = self.track("goal")
        self.solver.add(z3.Implies(g, goal))
        skip = set(drop)
        res = self.solver.check(*(t for name, t in self.tracks.items() if name not in skip))
        core: list[str] = []
        if res == z3.unsat:
            core = [str(t) for t in self.solver.unsat_core() if str(t) != "goal"]
        return res, core

    def scene(self) -> "WitnessScene":
        m = self.solver.model()
        k = self.k
        ents = tuple(self.entity(i) for i in range(k))
        types = tuple("Car" if z3.is_true(m.eval(self.car[i], model_completion=True)) else "Pedestrian"
                      for i in range(k))
        unary: list[tuple[str, ...]] = []
        for i in range(k):
            unary.append(tuple(pred for pred in self.used if self.onto[pred].arity == 1
                               and z3.is_true(m.eval(self.atom(pred, (i,)), model_completion=True))))
        binary = tuple((pred, ents[i], ents[j]) for pred in self.used if self.onto[pred].arity == 2
                       for i, j in itertools.product(range(k), repeat=2)
                       if z3.is_true(m.eval(self.atom(pred, (i, j)), model_completion=True)))
        acts = tuple(a for a in ACTION_NAMES if z3.is_true(m.eval(self.acts[a], model_completion=True)))
        return WitnessScene(ents, types, tuple(unary), binary, acts)


@dataclass(frozen=True)
class WitnessScene:
    """A concrete grounding over named entities (X = the ego) and the actions the program derives for X."""

    entities: tuple[str, ...]
    types: tuple[str, ...]
    unary: tuple[tuple[str, ...], ...]  # true unary predicates per entity
    binary: tuple[tuple[str, str, str], ...]  # (predicate, first, second) that hold
    actions: tuple[str, ...]

    def __str__(self) -> str:
        parts = [f"{e} ({t}): {', '.join(u) or '-'}" for e, t, u in zip(self.entities, self.types, self.unary)]
        rel = ", ".join(f"{p}({a}, {b})" for p, a, b in self.binary) or "-"
        return "; ".join(parts) + f"; relations: {rel}; derived: {', '.join(self.actions) or 'none (Normal)'}"

    def to_dict(self) -> dict[str, Any]:
        return {"entities": [{"name": e, "type": t, "unary": list(u)}
                             for e, t, u in zip(self.entities, self.types, self.unary)],
                "relations": [{"predicate": p, "subject": a, "object": b} for p, a, b in self.binary],
                "actions": list(self.actions)}


@dataclass(frozen=True)
class ConflictResult:
    """Can ``heads[0]`` and ``heads[1]`` hold together for the ego? ``witness`` if yes; otherwise ``core``: the
    clauses and ontology constraints that together rule it out (minimal unsat core)."""

    heads: tuple[str, str]
    conflict: bool
    witness: WitnessScene | None = None
    core: tuple[str, ...] = ()
    max_entities: int = 0
    unknown: bool = False

    def __str__(self) -> str:
        a, b = self.heads
        if self.unknown:
            return f"{a} + {b}: undecided (solver timeout)"
        if self.conflict:
            return f"{a} + {b}: CONFLICT, e.g. {self.witness}"
        return f"{a} + {b}: impossible (up to {self.max_entities} entities) because of {', '.join(self.core)}"


def _domain_sizes(program: Program, max_entities: int | None) -> range:
    top = max_entities if max_entities is not None else min(1 + 2 * max(program.max_vars, 1), 5)
    return range(1, max(top, 1) + 1)


def conflicts(program: Program, *, pairs: Iterable[tuple[str, str]] | None = None,
              max_entities: int | None = None, timeout_ms: int | None = 20000) -> list[ConflictResult]:
    """For each pair of distinct defined heads (or ``pairs``): search domains of 1..max_entities entities for a
    grounding consistent with the ontology where both hold. Default max = 1 + 2·(most variables in a clause),
    capped at 5."""
    defined = {c.head for c in program.clauses if c.head is not None}
    heads = [h for h in ACTION_NAMES if h in defined]
    todo = list(pairs) if pairs is not None else list(itertools.combinations(heads, 2))
    out = []
    for a, b in todo:
        result = ConflictResult((a, b), False)
        for k in _domain_sizes(program, max_entities):
            enc = _Encoding(program, k, timeout_ms)
            res, core = enc.check(z3.And(enc.acts[a], enc.acts[b]))
            if res == z3.sat:
                result = ConflictResult((a, b), True, enc.scene(), (), k)
                break
            if res == z3.unknown:
                result = ConflictResult((a, b), False, None, (), k, unknown=True)
                break
            result = ConflictResult((a, b), False, None, tuple(core), k)
        out.append(result)
    return out


@dataclass(frozen=True)
class DeadClause:
    """A clause (or constraint) that can never fire (up to ``max_entities``); ``core`` says why.

    ``only_with_violation``: its body can hold, but only in scenes that violate a constraint (named in ``core``),
    where the ego's decision is unsatisfiable and it falls back to Normal — so the clause still never decides."""

    clause: str
    core: tuple[str, ...] = field(default_factory=tuple)
    max_entities: int = 0
    only_with_violation: bool = False

    def __str__(self) -> str:
        why = ", ".join(self.core) or "its body is contradictory"
        if self.only_with_violation:
            names = ", ".join(x.removeprefix("constraint ") for x in self.core)
            return (f"{self.clause} can never decide an action (up to {self.max_entities} entities): its body "
                    f"holds only in scenes that violate {names}")
        return f"{self.clause} can never fire (up to {self.max_entities} entities): {why}"


def dead_clauses(program: Program, *, max_entities: int | None = None, timeout_ms: int | None = 20000
                 ) -> list[DeadClause]:
    """Clauses and constraints whose body cannot hold in any grounding consistent with the ontology (and with
    the clauses defining the actions the body uses); and clauses whose body holds only where some constraint is
    violated. A body's satisfiability never assumes the constraints (a constraint does not remove scenes, it
    makes the ego's decision unsatisfiable), and a constraint's own body is tested without itself."""
    out = []
    sizes = _domain_sizes(program, max_entities)
    constraint_tracks = [f"constraint {c.label}" for c in program.constraints]
    for c in program.clauses:
        dead = True
        core: tuple[str, ...] = ()
        for k in sizes:
            enc = _Encoding(program, k, timeout_ms)
            res, core_l = enc.check(z3.Or(enc.bodies[c.id]), drop=constraint_tracks)
            if res != z3.unsat:
                dead = False
                break
            core = tuple(x for x in core_l if x != f"clause {c.label}")
        if dead:
            out.append(DeadClause(c.label, core, sizes[-1]))
            continue
        if c.head is None or not constraint_tracks:
            continue
        blocked, core = True, ()
        for k in sizes:
            enc = _Encoding(program, k, timeout_ms)
            res, core_l = enc.check(z3.Or(enc.bodies[c.id]))
            if res != z3.unsat:
                blocked = False
                break
            core = tuple(x for x in core_l if x.startswith("constraint "))
        if blocked:
            out.append(DeadClause(c.label, core, sizes[-1], only_with_violation=True))
    return out


@dataclass(frozen=True)
class AnalysisReport:
    stratification: StratificationReport
    conflicts: tuple[ConflictResult, ...]
    dead: tuple[DeadClause, ...]
    undefined: tuple[UndefinedUse, ...]

    def __str__(self) -> str:
        lines = [str(self.stratification)]
        lines += [str(c) for c in self.conflicts]
        lines += [str(d) for d in self.dead]
        lines += [f"{u.predicate}: {u.reason} (used in {', '.join(u.clauses)})" for u in self.undefined]
        return "\n".join(lines)


def analyze(program: Program, *, max_entities: int | None = None) -> AnalysisReport:
    """Everything the rule editor shows. Conflict and dead-clause checks need a stratified program."""
    strat = stratification(program)
    if not strat.stratified:
        return AnalysisReport(strat, (), (), tuple(undefined_predicates(program)))
    return AnalysisReport(strat, tuple(conflicts(program, max_entities=max_entities)),
                          tuple(dead_clauses(program, max_entities=max_entities)),
                          tuple(undefined_predicates(program)))
