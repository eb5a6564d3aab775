"""Scenes: build or change a simulation state directly, through one public, validated API.

Why: researchers want a hand-made situation ("an ambulance two cells before a crossing with an old pedestrian
on it"), the agent editor places agents at chosen cells, and the rule editor's "Load as scene" turns an
analysis witness into agents on the map that the user can step. All of them need to put agents in a
:class:`~core.sim.simulation.Simulation` at given cells, headings, trips and goal-wait counters — and sometimes
to fix a CollidingClose coin — without writing the simulator's arrays by hand. A scene says *what* the state
is; :func:`apply_scene` checks it against the city (clear :class:`SceneError` messages) and installs it with
the simulator's public methods, so the result steps exactly as a state the simulator reached itself would
(tests/core/sim/test_scene_api.py: capture → rebuild → step both → equal arrays).

Usage (docs/scene-api.md has more)::

    scene = Scene((SceneAgent("car", position=(30, 62), goal=(118, 62), concepts=("ambulance",)),
                   SceneAgent("pedestrian", position=(28, 70))))          # goal drawn like the simulator's
    sim = build_simulation(config, scene, seed=0)                          # a fresh Simulation in that state
    sim.run(20)

    later = capture_scene(sim)                                            # any state, as a Scene
    apply_scene(other_sim, later.replace_agent(0, waiting=True, ...))     # same agents: change the state

Field checks live in :mod:`core.sim.scene_check`; this module holds the data types and the installation.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np

from core.agents.spec import AgentSet, AgentSpec
from core.base.codes import HEADING_NAMES, Kind
from core.base.world import KNOWN_CONCEPTS, AgentTable, WorldSnapshot
from core.sim.compiled import compiled_project
from core.sim.scene_check import SceneError, agent_label, check_coins, parse_kind, resolve_identity, resolve_trip
from core.sim.simulation import Simulation

__all__ = ["Scene", "SceneAgent", "SceneError", "SceneOrigin", "ForcedCoins", "capture_scene", "apply_scene",
           "build_simulation", "scene_agent_set", "scene_problems", "concepts_of_kind"]

Cell = tuple[int, int]
_HEADING_BY_NAME = {v.lower(): k for k, v in HEADING_NAMES.items()}


@dataclass(frozen=True)
class SceneAgent:
    """One agent of a scene: who it is (``kind``, ``id``, ``concepts``, ``priority``) and where it is in its trip.

    Left-out fields are filled the way the simulator would: ``position`` None → a start cell drawn like an
    initial start; ``goal`` None → the last cell of ``path``, or a goal drawn for the position; ``path`` None →
    planned from the position to the goal by the car/pedestrian planner; ``path_index`` None → where the
    position first occurs on the path. ``heading`` is the last move direction (-1 or "none" = not moved yet,
    0..3 or "Left"/"Right"/"Up"/"Down"). ``waiting`` is the goal-reached flag (the agent stands on its goal) and
    ``wait`` the remaining goal-wait steps (see docs/reference.md#goal-arrival-and-new-trips). ``id``,
    ``concepts`` and ``priority`` None keep the simulation's agent (:func:`apply_scene`) or take the defaults of
    the agent-set format (:func:`build_simulation`: next free id, no concepts, priority 0 for pedestrians and 1
    for cars).
    """

    kind: Kind | str
    position: Cell | None = None
    goal: Cell | None = None
    path: Any = None   # cells [(row, col), ...] or an int array [L, 2]; stored as a tuple of (row, col) tuples
    path_index: int | None = None
    heading: int | str = -1
    waiting: bool = False
    wait: int = 0
    goals_reached: int = 0
    id: int | None = None
    concepts: tuple[str, ...] | None = None
    priority: int | None = None

    def __post_init__(self) -> None:
        # plain tuples keep the dataclass hashable and comparable (numpy arrays are neither)
        if self.path is not None and not isinstance(self.path, tuple):
            try:
                arr = np.asarray(self.path)
                ok = arr.ndim == 2 and arr.shape[1] == 2 and np.issubdtype(arr.dtype, np.integer)
                cells = tuple((int(r), int(c)) for r, c in arr.tolist()) if ok else self.path
            except (TypeError, ValueError):
                cells = self.path  # left as given (e.g. ragged, floats); scene_check reports it
            object.__setattr__(self, "path", cells)
        for name in ("position", "goal"):
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, name, tuple(int(v) for v in value.tolist()))
        if self.concepts is not None and not isinstance(self.concepts, tuple):
            object.__setattr__(self, "concepts", tuple(self.concepts))
        # one spelling per value, so equal scenes compare equal ("car" == Kind.CAR, "Left" == 0); a bad value is
        # left as given for scene_check to report
        if isinstance(self.kind, str):
            try:
                object.__setattr__(self, "kind", Kind.parse(self.kind))
            except ValueError:
                pass
        if isinstance(self.heading, str) and self.heading.strip().lower() in _HEADING_BY_NAME:
            object.__setattr__(self, "heading", _HEADING_BY_NAME[self.heading.strip().lower()])
        elif isinstance(self.heading, np.integer):
            object.__setattr__(self, "heading", int(self.heading))

    @property
    def name(self) -> str | None:
        """``Car_<id>`` / ``Pedestrian_<id>`` when the id is known."""
        try:
            return f"{parse_kind(self.kind).label}_{self.id}" if self.id is not None else None
        except SceneError:
            return None


@dataclass(frozen=True)
class SceneOrigin:
    """Where a scene was read from (core.sim.scene_io): errors found when it is installed name these lines."""

    file: str | None
    agent_lines: tuple[int | None, ...]
    coins_line: int | None = None

    def locate(self, exc: SceneError, agent: int | None) -> SceneError:
        if exc.file is not None:
            return exc
        line = self.agent_lines[agent] if agent is not None and 0 <= agent < len(self.agent_lines) else \
            self.coins_line
        return SceneError(exc.message, self.file, line, agent=exc.agent)


@dataclass(frozen=True)
class Scene:
    """A simulation state: its agents in agent order, optional forced CollidingClose outcomes and random state.

    ``coins`` maps ``(a, b)`` or ``(predicate, a, b)`` — ``a``, ``b`` agent indices or names — to the outcome of
    that pair's coin when the scene's state is grounded (the first step after it is installed); ``(a, b)``
    means every CollidingClose predicate of the ontology. Only pairs that really draw a coin in the scene can be
    forced: ``a`` has moved (heading set), ``b`` is within a's CollidingClose range, and ``b`` stands on a's
    cell or, for a pedestrian ``a``, straight ahead of it.

    ``rng_state`` is the simulation generator's ``bit_generator.state`` (captured scenes carry it, so the
    rebuilt state continues with the same random draws); None leaves the generator to the caller. ``origin`` is
    set by the scene-file reader (core.sim.scene_io).
    """

    agents: tuple[SceneAgent, ...]
    coins: Mapping[tuple, bool] = field(default_factory=dict)
    rng_state: Mapping[str, Any] | None = field(default=None, compare=False)
    origin: SceneOrigin | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(self.agents))
        object.__setattr__(self, "coins", dict(self.coins))

    def __len__(self) -> int:
        return len(self.agents)

    def replace_agent(self, i: int, **changes: Any) -> "Scene":
        """This scene with agent ``i``'s fields changed (``dataclasses.replace`` semantics)."""
        agents = list(self.agents)
        agents[i] = replace(agents[i], **changes)
        return replace(self, agents=tuple(agents))

    def with_coins(self, coins: Mapping[tuple, bool]) -> "Scene":
        return replace(self, coins=dict(coins))


