"""Checks and completion of scene fields (core.sim.scene): who each agent is, where it is in its trip, which
coins may be forced. Every problem is a :class:`SceneError` naming the agent, the field and what is wrong.

Why separate: :mod:`core.sim.scene` installs a state; this module decides whether a state makes sense on a city
— the same checks the agent editor and the rule editor's scene loading show to the user.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from core.agents.io import check_agent
from core.agents.spec import AgentSpec
from core.base.codes import HEADING_NAMES, HEADING_VECTORS, Kind
from core.base.errors import LogiCityError
from core.base.world import AgentTable, WorldSnapshot
from core.map.trips import describe_cell, plan_trip

__all__ = ["SceneError", "Trip", "agent_label", "parse_kind", "resolve_identity", "resolve_trip", "check_coins"]

#: Goals drawn for an agent whose trip cannot be planned are retried this often (as the simulator does).
MAX_PLAN_TRIES = 20
_HEADING_BY_NAME = {v.lower(): k for k, v in HEADING_NAMES.items()}


class SceneError(LogiCityError):
    """A scene that does not fit the city or the simulation (bad cell, broken path, unknown agent, …).

    ``agent`` is the index of the agent it is about (None: the scene as a whole, e.g. its coins), so an editor
    can select that agent from a Problems list."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None, col: int | None = None, *,
                 agent: int | None = None) -> None:
        self.agent = agent
        super().__init__(message, file, line, col)


@dataclass(frozen=True)
class Trip:
    """One agent's resolved place in its trip (every field concrete and checked)."""

    position: tuple[int, int]
    goal: tuple[int, int]
    path: np.ndarray          # int32 [L, 2]
    path_index: int
    heading: int
    waiting: bool
    wait: int
    goals_reached: int


def agent_label(i: int, agent: Any) -> str:
    """``agent 3 (Car_2)``, or ``agent 3 (a car)`` before the id is known."""
    name = getattr(agent, "name", None)
    if name:
        return f"agent {i} ({name})"
    kind = getattr(agent, "kind", None)
    if isinstance(kind, Kind) or (isinstance(kind, str) and kind.strip().lower() in ("car", "pedestrian")):
        return f"agent {i} (a {(kind.label if isinstance(kind, Kind) else kind.strip()).lower()})"
    return f"agent {i}"


def parse_kind(kind: Any, i: int | None = None) -> Kind:
    if isinstance(kind, Kind):
        return kind
    if isinstance(kind, str):
        try:
            return Kind.parse(kind)
        except ValueError:
            pass
    where = f"agent {i}: " if i is not None else ""
    raise SceneError(f"{where}kind must be 'car' or 'pedestrian', got {kind!r}")


