"""PDDL export: an ontology and a rule program as a PDDL 2.2 domain, a scene as a problem (docs/export.md "PDDL").

Why this mapping: the rules decide which of Slow, Normal, Fast, Stop an ego may do from first-order facts about
the entities in its field of view. PDDL's derived predicates (axioms) express exactly that: each action head
becomes ``(derives-<action> ?x)``, defined as the disjunction of its clauses, every clause an ``exists`` over its
other variables restricted to the ego's view. Stratified negation maps to negated derived predicates (the rules
are stratified, as PDDL 2.2 requires). The four actions are PDDL actions whose preconditions are those derived
predicates, and which move the ego along its planned route by the cells the action covers.

Domain (``domain_text(program)``):

* types ``agent`` (``pedestrian``, ``car``) and ``cell``;
* one predicate per grounded ontology predicate, kebab-cased (``IsClose`` → ``is-close``, arity kept);
* ``(in-view ?x ?y)`` — ``?y`` is in ``?x``'s field of view (``?x`` itself included), ``(ego ?x)``,
  ``(at ?x ?c)``, ``(reach1/2/3 ?from ?to)`` — ``?to`` lies 1/2/3 cells further along the route — and
  ``(stopped ?x)``;
* derived: ``derives-<action>`` per defined head (clauses in file order, so the fired clause is the first true
  disjunct), ``unsat`` from the integrity constraints, ``no-action`` (unsat or nothing derived: the default
  Normal), ``may-<action>`` (what the ego may do: derived and not unsat; Normal also by default);
* actions ``slow`` / ``normal`` / ``fast`` (cars: 1 / 2 / 3 cells), ``walk`` (pedestrians' Normal: 1 cell) and
  ``stop``.

Problem (``problem_text(...)``): the ego and the entities in its view as objects, the cells of the ego's route
from its position to its goal, the true ground atoms of the scene's state (the grounder's view table), the ego's
``at`` and the route's ``reach`` facts; goal ``(at ego goal-cell)``.

Limits (also in docs/export.md): the facts are those of one state — other agents do not move and facts do not
change as the ego moves, so the problem asks whether the ego can reach its goal along its route under the decision
of that state; ``reach2/3`` follow the route without the simulator's rule that a 2–3 cell move may not jump over a
lane node; SPF task sections (rewards) and grounding parameters are not exported; pedestrians' Slow/Fast fall back
to Normal in the simulator and have no PDDL action.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from core.base.codes import Kind

# The pddl package is imported by the functions that parse PDDL back (the round-trip check of an export).

ACTIONS = ("Slow", "Normal", "Fast", "Stop")
#: cells each car action covers (pedestrians: Normal = 1 cell, ``walk``)
CAR_CELLS = {"Slow": 1, "Normal": 2, "Fast": 3}


def pddl_name(name: str) -> str:
    """``IsAtInter`` → ``is-at-inter``; ``Car_3`` → ``car_3`` (PDDL names are case-insensitive)."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name)
    return s.lower()


def _var(v: str, numbering: dict[str, str]) -> str:
    if v == "X":
        return "?x"
    if v not in numbering:
        numbering[v] = f"?v{len(numbering) + 1}" if v.startswith("_#") else "?" + pddl_name(v).replace("_", "-")
    return numbering[v]


def _literal(lit, action_preds: set[str], numbering: dict[str, str]) -> str:
    pred = f"derives-{pddl_name(lit.pred)}" if lit.pred in action_preds else pddl_name(lit.pred)
    atom = f"({pred} {' '.join(_var(a, numbering) for a in lit.args)})"
    return atom if lit.positive else f"(not {atom})"


def clause_formula(clause, action_preds: set[str]) -> str:
    """One clause body as a PDDL condition over ``?x``: an ``exists`` over the other variables (each in view)."""
    numbering: dict[str, str] = {}
    lits = [_literal(lit, action_preds, numbering) for lit in clause.body]
    vars_ = [numbering[v] for v in clause.variables]
    if not vars_:
        return lits[0] if len(lits) == 1 else f"(and {' '.join(lits)})" if lits else "(and)"
    view = [f"(in-view ?x {v})" for v in vars_]
    return f"(exists ({' '.join(vars_)} - agent) (and {' '.join(view + lits)}))"