@dataclass(frozen=True, eq=False)
class ForcedCoins:
    """Coin outcomes fixed for one exact state (what :func:`apply_scene` leaves in ``Simulation.forced_coins``).

    They apply whenever that state is grounded — also after a checkpoint brings the simulation back to it, so a
    branch replays the forced outcome — and never to any other state (another step, moved agents, a new agent
    table): there the coins are random again.
    """

    step: int
    positions: np.ndarray
    headings: np.ndarray
    agents: AgentTable
    outcomes: Mapping[tuple[str, int, int], bool]

    def for_snapshot(self, snap: WorldSnapshot) -> Mapping[tuple[str, int, int], bool] | None:
        if snap.step == self.step and snap.agents is self.agents and np.array_equal(snap.positions, self.positions) \
                and np.array_equal(snap.headings, self.headings):
            return self.outcomes
        return None


# ---- reading a state -----------------------------------------------------------------------------------------

def capture_scene(sim) -> Scene:
    """The current state of ``sim`` as a :class:`Scene` (every field explicit, random state included)."""
    agents = sim.agents
    out = []
    for i, name in enumerate(agents.names):
        kind = Kind(int(agents.kinds[i]))
        prefix, _, tail = name.rpartition("_")
        out.append(SceneAgent(
            kind=kind, position=(int(sim.positions[i, 0]), int(sim.positions[i, 1])),
            goal=(int(sim.goals[i, 0]), int(sim.goals[i, 1])), path=np.asarray(sim.paths[i]),
            path_index=int(sim.path_index[i]), heading=int(sim.headings[i]), waiting=bool(sim.reach_goal[i]),
            wait=int(sim.wait[i]), goals_reached=int(sim.goals_reached[i]),
            id=int(tail) if prefix == kind.label and tail.isdigit() else None,
            concepts=tuple(agents.concept_names(i)), priority=int(agents.priorities[i])))
    return Scene(tuple(out), rng_state=copy.deepcopy(sim.rng.bit_generator.state))