def _int(value: Any, label: str, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise SceneError(f"{label}: {what} must be an integer, got {value!r}")
    return int(value)


def resolve_identity(i: int, agent: Any, kind: Kind, current: AgentTable | None) -> AgentSpec:
    """The agent's spec: the scene's fields, else the simulation's agent ``i`` (``current``), else defaults."""
    label = agent_label(i, agent)
    own = parse_kind(agent.kind, i)
    if own is not kind:
        raise SceneError(f"{label}: the simulation's agent {i} is a {kind.label.lower()}, the scene says "
                         f"{own.label.lower()}")
    if current is not None:
        tail = current.names[i].rpartition("_")[2]
        agent_id = agent.id if agent.id is not None else (int(tail) if tail.isdigit() else i)
        concepts = agent.concepts if agent.concepts is not None else tuple(current.concept_names(i))
        priority = agent.priority if agent.priority is not None else int(current.priorities[i])
    else:
        if agent.id is None:
            raise SceneError(f"{label}: id is missing")
        agent_id = agent.id
        concepts = agent.concepts if agent.concepts is not None else ()
        priority = agent.priority if agent.priority is not None else (0 if kind is Kind.PEDESTRIAN else 1)
    agent_id = _int(agent_id, label, "id")
    priority = _int(priority, label, "priority")
    if not all(isinstance(c, str) for c in concepts):
        raise SceneError(f"{label}: concepts must be names, got {concepts!r}")
    problem = check_agent(kind, agent_id, priority, tuple(concepts), 1)
    if problem:
        raise SceneError(f"{label}: {problem[1]}")
    return AgentSpec(kind, agent_id, priority, tuple(concepts))


# ---- cells and paths -----------------------------------------------------------------------------------------

def _network(city, kind: Kind) -> tuple[np.ndarray, str]:
    if kind is Kind.CAR:
        return city.drivable, "cars drive on traffic streets, mid lanes and crossings"
    return city.walkable, "pedestrians walk on walking streets and crossings"


def _cell(value: Any, label: str, what: str, city, kind: Kind) -> tuple[int, int]:
    try:
        arr = np.asarray(value)
        ok = arr.shape == (2,) and np.issubdtype(arr.dtype, np.integer)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise SceneError(f"{label}: {what} must be a (row, col) pair of integers, got {value!r}")
    r, c = int(arr[0]), int(arr[1])
    h, w = city.shape
    if not (0 <= r < h and 0 <= c < w):
        raise SceneError(f"{label}: {what} ({r}, {c}) is outside the {h}×{w} map")
    net, rule = _network(city, kind)
    if not net[r, c]:
        raise SceneError(f"{label}: {what} ({r}, {c}) is {describe_cell(city, r, c)}; {rule}")
    return r, c


def _path(value: Any, label: str, city, kind: Kind, lanes: dict) -> np.ndarray:
    try:
        arr = np.asarray(value)
        ok = arr.ndim == 2 and arr.shape[1] == 2 and len(arr) >= 1 and np.issubdtype(arr.dtype, np.integer)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise SceneError(f"{label}: path must be a non-empty list of (row, col) integer cells")
    p = arr.astype(np.int64)
    h, w = city.shape
    outside = (p[:, 0] < 0) | (p[:, 0] >= h) | (p[:, 1] < 0) | (p[:, 1] >= w)
    if outside.any():
        j = int(np.argmax(outside))
        raise SceneError(f"{label}: path cell {j} {tuple(int(v) for v in p[j])} is outside the {h}×{w} map")
    net, rule = _network(city, kind)
    off = ~net[p[:, 0], p[:, 1]]
    if off.any():
        j = int(np.argmax(off))
        r, c = int(p[j, 0]), int(p[j, 1])
        raise SceneError(f"{label}: path cell {j} ({r}, {c}) is {describe_cell(city, r, c)}; {rule}")
    gap = np.abs(np.diff(p, axis=0)).sum(axis=1) != 1
    if gap.any():
        j = int(np.argmax(gap))
        raise SceneError(f"{label}: path cells {j} {tuple(int(v) for v in p[j])} and {j + 1} "
                         f"{tuple(int(v) for v in p[j + 1])} are not neighbours (a path moves one cell at a time, "
                         "without diagonals or repeats)")
    if kind is Kind.CAR and len(p) > 1:
        _check_lane_directions(p, label, city, lanes)
    return p.astype(np.int32)


def _check_lane_directions(p: np.ndarray, label: str, city, lanes: dict) -> None:
    """A car path may not drive along a lane line against the lane's direction (both cells of a step on a lane
    of the opposite heading, neither on one of this heading)."""
    if not lanes:
        graph = city.lane_graph
        for vec in HEADING_VECTORS.tolist():
            lanes[tuple(vec)] = graph.lane_cells((tuple(vec),))
    d = np.diff(p, axis=0)
    a, b = p[:-1], p[1:]
    for vec in HEADING_VECTORS.tolist():
        step = (d[:, 0] == vec[0]) & (d[:, 1] == vec[1])
        if not step.any():
            continue
        against = lanes[(-vec[0], -vec[1])]
        along = lanes[(vec[0], vec[1])]
        wrong = step & against[a[:, 0], a[:, 1]] & against[b[:, 0], b[:, 1]] & \
            ~(along[a[:, 0], a[:, 1]] & along[b[:, 0], b[:, 1]])
        if wrong.any():
            j = int(np.argmax(wrong))
            raise SceneError(f"{label}: path step {j} → {j + 1} from {tuple(int(v) for v in a[j])} to "
                             f"{tuple(int(v) for v in b[j])} drives against the direction of its lane")


def _heading(value: Any, label: str) -> int:
    if isinstance(value, str) and value.strip().lower() in _HEADING_BY_NAME:
        return _HEADING_BY_NAME[value.strip().lower()]
    if not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer)) and -1 <= int(value) <= 3:
        return int(value)
    raise SceneError(f"{label}: heading must be -1..3 or one of none, Left, Right, Up, Down, got {value!r}")