def _or(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"(or {' '.join(parts)})"


def domain_text(program, name: str | None = None) -> str:
    """The PDDL domain of a rule program (a :class:`core.logic.lang.program.Program`) and its ontology."""
    onto = program.ontology
    action_preds = {p.name for p in onto.predicates if p.is_action}
    preds = []
    for p in onto.predicates:
        if p.is_action:
            continue
        args = " ".join(f"?a{i + 1} - agent" for i in range(p.arity))
        preds.append(f"    ({pddl_name(p.name)} {args})")
    preds += ["    (in-view ?x - agent ?y - agent)", "    (ego ?x - agent)", "    (at ?x - agent ?c - cell)",
              "    (reach1 ?from - cell ?to - cell)", "    (reach2 ?from - cell ?to - cell)",
              "    (reach3 ?from - cell ?to - cell)", "    (stopped ?x - agent)"]
    preds += [f"    (derives-{pddl_name(a)} ?x - agent)" for a in ACTIONS]
    preds += ["    (unsat ?x - agent)", "    (no-action ?x - agent)"]
    preds += [f"    (may-{pddl_name(a)} ?x - agent)" for a in ACTIONS]
    derived = []
    for head in ACTIONS:
        clauses = program.clauses_for(head)
        if clauses:
            body = _or([clause_formula(c, action_preds) for c in clauses])
            derived.append(f"  ; {head}: {', '.join(c.label for c in clauses)}\n"
                           f"  (:derived (derives-{pddl_name(head)} ?x - agent)\n    {body})")
    if program.constraints:
        body = _or([clause_formula(c, action_preds) for c in program.constraints])
        derived.append(f"  ; constraints: {', '.join(c.label for c in program.constraints)}\n"
                       f"  (:derived (unsat ?x - agent)\n    {body})")
    none = " ".join(f"(not (derives-{pddl_name(a)} ?x))" for a in ACTIONS)
    derived.append(f"  (:derived (no-action ?x - agent)\n    (or (unsat ?x) (and {none})))")
    for a in ACTIONS:
        may = f"(and (not (unsat ?x)) (derives-{pddl_name(a)} ?x))"
        if a == "Normal":
            may = f"(or {may} (no-action ?x))"
        derived.append(f"  (:derived (may-{pddl_name(a)} ?x - agent)\n    {may})")
    actions = []
    for a, cells in CAR_CELLS.items():
        actions.append(_move_action(pddl_name(a), "car", a, cells))
    actions.append(_move_action("walk", "pedestrian", "Normal", 1))
    actions.append("  (:action stop\n    :parameters (?x - agent)\n    :precondition (and (ego ?x) (may-stop ?x))\n"
                   "    :effect (stopped ?x))")
    title = pddl_name(name or f"logicity-{program.name}")
    return (f"; LogiCity rules as PDDL 2.2 (docs/export.md). Ontology {onto.name}, section {program.name}.\n"
            f"(define (domain {title})\n"
            f"  (:requirements :strips :typing :negative-preconditions :disjunctive-preconditions "
            f":existential-preconditions :derived-predicates)\n"
            f"  (:types pedestrian car - agent agent cell - object)\n"
            f"  (:predicates\n" + "\n".join(preds) + ")\n" + "\n".join(derived) + "\n" + "\n".join(actions) + ")\n")


def _move_action(name: str, kind: str, action: str, cells: int) -> str:
    return (f"  (:action {name}\n    :parameters (?x - {kind} ?from - cell ?to - cell)\n"
            f"    :precondition (and (ego ?x) (may-{pddl_name(action)} ?x) (at ?x ?from) (reach{cells} ?from ?to))\n"
            f"    :effect (and (not (at ?x ?from)) (at ?x ?to)))")


@dataclass(frozen=True)
class SceneFacts:
    """What a problem needs of one state: the ego, the entities of its view with their true atoms, its route."""

    ego: str                                  # agent name
    ego_kind: str                             # "car" or "pedestrian"
    entities: tuple[tuple[str, str], ...]     # (name, kind) in view order, ego first
    unary: tuple[tuple[str, str], ...]        # (predicate, entity)
    binary: tuple[tuple[str, str, str], ...]  # (predicate, a, b)
    route: tuple[tuple[int, int], ...]        # cells from the ego's position to its goal


def scene_facts(grounding, ego: int, route: Iterable[Sequence[int]]) -> SceneFacts:
    """Facts of ``grounding`` (a :class:`core.logic.grounding.grounder.Grounding`) for agent index ``ego``."""
    view = grounding.ego_view(ego)
    kinds = grounding.snapshot.agents.kinds
    ents = tuple((r.name, "car" if int(kinds[r.agent]) == int(Kind.CAR) else "pedestrian") for r in view.rows)
    unary = tuple((p, r.name) for r in view.rows for p in r.unary)
    binary = tuple((p, r.name, o) for r in view.rows for p, o in r.relations)
    cells = tuple((int(c[0]), int(c[1])) for c in route)
    return SceneFacts(view.ego_name, ents[0][1], ents, unary, binary, cells)


def cell_name(c: tuple[int, int]) -> str:
    return f"c{c[0]}_{c[1]}"


def problem_text(facts: SceneFacts, domain: str, name: str) -> str:
    """The PDDL problem of one scene for the domain named ``domain``."""
    agents: dict[str, list[str]] = {"car": [], "pedestrian": []}
    for n, k in facts.entities:
        agents[k].append(pddl_name(n))
    cells = list(dict.fromkeys(facts.route))
    objects = [f"    {' '.join(v)} - {k}" for k, v in agents.items() if v]
    objects.append(f"    {' '.join(cell_name(c) for c in cells)} - cell")
    ego = pddl_name(facts.ego)
    init = [f"(ego {ego})", f"(at {ego} {cell_name(facts.route[0])})"]
    init += [f"(in-view {ego} {pddl_name(n)})" for n, _ in facts.entities]
    init += [f"({pddl_name(p)} {pddl_name(e)})" for p, e in facts.unary]
    init += [f"({pddl_name(p)} {pddl_name(a)} {pddl_name(b)})" for p, a, b in facts.binary]
    route = facts.route
    reach = dict.fromkeys(f"(reach{k} {cell_name(route[i])} {cell_name(route[i + k])})"
                          for k in (1, 2, 3) for i in range(len(route) - k) if route[i] != route[i + k])
    init += list(reach)
    return (f"; one LogiCity state (docs/export.md): the ego {facts.ego} and the entities in its view\n"
            f"(define (problem {pddl_name(name)})\n  (:domain {domain})\n  (:objects\n" + "\n".join(objects) +
            ")\n  (:init\n" + "\n".join(f"    {f}" for f in init) + ")\n"
            f"  (:goal (at {ego} {cell_name(route[-1])})))\n")


# ---- reading back ------------------------------------------------------------------------------------------------

def parse_domain_text(text: str):
    """The ``pddl`` package's Domain of ``text`` (raises its parse error)."""
    from pddl.parser.domain import DomainParser

    return DomainParser()(text)


def parse_problem_text(text: str):
    from pddl.parser.problem import ProblemParser

    return ProblemParser()(text)


def rules_from_domain(domain) -> dict[str, list[tuple[tuple[str, bool, tuple[str, ...]], ...]]]:
    """The clauses a parsed domain encodes: ``{head: [body]}`` (head ``"constraint"`` for ``unsat``), each body a
    tuple of ``(predicate, positive, args)`` with ``?x`` as ``X`` and in-view guards dropped — to compare with the
    rule program it came from (the round trip)."""
    from pddl.logic.base import And, ExistsCondition, Not, Or
    from pddl.logic.predicates import Predicate

    def literal(f) -> tuple[str, bool, tuple[str, ...]]:
        positive = not isinstance(f, Not)
        atom = f if positive else f.argument
        assert isinstance(atom, Predicate), f"not a literal: {f}"
        return (atom.name, positive, tuple("X" if str(t.name) == "x" else str(t.name) for t in atom.terms))

    def body(f) -> tuple[tuple[str, bool, tuple[str, ...]], ...]:
        if isinstance(f, ExistsCondition):
            f = f.condition
        parts = f.operands if isinstance(f, And) else (f,)
        return tuple(lit for lit in (literal(p) for p in parts) if lit[0] != "in-view")

    out: dict[str, list] = {}
    for dp in domain.derived_predicates:
        name = dp.predicate.name
        if name.startswith("derives-"):
            head = name[len("derives-"):]
        elif name == "unsat":
            head = "constraint"
        else:
            continue
        cond = dp.condition
        out[head] = [body(c) for c in (cond.operands if isinstance(cond, Or) else (cond,))]
    return out


def program_rules(program) -> dict[str, list[tuple[tuple[str, bool, tuple[str, ...]], ...]]]:
    """The same shape as :func:`rules_from_domain`, from a rule program (variables named as the export does)."""
    action_preds = {p.name for p in program.ontology.predicates if p.is_action}
    out: dict[str, list] = {}
    for c in program.clauses:
        numbering: dict[str, str] = {}
        body = []
        for lit in c.body:
            pred = f"derives-{pddl_name(lit.pred)}" if lit.pred in action_preds else pddl_name(lit.pred)
            body.append((pred, lit.positive, tuple("X" if a == "X" else _var(a, numbering)[1:] for a in lit.args)))
        out.setdefault(pddl_name(c.head) if c.head else "constraint", []).append(tuple(body))
    return out


def derived_truth(domain, problem, ego: str) -> dict[str, bool]:
    """Evaluate the domain's derived predicates for ``ego`` in the problem's initial state (closed world,
    strata in definition order) — to check the export against the rule engine's decision."""
    from pddl.logic.base import And, ExistsCondition, Not, Or
    from pddl.logic.predicates import Predicate

    facts = {(p.name, tuple(str(t.name) for t in p.terms)) for p in problem.init}
    objects = [str(o.name) for o in problem.objects if set(map(str, o.type_tags)) & {"car", "pedestrian"}]
    derived = {dp.predicate.name: dp for dp in domain.derived_predicates}
    cache: dict[tuple[str, tuple[str, ...]], bool] = {}

    def holds(f, env: Mapping[str, str]) -> bool:
        if isinstance(f, And):
            return all(holds(g, env) for g in f.operands)
        if isinstance(f, Or):
            return any(holds(g, env) for g in f.operands)
        if isinstance(f, Not):
            return not holds(f.argument, env)
        if isinstance(f, ExistsCondition):
            names = [str(v.name) for v in f.variables]
            return any(holds(f.condition, {**env, **dict(zip(names, combo))})
                       for combo in _product(objects, len(names)))
        assert isinstance(f, Predicate)
        args = tuple(env.get(str(t.name), str(t.name)) for t in f.terms)
        return atom(f.name, args)

    def atom(name: str, args: tuple[str, ...]) -> bool:
        if name not in derived:
            return (name, args) in facts
        key = (name, args)
        if key not in cache:
            dp = derived[name]
            env = {str(t.name): a for t, a in zip(dp.predicate.terms, args)}
            cache[key] = holds(dp.condition, env)
        return cache[key]

    names = list(derived) + [f"derives-{pddl_name(a)}" for a in ACTIONS if f"derives-{pddl_name(a)}" not in derived]
    return {name: atom(name, (ego,)) for name in names}   # a head without clauses is never derived: false


def _product(objects: list[str], n: int) -> Iterable[tuple[str, ...]]:
    return itertools.product(objects, repeat=n)
