"""Agent-set edits as pure functions: what the agent editor's commands do (docs/agent-editor.md).

Why pure functions on the immutable :class:`~core.agents.spec.AgentSet`: a command (core/studio/agent_commands.py)
computes the new set once, keeps the old one and puts it back on undo, so undo/redo restore equal sets; scripts and
tests use the same operations without a session or Qt. Every function returns a new set and leaves its argument
as it is; indices are positions in the set (the table's rows).

The edits never refuse a combination the user is in the middle of making (a pedestrian with ``ambulance``, two
agents named ``Car_3``, a start on a building): those are listed as problems (:func:`agent_problems`, shown in the
Problems panel) and block Apply until fixed, the way a text editor lets you type an error and underlines it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from core.agents.io import MAX_PRIORITY, check_agent
from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import Kind
from core.base.errors import LogiCityError
from core.base.world import KNOWN_CONCEPTS
from core.map.trips import describe_cell, plan_trip

__all__ = ["Cell", "KINDS", "concepts_for", "ontology_concepts", "next_id", "parse_name", "add_agent",
           "duplicate_agents", "delete_agents", "move_agents", "drop_agents", "reorder_agents", "edit_agents",
           "set_cells", "generate_composition", "AgentIssue", "agent_problems", "NORMAL"]

Cell = tuple[int, int]
KINDS: tuple[Kind, ...] = (Kind.CAR, Kind.PEDESTRIAN)
#: the composition generator's name for "no concept"
NORMAL = "normal"
_UNSET: Any = object()


# ---- what may be chosen ----------------------------------------------------------------------------------------

def ontology_concepts(ontology: Any) -> tuple[str, ...] | None:
    """The concepts the ontology's predicates test (a predicate grounded by ``is_<concept>``), in
    :data:`~core.base.world.KNOWN_CONCEPTS` order; None when there is no ontology (every known concept is offered)."""
    if ontology is None:
        return None
    groundings = {p.grounding for p in getattr(ontology, "predicates", ()) if getattr(p, "grounding", None)}
    return tuple(c for c in KNOWN_CONCEPTS if f"is_{c}" in groundings)


def concepts_for(kind: Kind, ontology: Any = None) -> tuple[str, ...]:
    """The concepts an agent of ``kind`` may carry that the project's ontology uses (what the editor offers as
    check boxes): a concept no rule can test would change nothing."""
    used = ontology_concepts(ontology)
    return tuple(c for c, k in KNOWN_CONCEPTS.items() if k is kind and (used is None or c in used))


def next_id(agents: AgentSet | Iterable[AgentSpec], kind: Kind) -> int:
    """The next free id of ``kind`` (one more than the largest in use, 1 for the first)."""
    return max((a.id for a in agents if a.kind is kind), default=0) + 1


def parse_name(text: str) -> tuple[Kind, int]:
    """``Car_3`` → (Car, 3); a ValueError says what is wrong (the name column is edited as text)."""
    kind_text, sep, tail = text.strip().rpartition("_")
    try:
        kind = Kind.parse(kind_text)
    except ValueError:
        kind = None
    if not sep or kind is None or not tail.isdigit():
        raise ValueError(f"an agent name is Car_<id> or Pedestrian_<id> (like Car_3), got {text!r}")
    return kind, int(tail)


def _default_priority(agents: Sequence[AgentSpec], kind: Kind) -> int:
    """Pedestrians 0; a new car comes last in priority (largest in use + 1) so it changes no one else's order."""
    if kind is Kind.PEDESTRIAN:
        return 0
    return min(max((a.priority for a in agents if a.kind is Kind.CAR), default=0) + 1, MAX_PRIORITY)


# ---- edits --------------------------------------------------------------------------------------------------------

def _indices(agents: AgentSet, indices: Iterable[int]) -> list[int]:
    out = sorted(set(int(i) for i in indices))
    for i in out:
        if not 0 <= i < len(agents):
            raise IndexError(f"no agent #{i} (the set has {len(agents)})")
    return out


