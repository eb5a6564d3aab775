"""Validated rule programs and rule files.

A :class:`Program` is one section of rules for the ego X: clauses ``Action(X) :- body.`` (several clauses per
head = disjunction) and integrity constraints ``:- body.``, checked against an ontology and stratified. Its
meaning (``docs/rules.md``): for each ego, over the closed domain of entities in its view (ego included), the
action predicates take the values of the Clark completion of the clauses, evaluated stratum by stratum;
undefined actions are false; if a constraint body holds the ego's problem is unsatisfiable and it gets the
default (no action derived → Normal), as the reference's unsat branch does.

A :class:`TaskSection` holds SPF task rules (name, reward, dead flag, clauses) judged with the ego's chosen
action fixed (docs/reference.md#task-rule-semantics).

A :class:`RuleFile` is a ``.rules`` file: one implicit section ``main``, or named sections such as
``sim`` / ``task`` / ``expert``.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Mapping

import networkx as nx

from core.base.codes import ACTION_NAMES
from core.base.errors import RuleError, SourcePos, read_text_file
from core.logic.lang.ontology import Ontology
from core.logic.lang.parser import MAIN_SECTION, MAX_RULE_CHARS, RawClause, RawFile, RawSection, RawTask, parse_raw
from core.logic.lang.syntax import EGO, Clause, format_clause

__all__ = ["Program", "TaskRule", "TaskSection", "RuleFile", "parse_program", "parse_rules", "load_rules",
           "build_program", "TASK_SECTION", "DependencyEdge"]

#: The section whose clauses are SPF task rules.
TASK_SECTION = "task"
#: Largest task-rule reward magnitude (sums of rewards over long episodes stay exact floats).
MAX_REWARD = 1e9


def _err(msg: str, file: str | None, pos: SourcePos | None) -> RuleError:
    return RuleError(msg, file, pos.line if pos else None, pos.col if pos else None)


def _suggest(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""


@dataclass(frozen=True)
class DependencyEdge:
    """``head`` uses action ``body`` in a clause (negatively when ``negative``)."""

    head: str
    body: str
    negative: bool
    clause: str  # clause label
    pos: SourcePos | None


def _check_clause(c: RawClause, onto: Ontology, file: str | None, *, in_task: bool) -> None:
    """Ontology checks for one clause: predicates known, arities, head an action over X, actions only on X."""
    if c.head is not None:
        h = c.head
        p = onto.get(h.pred)
        if p is None:
            raise _err(f"unknown predicate {h.pred!r} in the head{_suggest(h.pred, onto.names)}", file, h.pos)
        if not p.is_action:
            acts = ", ".join(a.name for a in onto.actions) or "none in this ontology"
            raise _err(f"the head must be an action predicate ({acts}); {h.pred} is a {p.kind} predicate",
                       file, h.pos)
        if len(h.args) != 1:
            raise _err(f"arity mismatch: {h.pred} takes 1 argument, got {len(h.args)}", file, h.pos)
        if h.args[0] != EGO:
            raise _err(f"the head's argument must be the ego variable {EGO} (rules are written from the ego's "
                       f"point of view), got {h.args[0] if not h.args[0].startswith('_#') else '_'}",
                       file, h.pos)
    for lit in c.body:
        a = lit.atom
        p = onto.get(a.pred)
        if p is None:
            raise _err(f"unknown predicate {a.pred!r}{_suggest(a.pred, onto.names)}", file, a.pos)
        if len(a.args) != p.arity:
            raise _err(f"arity mismatch: {a.pred} takes {p.arity} argument{'s' * (p.arity > 1)}, got "
                       f"{len(a.args)}", file, a.pos)
        if p.is_action and a.args != (EGO,):
            raise _err(f"action predicate {a.pred} can only be applied to the ego {EGO} in a body (the "
                       f"rules define actions for the ego only)", file, a.pos)


def _labelled(raw: list[RawClause], file: str | None, start_id: int, seen: dict[str, SourcePos | None],
              default_prefix: str | None = None, counters: dict[str, int] | None = None) -> list[Clause]:
    out: list[Clause] = []
    counters = counters if counters is not None else {}
    for k, c in enumerate(raw):
        key = c.head.pred if c.head is not None else "constraint"
        counters[key] = counters.get(key, 0) + 1
        number = counters[key]
        if c.label is not None:
            label, user = c.label, True
        else:
            label, user = f"{default_prefix or key}#{number}", False
        if label in seen:
            raise _err(f"duplicate clause label {label!r}", file, c.label_pos or c.pos)
        seen[label] = c.pos
        out.append(Clause(c.head.pred if c.head else None, tuple(c.body), label, start_id + k, number, c.pos,
                          user))
    return out


def dependency_edges(clauses: Iterable[Clause], onto: Ontology) -> list[DependencyEdge]:
    edges = []
    for c in clauses:
        if c.head is None:
            continue
        for lit in c.body:
            p = onto.get(lit.pred)
            if p is not None and p.is_action:
                edges.append(DependencyEdge(c.head, lit.pred, not lit.positive, c.label, lit.pos))
    return edges


def _stratify(clauses: tuple[Clause, ...], onto: Ontology, file: str | None,
              check: bool) -> tuple[tuple[tuple[str, ...], ...], bool]:
    """Strata of the defined heads (evaluation order) and whether the program is acyclic.

    Raises on any cycle among action predicates unless ``check`` is False."""
    g = nx.DiGraph()
    heads = [c.head for c in clauses if c.head is not None]
    g.add_nodes_from(dict.fromkeys(heads))
    edges = dependency_edges(clauses, onto)
    for e in edges:
        g.add_edge(e.head, e.body)
    cyclic = [scc for scc in nx.strongly_connected_components(g)
              if len(scc) > 1 or any(g.has_edge(n, n) for n in scc)]
    if cyclic:
        if not check:
            return (), False
        scc = cyclic[0]
        inner = [e for e in edges if e.head in scc and e.body in scc]
        neg = [e for e in inner if e.negative]
        at = (neg or inner)[0]
        # the cycle shown runs through the offending edge (head → body, then back to head inside the component)
        back = nx.shortest_path(g.subgraph(scc), at.body, at.head)
        path = " → ".join([at.head] + back)
        if neg:
            raise _err(f"unstratified negation: {path} (clause {at.clause} uses Not({at.body}(X)) inside a "
                       f"cycle); an action may not depend on its own negation", file, at.pos)
        raise _err(f"recursive definition {path} (clause {at.clause}); action predicates may not depend on "
                   f"themselves", file, at.pos)
    level: dict[str, int] = {}
    for node in reversed(list(nx.topological_sort(g))):
        succ = [level[s] for s in g.successors(node) if s in level]
        level[node] = 1 + max(succ) if succ else 0
    defined = [h for h in dict.fromkeys(heads)]
    strata: dict[int, list[str]] = {}
    for h in defined:
        strata.setdefault(level[h], []).append(h)
    return tuple(tuple(sorted(strata[k], key=ACTION_NAMES.index)) for k in sorted(strata)), True


@dataclass(frozen=True, eq=False)
class Program:
    """A validated, stratified set of clauses for the ego X (one rule-file section)."""

    name: str
    ontology: Ontology
    clauses: tuple[Clause, ...]
    strata: tuple[tuple[str, ...], ...]
    file: str | None = None
    stratified: bool = True

    @property
    def rules(self) -> tuple[Clause, ...]:
        return tuple(c for c in self.clauses if c.head is not None)

    @property
    def constraints(self) -> tuple[Clause, ...]:
        return tuple(c for c in self.clauses if c.head is None)

    @property
    def heads(self) -> tuple[str, ...]:
        """Defined action heads in evaluation order."""
        return tuple(h for s in self.strata for h in s)

    def clauses_for(self, head: str) -> tuple[Clause, ...]:
        return tuple(c for c in self.clauses if c.head == head)

    def clause(self, label_or_id: str | int) -> Clause:
        if isinstance(label_or_id, int):
            return self.clauses[label_or_id]
        for c in self.clauses:
            if c.label == label_or_id:
                return c
        raise KeyError(label_or_id)

    def used_predicates(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for c in self.clauses:
            for lit in c.body:
                seen.setdefault(lit.pred)
        return tuple(seen)

    @cached_property
    def max_vars(self) -> int:
        """The most existential variables of a clause (memoised: the simulator asks every step)."""
        return max((len(c.variables) for c in self.clauses), default=0)

    def dependencies(self) -> list[DependencyEdge]:
        return dependency_edges(self.clauses, self.ontology)

    def to_text(self, header: bool = False) -> str:
        lines = [f"#section {self.name}."] if header else []
        lines += [format_clause(c) for c in self.clauses]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True, eq=False)
class TaskRule:
    """An SPF task rule: violated iff a clause body holds (with the chosen action fixed) and its head is not
    the chosen action. ``reward`` is added when violated; ``dead`` ends the episode."""

    name: str
    reward: float
    dead: bool
    clauses: tuple[Clause, ...]
    description: str = ""
    pos: SourcePos | None = None


@dataclass(frozen=True, eq=False)
class TaskSection:
    name: str
    ontology: Ontology
    rules: tuple[TaskRule, ...]
    file: str | None = None

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return tuple(c for r in self.rules for c in r.clauses)

    def rule_of(self, clause_id: int) -> TaskRule:
        for r in self.rules:
            if any(c.id == clause_id for c in r.clauses):
                return r
        raise KeyError(clause_id)

    def to_text(self, header: bool = True) -> str:
        lines = [f"#section {self.name}."] if header else []
        for r in self.rules:
            opts = f" reward={_num(r.reward)} dead={'true' if r.dead else 'false'}"
            if r.description:
                opts += f" description={_quote(r.description)}"
            lines.append(f"#task {_quote(r.name)}{opts}.")
            lines += [format_clause(c) for c in r.clauses]
        return "\n".join(lines) + "\n"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@dataclass(frozen=True, eq=False)
class RuleFile:
    """A parsed ``.rules`` file: sections in file order (``main`` when the file has no ``#section``)."""

    sections: Mapping[str, Program | TaskSection]
    ontology: Ontology
    file: str | None = None
    ontology_hint: str | None = None

    def program(self, section: str | None = None) -> Program:
        """A rule section. ``None`` = the file's only rule section (``main`` for plain files)."""
        if section is None:
            progs = [s for s in self.sections.values() if isinstance(s, Program)]
            if len(progs) == 1:
                return progs[0]
            if "sim" in self.sections:
                section = "sim"
            else:
                raise KeyError(f"{self.file or 'rule file'} has several sections "
                               f"({', '.join(self.sections)}); name one")
        s = self.sections.get(section)
        if not isinstance(s, Program):
            raise KeyError(f"no rule section {section!r} in {self.file or 'rule file'} "
                           f"(sections: {', '.join(self.sections)})")
        return s

    def task(self, section: str = TASK_SECTION) -> TaskSection:
        s = self.sections.get(section)
        if not isinstance(s, TaskSection):
            raise KeyError(f"no task section {section!r} in {self.file or 'rule file'}")
        return s

    def to_text(self) -> str:
        parts = []
        if self.ontology_hint:
            parts.append(f"#ontology {self.ontology_hint}.\n")
        plain = list(self.sections) == [MAIN_SECTION]
        for s in self.sections.values():
            parts.append(s.to_text(header=not plain))
        return "\n".join(parts)


def build_program(name: str, raw: list[RawClause], onto: Ontology, file: str | None = None, *,
                  check: bool = True) -> Program:
    """Validate raw clauses into a :class:`Program`. With ``check=False`` cycles are tolerated (the program
    is marked ``stratified=False`` and can only be analysed, not run)."""
    for c in raw:
        _check_clause(c, onto, file, in_task=False)
    clauses = tuple(_labelled(raw, file, 0, {}))
    strata, ok = _stratify(clauses, onto, file, check)
    return Program(name, onto, clauses, strata, file, stratified=ok)


def _task_section(sec: RawSection, onto: Ontology, file: str | None) -> TaskSection:
    rules: list[TaskRule] = []
    seen_labels: dict[str, SourcePos | None] = {}
    names: set[str] = set()
    next_id = 0
    for item in sec.items:
        if isinstance(item, RawClause):
            raise _err(f"clauses in section {TASK_SECTION!r} must follow a #task header "
                       f"(#task \"name\" reward=-10 dead=true.)", file, item.pos)
        opts = dict(item.options)
        for k, (_, p) in opts.items():
            if k not in ("reward", "dead", "description"):
                raise _err(f"unknown #task option {k!r} (allowed: reward, dead, description)", file, p)
        if "reward" not in opts:
            raise _err(f"task rule {item.name!r} needs reward=<number>", file, item.pos)
        reward, rpos = opts["reward"]
        if not isinstance(reward, (int, float)):
            raise _err("reward must be a number", file, rpos)
        if not abs(reward) <= MAX_REWARD:  # also catches inf and nan (1e400 reads as inf)
            raise _err(f"reward must lie within -{MAX_REWARD:g}..{MAX_REWARD:g}", file, rpos)
        dead, dpos = opts.get("dead", ("false", None))
        if dead not in ("true", "false"):
            raise _err("dead must be true or false", file, dpos)
        desc, despos = opts.get("description", ("", None))
        if not isinstance(desc, str):
            raise _err("description must be a string", file, despos)
        if item.name in names:
            raise _err(f"duplicate task rule name {item.name!r}", file, item.pos)
        names.add(item.name)
        if not item.clauses:
            raise _err(f"task rule {item.name!r} has no clauses", file, item.pos)
        for c in item.clauses:
            _check_clause(c, onto, file, in_task=True)
            if c.head is None:
                raise _err("a task rule clause needs a head (the action the rule requires)", file, c.pos)
        cl = _labelled(item.clauses, file, next_id, seen_labels, default_prefix=item.name)
        next_id += len(cl)
        rules.append(TaskRule(item.name, float(reward), dead == "true", tuple(cl), desc, item.pos))
    return TaskSection(sec.name, onto, tuple(rules), file)


def rule_file_from_raw(raw: RawFile, onto: Ontology, *, check: bool = True) -> RuleFile:
    sections: dict[str, Program | TaskSection] = {}
    for sec in raw.sections:
        if sec.name == TASK_SECTION:
            sections[sec.name] = _task_section(sec, onto, raw.file)
            continue
        clauses: list[RawClause] = []
        for item in sec.items:
            if isinstance(item, RawTask):
                raise _err(f"#task is only allowed in section {TASK_SECTION!r}", raw.file, item.pos)
            clauses.append(item)
        sections[sec.name] = build_program(sec.name, clauses, onto, raw.file, check=check)
    return RuleFile(sections, onto, raw.file, raw.ontology_hint)


def parse_rules(text: str, ontology: Ontology, file: str | None = None, *, strict: bool = True) -> RuleFile:
    """Parse a whole ``.rules`` text (any sections). ``strict=False`` accepts cyclic (unstratified) sections
    so the rule editor can analyse them; such programs have ``stratified=False`` and cannot be run."""
    if text.startswith("\ufeff"):  # a byte-order mark left by a reader that did not drop it
        text = text[1:]
    return rule_file_from_raw(parse_raw(text, file), ontology, check=strict)


def parse_program(text: str, ontology: Ontology, file: str | None = None, *, strict: bool = True) -> Program:
    """Parse rule text without sections (or with exactly one rule section) into a :class:`Program`."""
    rf = parse_rules(text, ontology, file, strict=strict)
    progs = [s for s in rf.sections.values() if isinstance(s, Program)]
    if len(rf.sections) != 1 or len(progs) != 1:
        raise RuleError(f"expected a single rule section, found sections {', '.join(rf.sections)}; use "
                        f"parse_rules / load_rules for sectioned files", file, 1, 1)
    return progs[0]


def load_rules(path: str | Path, ontology: Ontology) -> RuleFile:
    """Load a ``.rules`` file."""
    p = Path(path)
    text = read_text_file(p, MAX_RULE_CHARS, RuleError, "rule file", "rule file")
    return parse_rules(text, ontology, str(p))
