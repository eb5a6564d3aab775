"""The headless city simulator (docs/reference.md#the-step): ``Simulation(config, seed).step()``.

Each step: snapshot the world, ground the ontology for every agent's field of view, let the rule engine decide
which actions hold for each agent, then move every agent (in agent order, all from the same snapshot) along
its planned path. Every random draw — start/goal sampling, CollidingClose coin flips, the choice among equally
allowed moves — comes from one ``numpy.random.Generator`` seeded once, so a seed fixes the whole episode.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable, Mapping

import numpy as np

from core.base.codes import Action, Kind
from core.base.errors import ConfigError
from core.base.world import AgentTable, WorldSnapshot
from core.logic.grounding.grounder import Grounder
from core.map.sampling import StartGoalSampler
from core.map.walking import walk_path
from core.sim.compiled import compiled_project, make_engine
from core.sim.config import SimConfig
from core.sim.episode import FIRED_FORCED, EpisodeBuffer
from core.sim.move_arena import HEADING_OF, REALISED_OF, STOP_COL, MoveArena
from core.sim.movement import CAR_STOP, DECIDED_TABLE, LOCAL_TABLE, PED_STOP, move_choice
from core.sim.provenance import city_hash, table_agents_hash
from core.sim.replay import config_texts
from core.sim.rule_segments import RuleSegment
from core.sim.scene_check import SceneError, resolve_trip

#: Steps an agent waits on its goal before starting a new trip (reference REACH_GOAL_WAITING;
#: docs/reference.md#goal-arrival-and-new-trips).
GOAL_WAIT_STEPS = 1
#: How many times goal sampling is retried when a route cannot be planned (a generated city corner case).
MAX_PLAN_TRIES = 20
#: holds [N, 4] @ _HOLD_BITS = the code indexing movement.LOCAL_TABLE / DECIDED_TABLE
_HOLD_BITS = np.array([1, 2, 4, 8], dtype=np.int64)
#: [is_car, holds code] -> movement.DECIDED_TABLE as int8
_DECIDED = np.array([[int(a) for a in DECIDED_TABLE[k]] for k in (Kind.PEDESTRIAN, Kind.CAR)], np.int8)


@dataclass(frozen=True)
class StepOutcome:
    """Summary of one step for callers that do not read the episode buffer (CLI, env wrappers)."""

    step: int
    decided: np.ndarray      # int8 [N]
    realised: np.ndarray     # int8 [N]
    reached: np.ndarray      # bool [N] goal-reached events this step
    seconds: float


class Simulation:
    """A running city. Not thread-safe: drive one instance from one thread (the studio uses a worker)."""

    def __init__(self, config: SimConfig, seed: int = 0, *, record: bool = True, engine: str | None = None,
                 view_limits: Mapping[int, int] | None = None) -> None:
        self.config = config
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)
        self.city = config.city
        self.agents: AgentTable = config.agents.table()
        self.kinds = [Kind(int(k)) for k in self.agents.kinds]
        self._is_car = np.array([k == Kind.CAR for k in self.kinds], bool)  # kinds never change
        self._is_car_i = self._is_car.astype(np.intp)
        project = compiled_project(config)   # shared with the inspector, scenes and other runs of this config
        self.program = project.program
        self.engine_name = engine or config.engine
        self.engine = project.engine(self.engine_name)
        self.grounder: Grounder = project.grounder
        #: grounders of the ontologies the rule schedule has used, by ontology identity
        self._grounders: dict[int, Grounder] = {id(project.ontology): project.grounder}
        self.sampler = StartGoalSampler(self.city, config.agent_region, variant=config.sampling)
        self.view_limits = dict(view_limits or {})
        #: CollidingClose outcomes fixed for one state (core.sim.scene.ForcedCoins, set by apply_scene); None: all
        #: coins random
        self.forced_coins = None
        self.lane_node_mask = self._lane_node_mask()
        n = len(self.agents)
        self.step_index = 0
        self.positions = np.zeros((n, 2), np.int32)
        self.headings = np.full(n, -1, np.int8)
        self.goals = np.zeros((n, 2), np.int32)
        self.paths: list[np.ndarray] = [np.zeros((0, 2), np.int32)] * n
        # every agent's path move table in one array (core.sim.move_arena); follows ``paths`` by object identity,
        # so anything that replaces ``paths[i]`` (set_trip, checkpoint.restore, scenes) is picked up at the next step
        self._arena = MoveArena(self._is_car, self.lane_node_mask)
        self.path_index = np.zeros(n, np.int32)
        self.plan_id = np.zeros(n, np.int32)
        self.reach_goal = np.zeros(n, bool)
        self.wait = np.zeros(n, np.int32)
        self.goals_reached = np.zeros(n, np.int64)
        self.step_seconds: list[float] = []
        #: agent tables that take over at the start of a step (step -> AgentTable with the same agents): an agent
        #: editor branch that changed concepts/priorities from a step on (core/studio/apply.py); applied in
        #: step(), so replays from checkpoints apply them again
        self.agent_schedule: dict[int, AgentTable] = {}
        #: rule programs that decide from a step on (step -> core.sim.rule_segments.RuleSegment): the rule editor's
        #: branch with edited rules; set with set_rule_schedule, applied in step() (replays apply them again)
        self.rule_schedule: dict[int, RuleSegment] = {}
        self._segment: RuleSegment | None = None            # the RuleSegment deciding now (None: the config's program)
        self._fired_offset = 0          # its clauses' offset in the recording's clause table
        self.buffer: EpisodeBuffer | None = None
        if record:
            self.buffer = EpisodeBuffer(self.agents, self._meta(), witness_vars=self._witness_vars())
        self._populate()

    def _populate(self) -> None:
        # an agent set may fix some agents' first start and goal (the agent editor; docs/agent-editor.md); only
        # the config's own agents carry them (an env's replacement table does not)
        specs = tuple(self.config.agents)
        if not any(a.start is not None or a.goal is not None for a in specs) or \
                tuple(a.name for a in specs) != tuple(self.agents.names):
            specs = ()
        for i in range(len(self.agents)):
            spec = specs[i] if specs else None
            if spec is not None and (spec.start is not None or spec.goal is not None):
                self._placed_trip(i, spec.start, spec.goal)
                continue
            start = self.sampler.sample_start(self.kinds[i], self.rng)
            self._new_trip(i, start, first=True)
        self._arena.sync(self.paths)  # table every path now, not in the first step (a 1000-agent spike)
        if self.buffer is not None:
            self._record_state()

    def restart(self, rng: np.random.Generator | None = None, agents: AgentTable | None = None) -> None:
        """Start a fresh world: every agent gets a new start and trip, step 0, empty episode buffer.

        ``rng`` replaces the generator (an env passes its own ``np_random`` so that all randomness flows from
        it); ``agents`` replaces the agent table (default: the config's). Equivalent to building a new
        Simulation, without re-deriving planners and engines.
        """
        if rng is not None:
            self.rng = rng
        self.agents = agents if agents is not None else self.config.agents.table()
        self.step_index = 0
        self.headings[:] = -1
        self.reach_goal[:] = False
        self.wait[:] = 0
        self.goals_reached[:] = 0
        self.step_seconds.clear()
        if self.buffer is not None:
            self.buffer = EpisodeBuffer(self.agents, self._meta(), witness_vars=self._witness_vars())
        self._populate()

    def reset_recording(self) -> None:
        """Start a new episode buffer whose state 0 is the current state (no-op when not recording). SPF starts
        one per episode, after placing the ego or restoring a start state."""
        if self.buffer is None:
            return
        self.buffer = EpisodeBuffer(self.agents, self._meta(), witness_vars=self._witness_vars())
        for i in range(len(self.agents)):
            self.plan_id[i] = self.buffer.add_plan(i, self.paths[i])
        self.step_seconds.clear()
        self._record_state()

    def reset_agent(self, i: int, start=None, goal=None) -> None:
        """Give agent ``i`` a new trip now: ``start`` (default: sampled like an initial start) and ``goal``
        (default: sampled for that start, docs/reference.md#start-and-goal-sampling). Other agents are untouched
        (SPF resets only the ego)."""
        if start is None:
            start = self.sampler.sample_start(self.kinds[i], self.rng)
        if goal is None:
            self._new_trip(i, np.asarray(start), first=True)
        else:
            self.set_trip(i, start, goal, self._plan(i, np.asarray(start), np.asarray(goal)))

    def _placed_trip(self, i: int, start, goal) -> None:
        """The first trip of an agent whose start and/or goal the agent set fixes: the cells are checked against
        the city (inside the map, on the agent's network, a route exists) and a bad one is a ConfigError naming
        the agent; an open one is drawn like any other."""
        fields = SimpleNamespace(name=self.agents.names[i], kind=self.kinds[i], position=start, goal=goal,
                                 path=None, path_index=None, heading=-1, waiting=False, wait=0, goals_reached=0)
        try:
            trip = resolve_trip(i, fields, self.kinds[i], self.city, self.sampler, self.rng)
        except SceneError as exc:
            raise ConfigError(f"agent set: {exc.message.replace('position (', 'start (')}",
                              self.config.files.get("agents")) from None
        assert trip is not None   # with a sampler every open field is drawn
        self.set_trip(i, trip.position, trip.goal, trip.path)

    # ---- set-up helpers ---------------------------------------------------------------------------------
    def _lane_node_mask(self) -> np.ndarray:
        return self.city.lane_graph.node_mask

    def _witness_vars(self) -> int:
        return max(1, int(self.program.max_vars))

    def _meta(self) -> dict:
        cfg = self.config
        return {
            "mode": cfg.name, "seed": self.seed, "engine": self.engine_name,
            "agent_region": cfg.agent_region, "sampling": cfg.sampling, "rule_section": cfg.rule_section,
            "files": dict(cfg.files), "map_name": self.city.name,
            "clauses": clause_table(self.program),
            "coin_predicates": [p.name for p in cfg.ontology.grounded if p.grounding == "colliding_close"],
            "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "config_texts": config_texts(cfg),
            "provenance": self._provenance(),   # which city and agents made it (core/sim/provenance.py)
        }

    def _provenance(self) -> dict:
        """Content hashes of the city (computed once: a simulation's city never changes) and of the agents it runs."""
        if getattr(self, "_city_digest", None) is None:
            self._city_digest = city_hash(self.city)
        return {"city": self._city_digest, "agents": table_agents_hash(self.config.agents, self.agents)}

    def _plan(self, i: int, start: np.ndarray, goal: np.ndarray) -> np.ndarray:
        if self.kinds[i] == Kind.CAR:
            return np.asarray(self.city.lane_graph.route(tuple(start), tuple(goal)), np.int32)
        return np.asarray(walk_path(self.city, tuple(start), tuple(goal)), np.int32)

    def _new_trip(self, i: int, start: np.ndarray | tuple[int, int], first: bool = False) -> None:
        """Sample a goal from ``start`` and plan the path (retrying with new goals if planning fails)."""
        last_exc: Exception | None = None
        for _ in range(MAX_PLAN_TRIES):
            if first:
                goal = self.sampler.sample_goal(self.kinds[i], start, self.rng)
            else:
                goal = self.sampler.resample_goal(self.kinds[i], start, self.rng)
            try:
                path = self._plan(i, np.asarray(start), np.asarray(goal))
            except Exception as exc:  # a planner error for one pair: try another goal
                last_exc = exc
                continue
            self.set_trip(i, start, goal, path)
            return
        raise ConfigError(f"could not plan a route for {self.agents.names[i]} from {tuple(start)} "
                          f"after {MAX_PLAN_TRIES} goals: {last_exc}")

    def set_trip(self, i: int, start, goal, path: np.ndarray) -> None:
        """Place agent ``i`` at ``start`` with ``goal`` and planned ``path`` (path[0] == start)."""
        self.positions[i] = start
        self.goals[i] = goal
        self.paths[i] = np.asarray(path, np.int32)
        self.path_index[i] = 0
        self.headings[i] = -1
        self.reach_goal[i] = False
        self.wait[i] = 0
        if self.buffer is not None:
            self.plan_id[i] = self.buffer.add_plan(i, self.paths[i])

    def _global_moves(self, i: int, k: int) -> dict[int, int]:
        """Moves that follow agent ``i``'s path from its index ``k`` (movement.global_moves)."""
        self._arena.sync(self.paths)
        return self._arena.global_moves(i, k)

    def set_agents(self, agents: AgentTable) -> None:
        """Replace the agent table (same names/kinds; e.g. SPF resets the ego's priority and concepts)."""
        if agents.names != self.agents.names:
            raise ValueError("set_agents must keep the same agents")
        self.agents = agents

    def _scheduled_agents(self) -> None:
        """Take over the agent table scheduled for this step (the recorded state shows it too)."""
        table = self.agent_schedule.get(self.step_index)
        if table is None or table is self.agents:
            return
        self.set_agents(table)
        if self.buffer is not None and self.buffer.num_states == self.step_index + 1:
            self.buffer.set_state_agents(self.step_index, table)

    def apply_schedules(self) -> None:
        """Put the agent table and the rule program scheduled for the current step in charge (an agent editor or
        rule editor branch, core/studio/apply.py, core/studio/rule_branch.py). :meth:`step` calls it; a caller that
        grounds the state itself before ``step(prepared=...)`` (SPF driving) calls it first."""
        if self.agent_schedule:
            self._scheduled_agents()
        if self.rule_schedule:
            self._scheduled_rules()

    def set_rule_schedule(self, schedule: Mapping[int, RuleSegment]) -> None:
        """Let each :class:`~core.sim.rule_segments.RuleSegment` decide from its step on (core/sim/rule_segments.py);
        the recording's witness columns grow to the widest program."""
        self.rule_schedule = dict(schedule)
        self._segment, self._fired_offset = None, 0
        if self.rule_schedule and self.buffer is not None:
            self.buffer.widen_witness(max(int(seg.program.max_vars) for seg in self.rule_schedule.values()))
        self._scheduled_rules()

    def _scheduled_rules(self) -> None:
        """Put the program scheduled for this step in charge (engine, grounder for its ontology, clause offset)."""
        starts = [k for k in self.rule_schedule if k <= self.step_index]
        seg = self.rule_schedule[max(starts)] if starts else None
        if seg is self._segment:
            return
        self._segment = seg
        if seg is not None:
            self.program = seg.program
            self.engine = seg.engine(self.engine_name, make_engine)
            ontology = seg.program.ontology
        else:
            project = compiled_project(self.config)
            self.program = project.program
            self.engine = project.engine(self.engine_name)
            ontology = project.ontology
        if ontology is not self.grounder.ontology:
            grounder = self._grounders.get(id(ontology))
            if grounder is None:   # the grounder keeps its ontology alive, so the id is never reused meanwhile
                grounder = self._grounders[id(ontology)] = Grounder(self.city, ontology)
            self.grounder = grounder
        self._fired_offset = seg.offset if seg is not None else 0

    def _record_state(self) -> None:
        assert self.buffer is not None
        self.buffer.append_state(self.positions, self.headings, self.goals, self.path_index, self.plan_id,
                                 self.agents)

    # ---- stepping ---------------------------------------------------------------------------------------
    def snapshot(self) -> WorldSnapshot:
        return WorldSnapshot(self.step_index, self.agents, self.positions.copy(), self.headings.copy())

    def decide(self, snap: WorldSnapshot | None = None):
        """Ground and decide for the given (default: current) snapshot: (grounding, decisions)."""
        snap = snap or self.snapshot()
        forced = self.forced_coins.for_snapshot(snap) if self.forced_coins is not None else None
        grounding = self.grounder.ground(snap, self.rng, view_limits=self.view_limits or None, forced_coins=forced)
        return grounding, self.engine.decide(grounding)

    def step(self, overrides: Mapping[int, Action] | None = None, prepared=None) -> StepOutcome:
        """Advance one step. ``overrides`` forces the decision of some agents (SPF ego, human play).

        ``prepared`` = ``(grounding, decisions)`` from :meth:`decide` on the *current* snapshot lets a caller
        that already grounded this state (e.g. to build an observation) reuse it: grounding again would draw
        CollidingClose's coin flips a second time and could disagree with what the caller saw.
        """
        t0 = time.perf_counter()
        if prepared is None:
            self.apply_schedules()
        if prepared is not None:
            grounding, decisions = prepared
            if grounding.snapshot.step != self.step_index:
                raise ValueError("prepared grounding is not of the current state")
        else:
            grounding, decisions = self.decide(self.snapshot())
        holds = np.array(decisions.holds, dtype=bool, copy=True)
        if overrides:
            for i, act in overrides.items():
                holds[i] = False
                holds[i, int(act)] = True
        decided, realised, reached = self._move_all((holds @ _HOLD_BITS).astype(np.intp))
        self.step_index += 1
        if self.buffer is not None:
            fired, witness = explanation_arrays(decisions, decided, overrides, self._witness_vars())
            if self._fired_offset:
                fired[fired >= 0] += self._fired_offset     # global clause ids (core/sim/rule_segments.py)
            self.buffer.append_step(holds, decided, realised, fired, witness, reached, grounding.coin_outcomes())
            self._record_state()
        dt = time.perf_counter() - t0
        self.step_seconds.append(dt)
        return StepOutcome(self.step_index - 1, decided, realised, reached, dt)

    def _move_all(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Goal logic and moves of every agent for holds ``codes``: (decided, realised, reached).

        The same outcome and the same random draws, in the same order, as handling the agents one by one (goal
        logic of docs/reference.md#goal-arrival-and-new-trips, then movement.move_choice): flag on arrival, wait,
        then start a new trip and move this same step. Agents that need the generator — a new trip (goal
        sampling) or a draw among several moves — are handled one by one in agent order; everything else is
        decided with array operations on the move arena (core.sim.move_arena).
        """
        n = len(self.agents)
        is_car = self._is_car_i
        decided = _DECIDED[is_car, codes]
        realised = np.full(n, int(Action.STOP), np.int8)
        waiting = self.reach_goal.copy()
        arrive = ~waiting & (self.positions == self.goals).all(axis=1)
        hold = waiting & (self.wait > 0)
        trip = waiting & ~hold
        self.reach_goal |= arrive
        self.wait[arrive] += GOAL_WAIT_STEPS
        self.goals_reached[arrive] += 1
        self.wait[hold] -= 1
        arena = self._arena
        arena.sync(self.paths)
        movers = np.flatnonzero(~arrive & ~waiting)
        ch = arena.choose(movers, codes, self.path_index)
        col = ch.col
        # agents that use the generator, in agent order: new trips (then their move) and draws among moves
        trips = np.flatnonzero(trip).tolist()
        draws = ch.agents[ch.draw].tolist()
        if trips or draws:
            rng = self.rng
            where = dict(zip(draws, ch.draw.tolist()))
            trip_col: dict[int, int] = {}
            for i in sorted(trips + draws):
                r = where.get(i)
                if r is None:  # a new trip from the goal reached, then this step's move on it
                    self._new_trip(i, self.goals[i].copy())
                    arena.put(i, self.paths[i])
                    car = bool(self._is_car[i])
                    local = LOCAL_TABLE[Kind.CAR if car else Kind.PEDESTRIAN][int(codes[i])]
                    move = move_choice(car, local, arena.global_moves(i, 0), rng)
                    trip_col[i] = STOP_COL if move == (CAR_STOP if car else PED_STOP) else move
                else:
                    col[r] = np.flatnonzero(ch.pool[r])[int(rng.integers(int(ch.npool[r])))]
            if trip_col:
                t_agents = np.fromiter(trip_col, np.intp, len(trip_col))
                t_rows = arena.moves[arena.start[t_agents] + self.path_index[t_agents]]
                ch_agents = np.concatenate([ch.agents, t_agents])
                col = np.concatenate([col, np.fromiter(trip_col.values(), np.intp, len(trip_col))])
                rows = np.concatenate([ch.row, t_rows])
            else:
                ch_agents, rows = ch.agents, ch.row
        else:
            ch_agents, rows = ch.agents, ch.row
        go = col != STOP_COL
        who, c = ch_agents[go], col[go]
        j = rows[go, c]
        self.path_index[who] = j
        self.positions[who] = arena.cells[arena.start[who] + j]
        self.headings[who] = HEADING_OF[is_car[who], c]
        realised[who] = REALISED_OF[is_car[who], c]
        return decided, realised, arrive

    def run(self, steps: int, progress: Callable[[int, int], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> int:
        """Run ``steps`` steps (calling ``progress(done, total)``); returns how many were run."""
        for k in range(steps):
            if should_stop is not None and should_stop():
                return k
            self.step()
            if progress is not None:
                progress(k + 1, steps)
        return steps


# ---- glue with the logic core's decision objects -----------------------------------------------------------

def clause_table(program) -> list[dict]:
    """Plain description of every clause of ``program`` (id, head, label, text) for episode metadata."""
    out = []
    for clause in program.clauses:
        out.append({"id": int(clause.id), "head": str(clause.head), "label": str(clause.label),
                    "text": str(clause)})
    return out


def explanation_arrays(decisions, decided: np.ndarray, overrides, nvars: int) -> tuple[np.ndarray, np.ndarray]:
    """Per agent: the clause id that fired for the decided action and its witness (agent indices); an agent in
    ``overrides`` gets :data:`~core.sim.episode.FIRED_FORCED` (its action was set, not derived by the rules)."""
    n = len(decided)
    fired = np.full(n, -1, np.int32)
    witness = np.full((n, max(1, nvars)), -1, np.int32)
    fc = decisions.clause
    wt = decisions.witness
    rows = np.arange(n)
    fired[:] = np.asarray(fc)[rows, decided.astype(np.int64)]
    w = np.asarray(wt)[rows, decided.astype(np.int64)]
    witness[:, : min(w.shape[1], witness.shape[1])] = w[:, : witness.shape[1]]
    if overrides:
        for i in overrides:
            fired[i] = FIRED_FORCED
            witness[i] = -1
    return fired, witness
