"""Everything "Analyze" shows for a rule file, as plain data linked to clause lines: the rule editor's panel and
``python main.py rules analyze`` both use it.

Per rule section (task sections are checked by the diagnostics only): the dependency graph of the actions
(nodes with their stratum, edges with polarity, cycles — what the editor draws), conflicts with their minimal
unsat cores mapped to clause lines and, for a real conflict, a loadable witness scene
(:mod:`core.analysis.witness`); dead clauses and clauses that fire only where a constraint is violated; undefined
uses; the bounded deadlock search (:mod:`core.analysis.deadlock`); and, given an episode, clause coverage
(:mod:`core.analysis.coverage`). The solver-level findings come from :mod:`core.analysis.static`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from core.analysis.coverage import Coverage, episode_coverage
from core.analysis.deadlock import DeadlockSearch, find_deadlocks
from core.analysis.static import (
    ConflictResult,
    DeadClause,
    conflicts,
    dead_clauses,
    stratification,
    undefined_predicates,
)
from core.analysis.witness import ConflictScene, witness_scene
from core.logic.lang.program import Program, RuleFile

__all__ = ["GraphNode", "GraphEdge", "DependencyGraph", "dependency_graph", "CoreItem", "core_items",
           "ConflictFinding", "DeadFinding", "SectionAnalysis", "RulesAnalysis", "analyze_rules"]


@dataclass(frozen=True)
class GraphNode:
    name: str
    stratum: int | None       # evaluation order (0 first); None when the program is not stratified
    clauses: int              # clauses with this head


@dataclass(frozen=True)
class GraphEdge:
    head: str                 # the action being defined ...
    body: str                 # ... uses this action
    negative: bool
    clause: str
    line: int | None
    col: int | None


@dataclass(frozen=True)
class DependencyGraph:
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    cycles: tuple[tuple[str, ...], ...]
    negative_cycles: tuple[tuple[str, ...], ...]

    @property
    def stratified(self) -> bool:
        return not self.cycles

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": [vars(n) for n in self.nodes], "edges": [vars(e) for e in self.edges],
                "cycles": [list(c) for c in self.cycles], "negative_cycles": [list(c) for c in self.negative_cycles],
                "stratified": self.stratified}


def dependency_graph(program: Program) -> DependencyGraph:
    """The action dependency graph (head → body action used, with polarity) and its strata / cycles."""
    rep = stratification(program)
    level = {h: i for i, s in enumerate(rep.strata) for h in s}
    heads = list(dict.fromkeys(c.head for c in program.clauses if c.head))
    for e in rep.edges:
        for x in (e.head, e.body):
            if x not in heads:
                heads.append(x)
    nodes = tuple(GraphNode(h, level.get(h) if rep.stratified else None, len(program.clauses_for(h)))
                  for h in heads)
    edges = tuple(GraphEdge(e.head, e.body, e.negative, e.clause, e.pos.line if e.pos else None,
                            e.pos.col if e.pos else None) for e in rep.edges)
    return DependencyGraph(nodes, edges, rep.cycles, rep.negative_cycles)


@dataclass(frozen=True)
class CoreItem:
    """One member of an unsat core: a clause or constraint (with its line) or an ontology fact."""

    name: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.name} (line {self.line})" if self.line else self.name


def core_items(program: Program, core: tuple[str, ...]) -> tuple[CoreItem, ...]:
    """Map the solver's core names ("clause Stop#2", "constraint constraint#1", "ontology: ...") to lines."""
    by_label = {c.label: c for c in program.clauses}
    out = []
    for name in core:
        label = name.split(" ", 1)[1] if name.startswith(("clause ", "constraint ")) else None
        c = by_label.get(label) if label else None
        out.append(CoreItem(name, c.pos.line if c is not None and c.pos else None))
    return tuple(out)