# ---- installing a state --------------------------------------------------------------------------------------

def apply_scene(sim, scene: Scene, *, seed: int | None = None) -> None:
    """Put ``sim`` into the state ``scene`` describes (same agents, in the same order).

    Everything is checked before anything changes: on a :class:`SceneError` the simulation is left as it was.
    The random generator is set first — from ``scene.rng_state``, else re-seeded with ``seed``, else left
    alone — and then draws whatever the scene leaves open (starts, goals). The scene becomes step 0 of a new
    recording (its meta says ``"start": "scene"``), because the old history does not lead to it. Like stepping,
    call it from the thread that drives ``sim`` (the studio: its simulation worker).
    """
    n = len(sim.agents)
    if len(scene.agents) != n:
        raise SceneError(f"the scene has {len(scene.agents)} agents but the simulation {n}; build a new simulation "
                         "for another agent set (build_simulation)")
    kinds = [Kind(int(k)) for k in sim.agents.kinds]
    specs = [_at(scene, i, resolve_identity, i, a, kinds[i], sim.agents) for i, a in enumerate(scene.agents)]
    table = scene_agent_set(specs).table()
    if table.names != sim.agents.names:
        bad = next(i for i in range(n) if table.names[i] != sim.agents.names[i])
        raise _locate(scene, bad, SceneError(
            f"{agent_label(bad, scene.agents[bad])}: the simulation's agent {bad} is {sim.agents.names[bad]}; a "
            "scene applied to a simulation keeps its agents and their order"))
    saved = copy.deepcopy(sim.rng.bit_generator.state)
    try:
        if scene.rng_state is not None:
            try:
                sim.rng.bit_generator.state = copy.deepcopy(dict(scene.rng_state))
            except (TypeError, ValueError, KeyError) as exc:
                raise SceneError(f"rng_state is not a state of this simulation's generator: {exc}") from None
        elif seed is not None:
            sim.rng.bit_generator.state = np.random.default_rng(int(seed)).bit_generator.state
        trips = [_at(scene, i, resolve_trip, i, a, kinds[i], sim.city, sim.sampler, sim.rng)
                 for i, a in enumerate(scene.agents)]
        positions = np.array([t.position for t in trips], np.int32).reshape(n, 2)
        headings = np.array([t.heading for t in trips], np.int8)
        snap = WorldSnapshot(0, table, positions.copy(), headings.copy())
        outcomes = _at(scene, None, check_coins, scene.coins, sim.grounder, snap, sim.config.ontology)
    except BaseException:
        sim.rng.bit_generator.state = saved
        raise
    # install: the simulator's own trip setter, then the position on the trip and the goal-wait counters
    sim.set_agents(table)
    for i, t in enumerate(trips):
        sim.set_trip(i, t.path[0], t.goal, t.path)
    sim.positions[:] = positions
    sim.headings[:] = headings
    sim.path_index[:] = [t.path_index for t in trips]
    sim.reach_goal[:] = [t.waiting for t in trips]
    sim.wait[:] = [t.wait for t in trips]
    sim.goals_reached[:] = [t.goals_reached for t in trips]
    sim.step_index = 0
    sim.forced_coins = ForcedCoins(0, snap.positions, snap.headings, table, outcomes) if outcomes else None
    if sim.buffer is not None:
        sim.reset_recording()
        sim.buffer.meta["start"] = "scene"


def _locate(scene: Scene | None, agent: int | None, exc: SceneError) -> SceneError:
    """``exc`` about ``agent`` (None: the whole scene), at its line when the scene was read from a file."""
    if exc.agent is None:
        exc.agent = agent
    return scene.origin.locate(exc, agent) if scene is not None and scene.origin is not None else exc


def _at(scene: Scene, agent: int | None, fn, *args):
    """``fn(*args)``, with a SceneError located at the agent's (or the coins') line of the scene file."""
    try:
        return fn(*args)
    except SceneError as exc:
        raise _locate(scene, agent, exc) from None