def add_agent(agents: AgentSet, kind: Kind, *, index: int | None = None, concepts: Iterable[str] = (),
              priority: int | None = None, start: Cell | None = None, goal: Cell | None = None) -> AgentSet:
    """A new agent of ``kind`` with the next free id, inserted at ``index`` (default: at the end)."""
    specs = list(agents.agents)
    pr = _default_priority(specs, kind) if priority is None else int(priority)
    new = AgentSpec(kind, next_id(specs, kind), pr, tuple(concepts), 1, start, goal)
    specs.insert(len(specs) if index is None else max(0, min(int(index), len(specs))), new)
    return AgentSet(tuple(specs))


def duplicate_agents(agents: AgentSet, indices: Iterable[int]) -> AgentSet:
    """A copy of each chosen agent right after it, with a fresh id of its kind and the same concepts and priority.
    Start and goal are not copied: two agents on one start cell are rarely what a user means."""
    chosen = set(_indices(agents, indices))
    specs: list[AgentSpec] = []
    taken = list(agents.agents)
    for i, a in enumerate(agents.agents):
        specs.append(a)
        if i in chosen:
            copy = replace(a, id=next_id(taken, a.kind), start=None, goal=None)
            taken.append(copy)
            specs.append(copy)
    return AgentSet(tuple(specs))


def delete_agents(agents: AgentSet, indices: Iterable[int]) -> AgentSet:
    gone = set(_indices(agents, indices))
    return AgentSet(tuple(a for i, a in enumerate(agents.agents) if i not in gone))


def reorder_agents(agents: AgentSet, order: Sequence[int]) -> AgentSet:
    """The agents in ``order`` (a permutation of 0..n-1): order decides ties and which car is the SPF ego."""
    if sorted(order) != list(range(len(agents))):
        raise ValueError(f"order must be a permutation of 0..{len(agents) - 1}, got {list(order)}")
    return AgentSet(tuple(agents.agents[i] for i in order))


def move_agents(agents: AgentSet, indices: Iterable[int], delta: int) -> tuple[AgentSet, list[int]]:
    """Move the chosen rows up (``delta`` < 0) or down by ``|delta|`` places as a block, keeping their relative
    order (like moving a selection in a list); returns the set and the rows' new indices."""
    chosen = _indices(agents, indices)
    n = len(agents)
    if not chosen or delta == 0:
        return agents, chosen
    rest = [i for i in range(n) if i not in chosen]
    # the block starts where its first row goes, clamped so it stays inside the list
    first = max(0, min(chosen[0] + int(delta), n - len(chosen)))
    before = [i for i in rest][:first] if first <= len(rest) else rest
    order = before + chosen + rest[len(before):]
    new_rows = list(range(len(before), len(before) + len(chosen)))
    return reorder_agents(agents, order), new_rows


def drop_agents(agents: AgentSet, indices: Iterable[int], before: int) -> tuple[AgentSet, list[int]]:
    """Drag and drop: the chosen rows as a block (relative order kept) put before row ``before`` of the *current*
    order (``before`` = len: at the end), as a list view drops a dragged selection; returns the set and the rows'
    new indices. Dropping a block onto itself changes nothing."""
    chosen = _indices(agents, indices)
    n = len(agents)
    before = max(0, min(int(before), n))
    if not chosen:
        return agents, chosen
    rest = [i for i in range(n) if i not in chosen]
    at = sum(1 for i in rest if i < before)        # rows left before the drop point once the block is lifted
    order = rest[:at] + chosen + rest[at:]
    return reorder_agents(agents, order), list(range(at, at + len(chosen)))