def resolve_trip(i: int, agent: Any, kind: Kind, city, sampler, rng: np.random.Generator | None) -> Trip | None:
    """Check agent ``i``'s trip fields and fill the open ones (drawing from ``rng`` like the simulator).

    With ``sampler`` None only the given fields are checked and nothing is drawn: None is returned when the trip
    would need a draw (an open start or goal)."""
    label = agent_label(i, agent)
    heading = _heading(agent.heading, label)
    if not isinstance(agent.waiting, (bool, np.bool_)):
        raise SceneError(f"{label}: waiting must be true or false, got {agent.waiting!r}")
    waiting = bool(agent.waiting)
    wait = _int(agent.wait, label, "wait")
    reached = _int(agent.goals_reached, label, "goals_reached")
    if wait < 0 or reached < 0:
        raise SceneError(f"{label}: {'wait' if wait < 0 else 'goals_reached'} must not be negative")
    if wait > 0 and not waiting:
        raise SceneError(f"{label}: wait {wait} counts goal-waiting steps, so the agent must be waiting on its goal "
                         "(waiting=True)")
    position = _cell(agent.position, label, "position", city, kind) if agent.position is not None else None
    if agent.path is not None:
        path = _path(agent.path, label, city, kind, {})
        index = agent.path_index
        if index is None:
            if position is None:
                index = 0
            else:
                hits = np.flatnonzero((path[:, 0] == position[0]) & (path[:, 1] == position[1]))
                if not len(hits):
                    raise SceneError(f"{label}: position {position} is not on its path")
                index = int(hits[0])
        index = _int(index, label, "path_index")
        if not 0 <= index < len(path):
            raise SceneError(f"{label}: path_index {index} is outside its path of {len(path)} cells")
        on_path = (int(path[index, 0]), int(path[index, 1]))
        if position is None:
            position = on_path
        elif position != on_path:
            raise SceneError(f"{label}: position {position} is not path cell {index} {on_path}")
        end = (int(path[-1, 0]), int(path[-1, 1]))
        goal = end if agent.goal is None else _cell(agent.goal, label, "goal", city, kind)
        if goal != end:
            raise SceneError(f"{label}: the path ends at {end}, not at the goal {goal}")
    else:
        if agent.path_index not in (None, 0):
            raise SceneError(f"{label}: path_index {agent.path_index!r} needs a path (a planned trip starts at 0)")
        if waiting and (position is None or agent.goal is None):
            raise SceneError(f"{label}: an agent waiting on its goal needs its position and goal (the same cell)")
        if position is None:
            if sampler is None:
                if agent.goal is not None:
                    _cell(agent.goal, label, "goal", city, kind)
                return None
            position = sampler.sample_start(kind, rng)
        index = 0
        if agent.goal is not None:
            goal = _cell(agent.goal, label, "goal", city, kind)
            try:
                path = plan_trip(kind, city, position, goal)
            except LogiCityError as exc:
                raise SceneError(f"{label}: goal {goal} cannot be reached from {position}: {exc.message}") from None
        elif sampler is None:
            return None
        else:
            goal, path = _draw_trip(kind, city, sampler, rng, position, label)
    if waiting and position != goal:
        raise SceneError(f"{label}: waiting on its goal, but position {position} is not the goal {goal}")
    return Trip(position, goal, path, index, heading, waiting, wait, reached)