@dataclass(frozen=True)
class ConflictFinding:
    result: ConflictResult
    core: tuple[CoreItem, ...]
    scene: ConflictScene | None

    def __str__(self) -> str:
        a, b = self.result.heads
        if self.result.unknown:
            return f"{a} + {b}: undecided (solver timeout)"
        if self.result.conflict:
            where = ""
            if self.scene is not None:
                where = " (witness scene: " + ", ".join(f"{lb} line {ln}" for lb, ln in self.scene.clauses) + \
                    f"; {len(self.scene.agents)} agents{'' if self.scene.verified else ', not verified'})"
            return f"CONFLICT {a} + {b}: {self.result.witness}{where}"
        return (f"{a} + {b}: impossible (up to {self.result.max_entities} entities) because of "
                f"{', '.join(str(c) for c in self.core)}")

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {"heads": list(r.heads), "conflict": r.conflict, "unknown": r.unknown,
                "max_entities": r.max_entities, "core": [{"name": c.name, "line": c.line} for c in self.core],
                "witness": r.witness.to_dict() if r.witness else None,
                "scene": self.scene.to_dict() if self.scene else None}


@dataclass(frozen=True)
class DeadFinding:
    dead: DeadClause
    line: int | None
    core: tuple[CoreItem, ...]

    def __str__(self) -> str:
        return f"line {self.line}: {self.dead}" if self.line else str(self.dead)

    def to_dict(self) -> dict[str, Any]:
        return {"clause": self.dead.clause, "line": self.line, "only_with_violation": self.dead.only_with_violation,
                "max_entities": self.dead.max_entities, "core": [{"name": c.name, "line": c.line} for c in self.core]}


@dataclass(frozen=True)
class SectionAnalysis:
    section: str
    graph: DependencyGraph
    conflicts: tuple[ConflictFinding, ...]
    dead: tuple[DeadFinding, ...]
    undefined: tuple[dict, ...]
    deadlocks: DeadlockSearch | None

    @property
    def problems(self) -> int:
        """Findings a rule author should look at (conflicts, dead clauses, undefined uses, deadlocks, cycles)."""
        return (sum(1 for c in self.conflicts if c.result.conflict) + len(self.dead) + len(self.undefined)
                + (len(self.deadlocks.deadlocks) if self.deadlocks else 0) + len(self.graph.cycles))

    def lines(self) -> list[str]:
        out = [f"[{self.section}]"]
        g = self.graph
        if g.stratified:
            strata: dict[int, list[str]] = {}
            for n in g.nodes:
                if n.stratum is not None:
                    strata.setdefault(n.stratum, []).append(n.name)
            out.append("  strata: " + (" | ".join(", ".join(strata[k]) for k in sorted(strata)) or "-"))
        for c in g.cycles:
            kind = "negative cycle" if c in g.negative_cycles else "cycle"
            out.append(f"  {kind}: {' → '.join(c + (c[0],))}")
        out += [f"  {c}" for c in self.conflicts]
        out += [f"  {d}" for d in self.dead]
        out += [f"  {u['predicate']}: {u['reason']} (used in {', '.join(u['clauses'])})" for u in self.undefined]
        if self.deadlocks is not None:
            dl = self.deadlocks
            out.append(f"  deadlock search: {dl.bound()}; {dl.configurations} configurations decided, "
                       f"{dl.found} deadlocked")
            out += [f"  {d}" for d in dl.deadlocks] or ["  no deadlock within the bound"]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"section": self.section, "graph": self.graph.to_dict(),
                "conflicts": [c.to_dict() for c in self.conflicts], "dead": [d.to_dict() for d in self.dead],
                "undefined": list(self.undefined),
                "deadlocks": self.deadlocks.to_dict() if self.deadlocks else None}