def edit_agents(agents: AgentSet, indices: Iterable[int], *, kind: Kind | None = None, agent_id: int | None = None,
                priority: int | None = None, concepts: Iterable[str] | None = None,
                add_concepts: Iterable[str] = (), remove_concepts: Iterable[str] = ()) -> AgentSet:
    """Change the chosen agents at once (the table's multi-select edit).

    ``kind``: a changed kind gets the next free id of the new kind, drops the concepts the new kind cannot carry
    and takes the new kind's default priority (pedestrians 0). ``agent_id`` renames (one agent only).
    ``concepts`` replaces the concept list; ``add_concepts`` / ``remove_concepts`` tick or untick check boxes on
    every chosen agent (a concept invalid for an agent's kind is added anyway and reported as a problem, so the
    user sees why it does nothing)."""
    chosen = _indices(agents, indices)
    if agent_id is not None and len(chosen) != 1:
        raise ValueError("an id can be set on one agent at a time")
    specs = list(agents.agents)
    add, remove = tuple(add_concepts), set(remove_concepts)
    for i in chosen:
        a = specs[i]
        if kind is not None and kind is not a.kind:
            keep = tuple(c for c in a.concepts if KNOWN_CONCEPTS.get(c) is kind)
            a = replace(a, kind=kind, id=next_id(specs, kind), concepts=keep,
                        priority=_default_priority([s for j, s in enumerate(specs) if j != i], kind))
        if agent_id is not None:
            a = replace(a, id=int(agent_id))
        if priority is not None:
            a = replace(a, priority=int(priority))
        if concepts is not None:
            a = replace(a, concepts=tuple(dict.fromkeys(concepts)))
        if add or remove:
            cs = [c for c in a.concepts if c not in remove]
            cs += [c for c in add if c not in cs]
            a = replace(a, concepts=tuple(cs))
        specs[i] = a
    return AgentSet(tuple(specs))


def set_cells(agents: AgentSet, index: int, *, start: Cell | None = _UNSET, goal: Cell | None = _UNSET) -> AgentSet:
    """Set (a cell) or clear (None: drawn at random again) agent ``index``'s first start and/or goal."""
    (i,) = _indices(agents, [index])
    a = agents.agents[i]
    if start is not _UNSET:
        a = replace(a, start=None if start is None else (int(start[0]), int(start[1])))
    if goal is not _UNSET:
        a = replace(a, goal=None if goal is None else (int(goal[0]), int(goal[1])))
    specs = list(agents.agents)
    specs[i] = a
    return AgentSet(tuple(specs))


def generate_composition(counts: Mapping[Kind, Mapping[str, int]], seed: int = 0) -> AgentSet:
    """A population with exactly ``counts[kind][concept]`` agents of each kind and concept (``"normal"``: no
    concept), e.g. ``{Kind.CAR: {"normal": 6, "ambulance": 2}, Kind.PEDESTRIAN: {"normal": 3, "old": 2}}``.

    ``seed`` fixes the draw: the agents' order (it decides ties and the SPF ego) and the cars' priorities, a random
    permutation of 1..cars as in the reference's random worlds. Ids run 1.. per kind in the drawn order."""
    rng = np.random.default_rng(int(seed))
    pool: list[tuple[Kind, tuple[str, ...]]] = []
    for kind in KINDS:
        for concept, n in (counts.get(kind) or {}).items():
            if int(n) < 0:
                raise ValueError(f"count of {kind.label} {concept} must not be negative, got {n}")
            if concept != NORMAL and KNOWN_CONCEPTS.get(concept) is not kind:
                raise ValueError(f"{concept!r} is not a concept of {kind.label.lower()}s")
            pool += [(kind, () if concept == NORMAL else (concept,))] * int(n)
    order = rng.permutation(len(pool)) if pool else np.zeros(0, int)
    n_car = sum(1 for k, _ in pool if k is Kind.CAR)
    priorities = iter((rng.permutation(n_car) + 1).tolist())
    ids = {Kind.CAR: 0, Kind.PEDESTRIAN: 0}
    specs = []
    for j in order:
        kind, concepts = pool[int(j)]
        ids[kind] += 1
        specs.append(AgentSpec(kind, ids[kind], next(priorities) if kind is Kind.CAR else 0, concepts))
    return AgentSet(tuple(specs), source=f"generate_composition(seed={int(seed)})")


# ---- problems -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AgentIssue:
    """One problem of an agent set: ``severity`` "error" (blocks Apply) or "warning", the agent's row and name,
    and the cells involved (a bad start or goal)."""

    severity: str
    message: str
    index: int | None = None
    name: str | None = None
    cells: tuple[Cell, ...] = ()
    code: str = ""