def _draw_trip(kind: Kind, city, sampler, rng, start: tuple[int, int], label: str):
    last = None
    for _ in range(MAX_PLAN_TRIES):
        row, col = sampler.sample_goal(kind, start, rng)
        goal = (int(row), int(col))
        try:
            return goal, plan_trip(kind, city, start, goal)
        except LogiCityError as exc:  # this goal cannot be planned: draw another, as the simulator does
            last = exc
    raise SceneError(f"{label}: no goal drawn for {start} could be planned ({MAX_PLAN_TRIES} tries): "
                     f"{last.message if last else ''}")


# ---- forced coins ---------------------------------------------------------------------------------------------

def check_coins(coins: Mapping[tuple, bool], grounder, snap: WorldSnapshot,
                ontology) -> dict[tuple[str, int, int], bool]:
    """``coins`` as ``{(predicate, a, b): outcome}`` with agent indices, after checking every key draws a coin in
    ``snap``."""
    if not coins:
        return {}
    preds = {p.name: p for p in ontology.grounded if p.grounding == "colliding_close"}
    if not preds:
        raise SceneError("coins: the ontology has no CollidingClose predicate, so there is no coin to force")
    names = snap.agents.names
    pairs = {name: {(int(a), int(b)) for a, b in arr} for name, arr in grounder.coin_pairs(snap).items()}
    out: dict[tuple[str, int, int], bool] = {}
    for key, value in coins.items():
        if not isinstance(key, tuple) or len(key) not in (2, 3):
            raise SceneError(f"coins: key {key!r} must be (a, b) or (predicate, a, b)")
        if len(key) == 3 and key[0] not in preds:
            raise SceneError(f"coins: {key[0]!r} is not a CollidingClose predicate (those are: {', '.join(preds)})")
        which = [key[0]] if len(key) == 3 else list(preds)
        a, b = (_agent_index(x, names, key) for x in key[-2:])
        if a == b:
            raise SceneError(f"coins: {key!r} pairs {names[a]} with itself")
        if not isinstance(value, (bool, np.bool_)):
            raise SceneError(f"coins: the outcome of {key!r} must be true or false, got {value!r}")
        for name in which:
            if (a, b) not in pairs[name]:
                raise SceneError(f"coins: {name}({names[a]}, {names[b]}) draws no coin in this scene: "
                                 f"{_why_no_coin(grounder, preds[name], snap, a, b)}")
            out[(name, a, b)] = bool(value)
    return out


def _agent_index(x: Any, names: tuple[str, ...], key: tuple) -> int:
    if isinstance(x, str):
        if x in names:
            return names.index(x)
        raise SceneError(f"coins: {key!r} names no agent {x!r} (agents: {', '.join(names)})")
    if not isinstance(x, (bool, np.bool_)) and isinstance(x, (int, np.integer)) and 0 <= int(x) < len(names):
        return int(x)
    raise SceneError(f"coins: {key!r}: {x!r} is not an agent index 0..{len(names) - 1} or name")


def _why_no_coin(grounder, pred, snap: WorldSnapshot, a: int, b: int) -> str:
    names = snap.agents.names
    head = int(snap.headings[a])
    if head < 0:
        return f"{names[a]} has not moved yet (heading none), and only an agent that has moved draws coins"
    d = float(np.hypot(*(snap.positions[b] - snap.positions[a]).astype(float)))
    reach = float(grounder.collide_range(pred, snap.agents)[a])
    if d > reach:
        return f"{names[b]} is {d:.2f} cells away, beyond {names[a]}'s range {reach:g}"
    if int(snap.agents.kinds[a]) == Kind.CAR:
        return (f"{names[a]} is a car: a car's {pred.name} holds without a coin when the other agent is straight "
                "ahead, and only a shared cell draws a coin")
    return f"{names[b]} is neither on {names[a]}'s cell nor straight ahead of it (heading {HEADING_NAMES[head]})"
