"""Import the reference's ontology and rule YAML (``config/rules/**``) without evaluating anything.

The reference stores rules as z3py Python expressions and runs them with ``eval`` (docs/reference.md#rule-files,
docs/reference.md#security). Here a formula is parsed with :func:`ast.parse` (parsing only) and walked with a
whitelist — ``And``, ``Or``, ``Not``, ``Exists([vars], …)``, ``Implies``, ``==``, predicate calls, the ego name
``entity`` and bound ``dummy…`` variables. Anything else is a :class:`~core.base.errors.RuleError` naming the construct and
its position.

Conversion to clauses (``docs/rules.md`` has the table):

* ``A(entity) == F`` (first definition of A in a section) → one clause ``A(X) :- conj`` per disjunct of F's
  disjunctive normal form; ``Exists`` variables become Y, Z, W, … .
* ``Implies(F, A(entity))`` → clauses ``A(X) :- conj``; in a ``Task`` section they form the task rule.
* A bare action atom ``A(entity)`` → the fact ``A(X).``
* Any other top-level formula G (e.g. ``Not(Slow(entity))``, or a *second* definition ``A(entity) == F`` as in
  the ``*_Default`` variants) is an assertion: it becomes the constraints ``:- conj`` for the disjuncts of
  ``Not(G)``. The definitions fix every action, so the assertion either holds or makes the problem unsat —
  exactly what z3 does with the reference's conjunction of equations.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator

from core.base.codes import ACTION_NAMES
from core.base.errors import ConfigError, RuleError, SourcePos
from core.io.yamlio import LocatedDict, LocatedList, load_yaml
from core.logic.lang.ontology import Ontology, Predicate, _freeze
from core.logic.lang.parser import MAIN_SECTION, RawClause, RawFile, RawSection, RawTask
from core.logic.lang.program import TASK_SECTION, RuleFile, rule_file_from_raw
from core.logic.lang.registry import REFERENCE_FUNCTION_NAMES, REGISTRY
from core.logic.lang.syntax import EGO, Atom, Literal

__all__ = ["import_reference_ontology", "import_reference_rules", "parse_reference_formula",
           "formula_to_clauses", "FAtom", "FNot", "FAnd", "FOr", "FExists", "FImplies", "FEq", "Formula"]

_MAX_FORMULA = 200_000
_MAX_DEPTH = 200
_MAX_DNF = 20_000
_EGO_NAME = "entity"
_DUMMY = re.compile(r"dummy\w*\Z")
_FRESH = ["Y", "Z", "W", "V", "U", "T", "S", "R", "Q", "P"]


# -- formula tree ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FAtom:
    pred: str
    args: tuple[str, ...]  # "entity" or a dummy variable name
    pos: SourcePos


@dataclass(frozen=True)
class FNot:
    arg: "Formula"
    pos: SourcePos


@dataclass(frozen=True)
class FAnd:
    args: tuple["Formula", ...]
    pos: SourcePos


@dataclass(frozen=True)
class FOr:
    args: tuple["Formula", ...]
    pos: SourcePos


@dataclass(frozen=True)
class FExists:
    vars: tuple[str, ...]
    body: "Formula"
    pos: SourcePos


@dataclass(frozen=True)
class FImplies:
    cond: "Formula"
    concl: "Formula"
    pos: SourcePos


@dataclass(frozen=True)
class FEq:
    left: "Formula"
    right: "Formula"
    pos: SourcePos


Formula = FAtom | FNot | FAnd | FOr | FExists | FImplies | FEq


class _Walker:
    """Whitelisted walk of a parsed z3py expression (never evaluated)."""

    def __init__(self, onto: Ontology, file: str | None, line0: int, col0: int) -> None:
        self.onto = onto
        self.file = file
        self.line0 = line0
        self.col0 = col0

    def pos(self, node: ast.AST) -> SourcePos:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        return SourcePos(self.line0 + line - 1, (self.col0 if line == 1 else 0) + col + 1)

    def error(self, msg: str, node: ast.AST) -> RuleError:
        p = self.pos(node)
        return RuleError(msg, self.file, p.line, p.col)

    def walk(self, node: ast.AST, bound: tuple[str, ...], depth: int = 0) -> Formula:
        if depth > _MAX_DEPTH:
            raise self.error(f"formula nested deeper than {_MAX_DEPTH} levels", node)
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1 or not isinstance(node.ops[0], ast.Eq):
                raise self.error("only a single '==' comparison is supported", node)
            return FEq(self.walk(node.left, bound, depth + 1), self.walk(node.comparators[0], bound, depth + 1),
                       self.pos(node))
        if not isinstance(node, ast.Call):
            raise self.error(f"unsupported construct {type(node).__name__} (allowed: And, Or, Not, Exists, "
                             f"Implies, ==, predicate calls)", node)
        if not isinstance(node.func, ast.Name):
            raise self.error("only plain function names may be called (no attributes or expressions)", node)
        if node.keywords:
            raise self.error("keyword arguments are not supported", node)
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise self.error("starred arguments are not supported", node)
        fn = node.func.id
        args = node.args
        if fn in ("And", "Or"):
            if not args:
                raise self.error(f"{fn}() needs at least one argument", node)
            parts = tuple(self.walk(a, bound, depth + 1) for a in args)
            return FAnd(parts, self.pos(node)) if fn == "And" else FOr(parts, self.pos(node))
        if fn == "Not":
            if len(args) != 1:
                raise self.error("Not() takes exactly one argument", node)
            return FNot(self.walk(args[0], bound, depth + 1), self.pos(node))
        if fn == "Implies":
            if len(args) != 2:
                raise self.error("Implies() takes exactly two arguments", node)
            return FImplies(self.walk(args[0], bound, depth + 1), self.walk(args[1], bound, depth + 1),
                            self.pos(node))
        if fn == "Exists":
            if len(args) != 2 or not isinstance(args[0], (ast.List, ast.Tuple)):
                raise self.error("Exists takes a list of variables and a formula: Exists([dummyA], F)", node)
            names = []
            for v in args[0].elts:
                if not isinstance(v, ast.Name) or not _DUMMY.match(v.id):
                    raise self.error("Exists variables must be names starting with 'dummy'", v)
                names.append(v.id)
            if not names:
                raise self.error("Exists needs at least one variable", node)
            return FExists(tuple(names), self.walk(args[1], bound + tuple(names), depth + 1), self.pos(node))
        if fn == "ForAll":
            raise self.error("ForAll is not supported (rules are existential over the entities in view)", node)
        p = self.onto.get(fn)
        if p is None:
            raise self.error(f"unknown predicate or function {fn!r} (not in ontology {self.onto.name!r}; "
                             f"allowed combinators: And, Or, Not, Exists, Implies)", node)
        if len(args) != p.arity:
            raise self.error(f"arity mismatch: {fn} takes {p.arity} argument(s), got {len(args)}", node)
        names_: list[str] = []
        for a in args:
            if not isinstance(a, ast.Name):
                raise self.error(f"arguments of {fn} must be 'entity' or a bound dummy variable", a)
            if a.id != _EGO_NAME and a.id not in bound:
                raise self.error(f"unbound variable {a.id!r} (use 'entity' or a variable of an enclosing "
                                 f"Exists)", a)
            names_.append(a.id)
        if p.is_action and names_ != [_EGO_NAME]:
            raise self.error(f"action predicate {fn} may only be applied to 'entity' (the ego)", node)
        return FAtom(fn, tuple(names_), self.pos(node))


def parse_reference_formula(text: str, ontology: Ontology, file: str | None = None, line: int = 1,
                            col: int = 1) -> Formula:
    """Parse one z3py formula string into a :data:`Formula` tree (whitelisted AST walk, no evaluation)."""
    if not isinstance(text, str):
        raise RuleError("formula must be a string", file, line, col)
    if len(text) > _MAX_FORMULA:
        raise RuleError(f"formula too long ({len(text)} characters)", file, line, col)
    src = text.strip()
    lead = text[: len(text) - len(text.lstrip())]
    line0 = line + lead.count("\n")
    if not src:
        raise RuleError("empty formula", file, line, col)
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError as exc:
        ln = line0 + (exc.lineno or 1) - 1
        raise RuleError(f"formula syntax error: {exc.msg}", file, ln, exc.offset or 1) from None
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise RuleError(f"formula cannot be parsed: {type(exc).__name__}", file, line0, col) from None
    try:
        return _Walker(ontology, file, line0, col - 1 if lead.count("\n") == 0 else 0).walk(tree.body, ())
    except RecursionError:
        raise RuleError("formula nested too deeply", file, line0, col) from None


# -- conversion to clauses -----------------------------------------------------------------------------------------
Conj = tuple[Literal, ...]


class _Converter:
    def __init__(self, file: str | None) -> None:
        self.file = file

    def error(self, msg: str, pos: SourcePos) -> RuleError:
        return RuleError(msg, self.file, pos.line, pos.col)

    def dnf(self, f: Formula, env: dict[str, str], positive: bool, fresh: Iterator[str]) -> list[Conj]:
        """Disjunctive normal form of f (or of Not(f) when ``positive`` is False)."""
        if isinstance(f, FAtom):
            args = tuple(EGO if a == _EGO_NAME else env[a] for a in f.args)
            return [(Literal(Atom(f.pred, args, f.pos), positive),)]
        if isinstance(f, FNot):
            return self.dnf(f.arg, env, not positive, fresh)
        if isinstance(f, (FAnd, FOr)):
            conj = isinstance(f, FAnd) == positive
            parts = [self.dnf(a, env, positive, fresh) for a in f.args]
            if not conj:
                return [c for p in parts for c in p]
            out: list[Conj] = [()]
            for p in parts:
                if len(out) * len(p) > _MAX_DNF:
                    raise self.error("formula too large to convert to clauses", f.pos)
                out = [a + b for a in out for b in p]
            return [tuple(dict.fromkeys(c)) for c in out]
        if isinstance(f, FImplies):
            return self.dnf(FOr((FNot(f.cond, f.pos), f.concl), f.pos), env, positive, fresh)
        if isinstance(f, FEq):
            # (a == b) = (a ∧ b) ∨ (¬a ∧ ¬b);  ¬(a == b) = (a ∧ ¬b) ∨ (¬a ∧ b)
            a, b = f.left, f.right
            if positive:
                g: Formula = FOr((FAnd((a, b), f.pos), FAnd((FNot(a, f.pos), FNot(b, f.pos)), f.pos)), f.pos)
            else:
                g = FOr((FAnd((a, FNot(b, f.pos)), f.pos), FAnd((FNot(a, f.pos), b), f.pos)), f.pos)
            return self.dnf(g, env, True, fresh)
        if isinstance(f, FExists):
            if not positive:
                raise self.error("a negated Exists (a universal condition) cannot be expressed as clauses",
                                 f.pos)
            env2 = dict(env)
            for v in f.vars:
                env2[v] = next(fresh)
            return self.dnf(f.body, env2, True, fresh)
        raise self.error(f"unsupported formula {type(f).__name__}", getattr(f, "pos", SourcePos(1, 1)))


def _fresh_names() -> Iterator[str]:
    k = 0
    while True:
        for n in _FRESH:
            yield n if k == 0 else f"{n}{k + 1}"
        k += 1


def _action_atom(f: Formula) -> str | None:
    if isinstance(f, FAtom) and f.pred in ACTION_NAMES and f.args == (_EGO_NAME,):
        return f.pred
    return None


def formula_to_clauses(f: Formula, ontology: Ontology, *, task: bool, defined: set[str],
                       file: str | None = None) -> list[RawClause]:
    """Clauses for one top-level reference formula (see the module doc). ``defined`` collects heads defined
    with ``==`` so far in the section (a later ``==`` for the same head becomes an assertion)."""
    conv = _Converter(file)
    pos = f.pos

    def clauses(head: str | None, body: Formula, positive: bool = True) -> list[RawClause]:
        out = []
        for conj in conv.dnf(body, {}, positive, _fresh_names()):
            h = Atom(head, (EGO,), pos) if head else None
            out.append(RawClause(h, list(conj), None, pos))
        return out

    if task:
        if not isinstance(f, FImplies) or _action_atom(f.concl) is None:
            raise conv.error("a task rule formula must be Implies(condition, Action(entity))", pos)
        return clauses(_action_atom(f.concl), f.cond)
    if isinstance(f, FEq):
        for head_side, body in ((f.left, f.right), (f.right, f.left)):
            head = _action_atom(head_side)
            if head is not None and head not in defined:
                defined.add(head)
                return clauses(head, body)
    if isinstance(f, FImplies) and _action_atom(f.concl) is not None:
        head = _action_atom(f.concl)
        if head in defined:
            raise conv.error(f"Implies(…, {head}(entity)) after a definition {head}(entity) == … in the same "
                             f"section is not supported", pos)
        return clauses(head, f.cond)
    head = _action_atom(f)
    if head is not None:
        return [RawClause(Atom(head, (EGO,), pos), [], None, pos)]
    # assertion G: the problem is unsat exactly when Not(G) holds
    return clauses(None, f, positive=False)


# -- files ---------------------------------------------------------------------------------------------------------
def _formula_of(item: LocatedDict, onto: Ontology, file: str | None) -> tuple[Formula, SourcePos]:
    if "formula" not in item:
        raise item.error("rule item needs a 'formula'")
    text = item["formula"]
    if not isinstance(text, str):
        raise item.error("'formula' must be a string", "formula")
    line = item.line_of("formula") or 1
    if text.endswith("\n"):  # a block scalar (|) starts on the line after its key
        line += 1
    return parse_reference_formula(text, onto, file, line, 1), SourcePos(line, 1)


def _items(seq: Any, where: str, file: str | None, line: int | None) -> LocatedList:
    if not isinstance(seq, LocatedList):
        if isinstance(seq, LocatedDict):
            raise seq.error(f"{where} must be a list of rules")
        raise ConfigError(f"{where} must be a list of rules", file, line or 1)
    return seq


def import_reference_rules(path: str | Path, ontology: Ontology) -> RuleFile:
    """Convert a reference rule YAML (sim list format or SPF ``Sim``/``Task``/``Expert`` sections) into a
    :class:`RuleFile` (sections ``main`` or ``sim``/``task``/``expert``). Raises ConfigError / RuleError."""
    file = str(path)
    data = load_yaml(path)
    return reference_rules_from_data(data, ontology, file)


def reference_rules_from_data(data: Any, ontology: Ontology, file: str | None = None) -> RuleFile:
    if not isinstance(data, LocatedDict) or "Rules" not in data:
        raise ConfigError("a reference rule file is a mapping with a 'Rules' key", file, 1)
    rules = data["Rules"]
    if isinstance(rules, LocatedDict):
        sections = [(str(k).lower(), rules[k], rules.line_of(k)) for k in rules]
    else:
        sections = [(MAIN_SECTION, rules, data.line_of("Rules"))]
    raw_sections = []
    for name, seq, line in sections:
        items = _items(seq, f"section {name!r}", file, line)
        sec = RawSection(name, SourcePos(line or 1, 1))
        defined: set[str] = set()
        for i, it in enumerate(items):
            if not isinstance(it, LocatedDict):
                raise items.error("each rule must be a mapping", i)
            if "formula" not in it and len(it) == 1:  # list format: {Name: {formula, description}}
                (rname, body), = it.items()
                if not isinstance(body, LocatedDict):
                    raise it.error(f"rule {rname!r} must be a mapping with 'formula'", rname)
                item, rname = body, str(rname)
            else:
                item = it
                rname = str(it.get("name", f"rule {i + 1}"))
            f, fpos = _formula_of(item, ontology, file)
            is_task = name == TASK_SECTION
            cl = formula_to_clauses(f, ontology, task=is_task, defined=defined, file=file)
            if is_task:
                opts: dict[str, tuple[object, SourcePos]] = {}
                for key in ("reward", "dead", "description"):
                    if key in item:
                        v = item[key]
                        if key == "dead":
                            if not isinstance(v, bool):
                                raise item.error("'dead' must be true or false", key)
                            v = "true" if v else "false"
                        elif key == "reward" and (isinstance(v, bool) or not isinstance(v, (int, float))):
                            raise item.error("'reward' must be a number", key)
                        elif key == "description" and not isinstance(v, str):
                            v = str(v)
                        opts[key] = (v, SourcePos(item.line_of(key) or 1, 1))
                if "reward" not in opts:
                    raise item.error(f"task rule {rname!r} needs a 'reward'")
                sec.items.append(RawTask(_unique(rname, sec), opts, fpos, cl))
            else:
                sec.items.extend(cl)
        raw_sections.append(sec)
    names = [s.name for s in raw_sections]
    if len(set(names)) != len(names):
        raise ConfigError("duplicate section names (case-insensitive)", file, 1)
    return rule_file_from_raw(RawFile(raw_sections, ontology.name, file), ontology)


def _unique(name: str, sec: RawSection) -> str:
    taken = {it.name for it in sec.items if isinstance(it, RawTask)}
    if name not in taken:
        return name
    k = 2
    while f"{name} ({k})" in taken:
        k += 1
    return f"{name} ({k})"


# -- ontology --------------------------------------------------------------------------------------------------
#: CollidingClose reach of the vis branch (docs/reference.md#collisions).
VIS_COLLIDE_RANGE = {"pedestrian": 4, "car": 11}


def import_reference_ontology(path: str | Path, branch: str | None = None, name: str | None = None) -> Ontology:
    """Convert a reference ontology YAML. Grounding functions are mapped by their *name* to our registry
    (the dotted path is never imported). ``branch`` "master" or "vis" selects CollidingClose ranges; by
    default "vis" when a path component is ``vis`` or ``Vis``."""
    p = Path(path)
    data = load_yaml(p)
    if branch is None:
        branch = "vis" if any(part in ("vis", "Vis") for part in p.parts) else "master"
    if branch not in ("master", "vis"):
        raise ValueError("branch must be 'master' or 'vis'")
    if name is None:
        stem = p.stem
        name = stem[len("ontology_"):] if stem.startswith("ontology_") else (
            p.parent.name.lower() if stem == "ontology" else stem)
    return reference_ontology_from_data(data, name, branch, str(p))


def reference_ontology_from_data(data: Any, name: str, branch: str = "master", file: str | None = None
                                 ) -> Ontology:
    if not isinstance(data, LocatedDict) or "Predicates" not in data:
        raise ConfigError("a reference ontology is a mapping with 'Predicates'", file, 1)
    plist = data["Predicates"]
    if not isinstance(plist, LocatedList):
        raise data.error("'Predicates' must be a list", "Predicates")
    preds: list[Predicate] = []
    seen: set[str] = set()
    for i, it in enumerate(plist):
        if not isinstance(it, LocatedDict) or len(it) != 1:
            raise plist.error("each predicate must be a one-key mapping {Name: {...}}", i)
        (pname, body), = it.items()
        pname = str(pname)
        if not isinstance(body, LocatedDict):
            raise it.error(f"predicate {pname}: expected a mapping", pname)
        if pname in seen:
            raise it.error(f"duplicate predicate {pname!r}", pname)
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", pname) or pname in ("Not", "not"):
            raise it.error(f"invalid predicate name {pname!r}", pname)
        seen.add(pname)
        arity = body.get("arity")
        if isinstance(arity, bool) or arity not in (1, 2):
            raise body.error(f"predicate {pname}: arity must be 1 or 2", "arity")
        desc = body.get("description", "")
        desc = desc if isinstance(desc, str) else str(desc)
        fn = body.get("function")
        if fn is None or fn == "None":
            if pname not in ACTION_NAMES:
                raise body.error(f"predicate {pname} has no grounding function but is not an action "
                                 f"({', '.join(ACTION_NAMES)})", "function")
            if arity != 1:
                raise body.error(f"action {pname} must have arity 1", "arity")
            preds.append(Predicate(pname, 1, "action", desc, None, MappingProxyType({}), i))
            continue
        if not isinstance(fn, str):
            raise body.error(f"predicate {pname}: 'function' must be a string", "function")
        short = fn.rsplit(".", 1)[-1]
        reg = REFERENCE_FUNCTION_NAMES.get(short)
        if reg is None:
            raise body.error(f"predicate {pname}: unknown grounding function {fn!r} (known reference functions: "
                             f"{', '.join(REFERENCE_FUNCTION_NAMES)})", "function")
        spec = REGISTRY[reg]
        if spec.arity != arity:
            raise body.error(f"predicate {pname}: {short} has arity {spec.arity}, declared {arity}", "arity")
        sem = body.get("semantic")
        kind = spec.kind if sem is None else ("semantic" if sem is True else "spatial")
        params = {k: s.default for k, s in spec.params.items()}
        if reg == "colliding_close" and branch == "vis":
            params["range"] = dict(VIS_COLLIDE_RANGE)
        preds.append(Predicate(pname, arity, kind, desc, reg, _freeze(params), i))
    if not preds:
        raise data.error("no predicates", "Predicates")
    return Ontology(name, tuple(preds), description=f"imported from {file or 'reference ontology'} ({branch})",
                    source=file)