def cell_problem(city: Any, kind: Kind, cell: Cell, what: str) -> str | None:
    h, w = city.shape
    r, c = cell
    if not (0 <= r < h and 0 <= c < w):
        return f"{what} ({r}, {c}) is outside the {h}×{w} map"
    net = city.drivable if kind is Kind.CAR else city.walkable
    if not net[r, c]:
        rule = ("cars drive on traffic streets, mid lanes and crossings" if kind is Kind.CAR else
                "pedestrians walk on walking streets and crossings")
        where = describe_cell(city, r, c) + (" (a building)" if int(city.building[r, c]) else "")
        return f"{what} ({r}, {c}) is {where}; {rule}"
    return None


def _route_problem(city: Any, kind: Kind, start: Cell, goal: Cell) -> str | None:
    try:
        plan_trip(kind, city, start, goal)
    except LogiCityError as exc:
        return f"goal {goal} cannot be reached from the start {start}: {exc.message}"
    except Exception as exc:  # noqa: BLE001 - a planner's own error (no route) is a finding, not a crash
        return f"goal {goal} cannot be reached from the start {start}: {exc}"
    return None


def agent_problems(agents: AgentSet, city: Any = None, ontology: Any = None, *, tab: str | None = None,
                   ego: str | None = None) -> list[AgentIssue]:
    """Every problem of an agent set (the Problems panel's "agents" entries; errors block Apply).

    Errors: an invalid concept for the kind (a pedestrian with ``ambulance``), a repeated concept, a bad priority
    (pedestrians 0, cars ≥ 1), duplicate names, a start or goal outside the map or off the agent's network (a
    building), a goal that cannot be reached from the chosen start. Warnings: a concept the ontology does not test
    (it changes nothing), start equal to goal, an empty set, an SPF ego (``ego``) missing from the set.
    ``tab`` prefixes the messages ("val: …") when a project has several sets."""
    pre = f"{tab}: " if tab else ""
    out: list[AgentIssue] = []
    used = ontology_concepts(ontology)
    seen: dict[str, int] = {}
    if not len(agents):
        out.append(AgentIssue("warning", f"{pre}the agent set is empty: nothing moves", code="empty"))
    for i, a in enumerate(agents.agents):
        name = a.name
        problem = check_agent(a.kind, a.id, a.priority, a.concepts, a.size)
        if problem is not None:
            out.append(AgentIssue("error", f"{pre}{name}: {problem[1]}", i, name, code=f"agent-{problem[0]}"))
        elif used is not None:
            for c in a.concepts:
                if c not in used:
                    out.append(AgentIssue("warning", f"{pre}{name}: concept {c!r} is not tested by the ontology "
                                          f"(it changes nothing)", i, name, code="concept-unused"))
        if name in seen:
            out.append(AgentIssue("error", f"{pre}{name}: duplicate name (also row {seen[name] + 1}); ids must be "
                                  f"unique per type", i, name, code="duplicate"))
        else:
            seen[name] = i
        if city is None:
            continue
        bad_cell = False
        for what, cell in (("start", a.start), ("goal", a.goal)):
            if cell is None:
                continue
            msg = cell_problem(city, a.kind, cell, what)
            if msg is not None:
                bad_cell = True
                out.append(AgentIssue("error", f"{pre}{name}: {msg}", i, name, (cell,), code=f"{what}-cell"))
        if a.start is not None and a.goal is not None and not bad_cell:
            if a.start == a.goal:
                out.append(AgentIssue("warning", f"{pre}{name}: start and goal are the same cell {a.start}", i, name,
                                      (a.start,), code="start-is-goal"))
            else:
                msg = _route_problem(city, a.kind, a.start, a.goal)
                if msg is not None:
                    out.append(AgentIssue("error", f"{pre}{name}: {msg}", i, name, (a.start, a.goal),
                                          code="unreachable"))
    if ego and len(agents) and ego not in seen:
        out.append(AgentIssue("warning", f"{pre}the SPF ego {ego} is not in the set", code="ego-missing"))
    return out