def scene_agent_set(specs: Sequence[AgentSpec] | Scene) -> AgentSet:
    """The agent set of a scene (identities resolved with the defaults of :func:`build_simulation`), or of
    already resolved specs; duplicate names are a :class:`SceneError`."""
    if isinstance(specs, Scene):
        scene = specs
        used: dict[Kind, set[int]] = {Kind.CAR: set(), Kind.PEDESTRIAN: set()}
        for i, a in enumerate(scene.agents):
            if isinstance(a.id, (int, np.integer)) and not isinstance(a.id, bool):   # else reported below
                used[_at(scene, i, parse_kind, a.kind, i)].add(int(a.id))
        resolved = []
        for i, a in enumerate(scene.agents):
            kind = _at(scene, i, parse_kind, a.kind, i)
            if a.id is None:
                free = max(used[kind], default=0) + 1
                used[kind].add(free)
                a = replace(a, id=free)
            resolved.append(_at(scene, i, resolve_identity, i, a, kind, None))
        specs = resolved
    else:
        scene = None
    seen: dict[str, int] = {}
    for i, s in enumerate(specs):
        if s.name in seen:
            raise _locate(scene, i, SceneError(f"agent {i}: {s.name} is already agent {seen[s.name]}; ids must be "
                                               "unique per type"))
        seen[s.name] = i
    return AgentSet(tuple(specs))


def scene_problems(config, scene: Scene) -> list[SceneError]:
    """Every problem of ``scene`` on ``config``'s city, without building a simulation or drawing anything — what an
    editor lists under Problems (each :class:`SceneError` names its ``agent``; located when read from a file).

    One problem per agent at most (its first), then duplicate names, then the coins (checked only when every
    agent's position is given, since the coins depend on where the agents stand)."""
    problems: list[SceneError] = []
    bad: set[int] = set()

    def note(i: int | None, fn, *args):
        try:
            return fn(*args)
        except SceneError as exc:
            problems.append(_locate(scene, i, exc))
            if i is not None:
                bad.add(i)
            return None

    kinds = [note(i, parse_kind, a.kind, i) for i, a in enumerate(scene.agents)]
    used: dict[Kind, set[int]] = {Kind.CAR: set(), Kind.PEDESTRIAN: set()}
    for i, a in enumerate(scene.agents):
        if kinds[i] is not None and isinstance(a.id, (int, np.integer)) and not isinstance(a.id, bool):
            used[kinds[i]].add(int(a.id))
    specs: list[AgentSpec | None] = []
    for i, a in enumerate(scene.agents):
        if kinds[i] is None:
            specs.append(None)
            continue
        if a.id is None:
            free = max(used[kinds[i]], default=0) + 1
            used[kinds[i]].add(free)
            a = replace(a, id=free)
        specs.append(note(i, resolve_identity, i, a, kinds[i], None))
    trips = [note(i, resolve_trip, i, a, kinds[i], config.city, None, None) if i not in bad else None
             for i, a in enumerate(scene.agents)]
    seen: dict[str, int] = {}
    for i, spec in enumerate(specs):
        if spec is None:
            continue
        if spec.name in seen and i not in bad:
            note(i, _raise, SceneError(f"agent {i}: {spec.name} is already agent {seen[spec.name]}; ids must be "
                                       "unique per type"))
        seen.setdefault(spec.name, i)
    # where each agent stands (checked above; an open goal does not matter here)
    cells = [t.position if t is not None else a.position for t, a in zip(trips, scene.agents)]
    if scene.coins and not bad and all(c is not None for c in cells):
        table = AgentSet(tuple(specs)).table()  # type: ignore[arg-type]  # no spec is None when none is bad
        heads = [t.heading if t is not None else int(a.heading) for t, a in zip(trips, scene.agents)]
        snap = WorldSnapshot(0, table, np.array(cells, np.int32).reshape(-1, 2), np.array(heads, np.int8))
        note(None, check_coins, scene.coins, compiled_project(config).grounder, snap, config.ontology)
    return problems


def _raise(exc: SceneError):
    raise exc


def build_simulation(config, scene: Scene, seed: int = 0, *, record: bool = True, engine: str | None = None,
                     view_limits: Mapping[int, int] | None = None):
    """A new :class:`~core.sim.simulation.Simulation` of ``config``'s city, ontology and rules whose agents and
    state are ``scene``'s (any number and mix of agents). ``seed`` seeds the generator, which then draws what the
    scene leaves open, unless the scene carries ``rng_state``."""
    agents = scene_agent_set(scene)
    files = {k: v for k, v in config.files.items() if k != "agents"}  # the episode must embed these agents
    cfg = replace(config, agents=agents, files=files)
    sim = Simulation(cfg, seed=seed, record=record, engine=engine, view_limits=view_limits)
    apply_scene(sim, scene, seed=seed)
    return sim


def concepts_of_kind(kind: Kind) -> tuple[str, ...]:
    """The concept names an agent of ``kind`` may carry (what an editor offers as checkboxes)."""
    return tuple(c for c, k in KNOWN_CONCEPTS.items() if k is kind)