@dataclass(frozen=True)
class RulesAnalysis:
    file: str | None
    sections: tuple[SectionAnalysis, ...]
    coverage: Coverage | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def problems(self) -> int:
        return sum(s.problems for s in self.sections)

    def __str__(self) -> str:
        out = [f"analysis of {self.file or 'rules'}"]
        for s in self.sections:
            out += s.lines()
        if self.coverage is not None:
            out.append(str(self.coverage))
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "problems": self.problems, "sections": [s.to_dict() for s in self.sections],
                "coverage": self.coverage.to_dict() if self.coverage else None, "notes": list(self.notes)}


def analyze_rules(rules: RuleFile, *, config=None, sections: tuple[str, ...] | None = None,
                  deadlock_agents: int = 2, junction: int | None = None, episode=None,
                  max_entities: int | None = None, scenes: bool = True, status: Callable[[str], None] | None = None,
                  check: Callable[[], None] | None = None) -> RulesAnalysis:
    """Analyse every rule section of ``rules`` (or ``sections``). ``config`` (a SimConfig) supplies the map for
    witness scenes and the deadlock search (both skipped without it; ``deadlock_agents=0`` skips the search);
    ``episode`` (an Episode) adds coverage of the section the episode ran.

    For a background job: ``status(text)`` is told each phase before it starts, and ``check()`` is called
    between phases — a job passes its ``check_cancelled``, whose exception then ends the analysis."""

    def phase(text: str) -> None:
        if check is not None:
            check()
        if status is not None:
            status(text)

    notes: list[str] = []
    if config is not None and not any(j.is_intersection for j in config.city.junctions):
        notes.append("the map has no intersection: no witness scenes and no deadlock search")
        config = None
    out = []
    progs = [(name, s) for name, s in rules.sections.items() if isinstance(s, Program)
             and (sections is None or name in sections)]
    for name, prog in progs:
        phase(f"[{name}] dependency graph")
        graph = dependency_graph(prog)
        found_c: tuple[ConflictFinding, ...] = ()
        found_d: tuple[DeadFinding, ...] = ()
        dl = None
        if graph.stratified:
            cs = []
            phase(f"[{name}] conflicts")
            for r in conflicts(prog, max_entities=max_entities):
                scene = None
                if r.conflict and r.witness is not None and config is not None and scenes:
                    phase(f"[{name}] witness scene for {' + '.join(r.heads)}")
                    scene = witness_scene(config, prog, r.heads, r.witness, junction=junction)
                    if scene is None:
                        notes.append(f"[{name}] no witness scene found for {' + '.join(r.heads)} around the "
                                     f"intersection searched")
                cs.append(ConflictFinding(r, core_items(prog, r.core), scene))
            found_c = tuple(cs)
            phase(f"[{name}] dead clauses")
            found_d = tuple(DeadFinding(d, _line(prog, d.clause), core_items(prog, d.core))
                            for d in dead_clauses(prog, max_entities=max_entities))
            if config is not None and deadlock_agents:
                phase(f"[{name}] deadlock search (up to {deadlock_agents} agents)")
                dl = find_deadlocks(config, prog, max_agents=deadlock_agents, junction=junction, check=check)
        else:
            notes.append(f"[{name}] not stratified: conflicts, dead clauses and deadlocks need a stratified program")
        undefined = tuple({"predicate": u.predicate, "reason": u.reason, "clauses": list(u.clauses)}
                          for u in undefined_predicates(prog))
        out.append(SectionAnalysis(name, graph, found_c, found_d, undefined, dl))
    cov = None
    if episode is not None:
        phase("coverage")
        section = episode.meta.get("rule_section") or None
        episode_prog: Program | None = None
        try:
            episode_prog = rules.program(section)
        except KeyError:
            notes.append(f"the episode ran rule section {section!r}, which this file does not have; clause lines "
                         f"are not shown")
        cov = episode_coverage(episode, episode_prog)
    return RulesAnalysis(rules.file, tuple(out), cov, tuple(notes))


def _line(program: Program, label: str) -> int | None:
    for c in program.clauses:
        if c.label == label:
            return c.pos.line if c.pos else None
    return None
