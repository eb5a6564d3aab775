"""Apply: simulate the edited city and agents, from step 0 or as a branch from the shown step (no Qt).

Why here: the editors change ``project.config``; the recording shown was made with whatever config was current
when it started. *Apply* makes a new recording with the edits, and the recording remembers what produced it:

* every episode's meta holds ``provenance`` = content hashes of its city and agent set (core/sim/provenance.py),
  so :func:`apply_status` can tell whether the recording matches the edits and the studio shows both hashes;
* *from step 0*: the simulation is reset with the edited config and the project's seed (the recording's agents
  with a chosen start/goal start there, core/sim/simulation.py);
* *branch at step k*, the studio's branching rules: when only concepts and priorities changed
  (:func:`continue_problem`), the recording keeps states 0..k, drops the rest, and the edited agents hold from
  state k on (:func:`branch_in_place`; the meta's ``agent_changes`` schedules the tables per step, so the
  simulation's replays and a reopened project re-simulate it exactly). Otherwise (agents added, removed or
  reordered, starts or the city changed) the state shown becomes state 0 of a new recording: recorded agents
  continue their trip from where they are at step k (position, planned path, heading, goal wait, goals reached;
  concepts and priority as edited), new agents start at their chosen start (or a drawn one), and the meta keeps
  the starting scene (``start_scene``, core/sim/scene_io.py data) for reopening. Both record
  ``branched_from: {step, provenance, seed}``.

Either way Apply is refused while the Problems checks find errors (:func:`refusal`), like starting a simulation.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from core.agents.io import loads_agent_set
from core.agents.spec import AgentSet
from core.base.errors import LogiCityError
from core.base.world import AgentTable
from core.sim.provenance import city_hash, provenance, short
from core.sim.rule_segments import SEGMENTS_KEY, schedule
from core.sim.scene import Scene, SceneAgent, build_simulation, scene_problems
from core.sim.scene_io import scene_from_data, scene_to_data
from core.sim.simulation import GOAL_WAIT_STEPS, Simulation
from core.studio.problems import blocking_message, collect

__all__ = ["ApplyStatus", "apply_status", "refusal", "scene_at", "branch_config", "start_config",
           "new_simulation", "continue_problem", "branch_in_place", "BRANCH_KEY", "SCENE_KEY", "SCHEDULE_KEY"]

#: episode-meta keys (docs/agent-editor.md, "Provenance")
BRANCH_KEY = "branched_from"
SCENE_KEY = "start_scene"
SCHEDULE_KEY = "agent_changes"


@dataclass(frozen=True)
class ApplyStatus:
    """How the shown recording relates to the edits: the hashes it was made with (``recorded``, None for a
    recording from an older version) and those of the current edits (``current``)."""

    recorded: dict | None
    current: dict
    branched_from: dict | None = None

    @property
    def city_changed(self) -> bool:
        return self.recorded is None or self.recorded.get("city") != self.current["city"]

    @property
    def agents_changed(self) -> bool:
        return self.recorded is None or self.recorded.get("agents") != self.current["agents"]

    @property
    def pending(self) -> bool:
        """The edits differ from what the recording was made with: Apply would change something."""
        return self.city_changed or self.agents_changed

    def text(self) -> str:
        rec = self.recorded or {}
        line = (f"Recording: city {short(rec.get('city'))}, agents {short(rec.get('agents'))}"
                + (f" (branched at step {self.branched_from.get('step')})" if self.branched_from else ""))
        if not self.pending:
            return line + " — matches the edits."
        what = " and ".join(w for w, changed in (("city", self.city_changed), ("agents", self.agents_changed))
                            if changed)
        return (f"{line}. Edited: city {short(self.current['city'])}, agents {short(self.current['agents'])} — "
                f"the {what} changed since this recording; Apply to simulate them.")


def apply_status(session: Any) -> ApplyStatus | None:
    if session.project is None:
        return None
    meta = session.history.meta if session.history is not None else {}
    return ApplyStatus(meta.get("provenance"), provenance(session.project.config), meta.get(BRANCH_KEY))


def refusal(session: Any) -> str | None:
    """Why Apply may not run now (errors in Problems, a read-only replay), or None."""
    if session.project is None:
        return "no project is open"
    if getattr(session, "read_only", None) is not None:
        return (f"{session.read_only.name} is a read-only replay; File ▸ Save project as… makes it a project that "
                "can be simulated")
    return blocking_message(collect(session))


# ---- branching -------------------------------------------------------------------------------------------------

def _waiting(reached: np.ndarray, k: int, i: int, at_goal: bool) -> tuple[bool, int]:
    """The goal-wait state of agent ``i`` at state ``k`` from the recorded arrival events (the simulator's rule:
    arriving sets the flag with GOAL_WAIT_STEPS to wait, then one step per state, then a new trip)."""
    if not at_goal:
        return False, 0
    for back in range(GOAL_WAIT_STEPS + 1):
        j = k - 1 - back            # the step in which it would have arrived
        if j < 0:
            break
        if reached[j, i]:
            return True, GOAL_WAIT_STEPS - back
    return False, 0


def scene_at(history: Any, k: int, agents: AgentSet) -> Any:
    """State ``k`` of ``history`` with the agent set ``agents``: recorded agents (by name) where they are at step
    k, with their edited concepts and priority; new agents at their chosen start/goal or drawn ones."""
    names = list(history.agents.names)
    pos = np.asarray(history.array("positions")[k])
    head = np.asarray(history.array("headings")[k])
    goals = np.asarray(history.goals(k))
    reached = np.asarray(history.array("reached"))[:k] if k > 0 else np.zeros((0, len(names)), bool)
    out = []
    for a in agents:
        if a.name in names and int(history.agents.kinds[names.index(a.name)]) == int(a.kind):
            i = names.index(a.name)
            cells, index = history.plan(k, i)
            position = (int(pos[i, 0]), int(pos[i, 1]))
            goal = (int(goals[i, 0]), int(goals[i, 1]))
            waiting, wait = _waiting(reached, k, i, position == goal)
            out.append(SceneAgent(a.kind, position=position, goal=goal, path=cells, path_index=index,
                                  heading=int(head[i]), waiting=waiting, wait=wait,
                                  goals_reached=int(reached[:, i].sum()) if len(reached) else 0, id=a.id,
                                  concepts=a.concepts, priority=a.priority))
        else:
            out.append(SceneAgent(a.kind, position=a.start, goal=a.goal, id=a.id, concepts=a.concepts,
                                  priority=a.priority))
    return Scene(tuple(out))


def branch_config(config: Any, history: Any, k: int, seed: int) -> Any:
    """``config`` with what the simulation worker needs to start the branch at step ``k`` (the scene and where it
    came from); raises :class:`~core.sim.scene.SceneError` naming the first problem (e.g. a recorded agent stands
    where the edited city now has a building)."""
    scene = scene_at(history, k, config.agents)
    problems = scene_problems(config, scene)
    if problems:
        raise problems[0]
    parent = {"step": int(k), "seed": int(history.meta.get("seed", seed)),
              "provenance": history.meta.get("provenance")}
    return replace(config, extra={**(config.extra or {}), SCENE_KEY: scene, BRANCH_KEY: parent})


# ---- branching in place: the same recording, edited concepts/priorities from a step on ---------------------------

def continue_problem(session: Any) -> str | None:
    """None when the edits can continue the shown recording from a step, keeping the steps before it (only
    concepts and priorities changed: same city, same agents in the same order, same chosen starts and goals);
    else why a branch must start a new recording."""
    history, cfg = session.history, session.project.config
    rec = history.meta.get("provenance") or {}
    if rec.get("city") != city_hash(cfg.city):
        return "the city changed"
    names = tuple(history.agents.names)
    edited = tuple(a.name for a in cfg.agents)
    if names != edited:
        return "agents were added, removed, renamed or reordered"
    if SCENE_KEY not in history.meta:   # a scene-started recording fixes where the agents start
        recorded = _recorded_set(history.meta)
        if recorded is None:
            return "the recording does not say which agent set made it"
        if any((a.start, a.goal) != (b.start, b.goal) for a, b in zip(recorded, cfg.agents)):
            return "a start or goal changed (that changes the recording from step 0)"
    return None


def _recorded_set(meta: dict) -> AgentSet | None:
    text = (meta.get("config_texts") or {}).get("agents")
    try:
        return loads_agent_set(text) if text else None
    except LogiCityError:
        return None


def _entry(step: int, table: Any) -> dict:
    return {"step": int(step), "priorities": [int(p) for p in table.priorities],
            "concepts": [table.concept_names(i) for i in range(len(table))]}


def branch_in_place(session: Any, k: int) -> None:
    """Keep the recording's states 0..k, discard the rest (the studio's branch) and let the edited concepts and
    priorities hold from state k on; the recording's meta schedules the change (``agent_changes``: the tables in
    force from each step, step 0 included) so a saved project re-simulates it exactly. Check
    :func:`continue_problem` first."""
    history, cfg = session.history, session.project.config
    k = int(min(max(k, 0), session.num_steps))
    meta = history.meta
    entries = [e for e in meta.get(SCHEDULE_KEY) or [] if e["step"] < k] or [_entry(0, history.agents_at(0))]
    table = cfg.agents.table()
    parent = {"step": k, "seed": int(meta.get("seed", session.project.seed)), "provenance": meta.get("provenance"),
              "in_place": True}
    session.truncate(k)
    meta[SCHEDULE_KEY] = entries + [_entry(k, table)]
    meta["provenance"] = provenance(cfg)
    meta[BRANCH_KEY] = parent
    history.set_state_agents(k, table)


def _schedule(config: Any, entries: list) -> dict:
    base = config.agents.table()
    return {int(e["step"]): AgentTable.build(base.names, base.kinds, e["priorities"], e["concepts"])
            for e in entries}


def start_config(config: Any, meta: dict) -> Any:
    """The config that re-simulates a recording: ``config`` itself, or with the recording's starting scene when it
    was a branch, its agent-table schedule and its rule programs per step segment (core/sim/rule_segments.py), so
    reopening a saved project continues it exactly."""
    data = meta.get(SCENE_KEY)
    entries = meta.get(SCHEDULE_KEY)
    rules = meta.get(SEGMENTS_KEY)
    if not data and not entries and not rules:
        return config
    extra = dict(config.extra or {})
    if data:
        extra.update({SCENE_KEY: scene_from_data(data), BRANCH_KEY: meta.get(BRANCH_KEY)})
    if entries:
        extra["agent_schedule"] = _schedule(config, entries)
    if rules:     # the rule programs that decided each segment (core/studio/rule_branch.py)
        try:
            extra["rule_schedule"] = schedule(meta)
        except LogiCityError:   # a damaged file: re-simulated with the config's rules, continued where they agree
            pass
    return replace(config, extra=extra)


def new_simulation(config: Any, seed: int, record: bool = True) -> Any:
    """A Simulation of ``config`` (what the studio's worker builds): from the branch scene when ``config`` carries
    one (:func:`branch_config`, :func:`start_config`), else from step 0 with the seed's draws."""
    scene = (config.extra or {}).get(SCENE_KEY)
    agent_schedule = dict((config.extra or {}).get("agent_schedule") or {})
    rules = dict((config.extra or {}).get("rule_schedule") or {})
    if scene is None:
        sim = Simulation(config, seed=seed, record=record)
        sim.agent_schedule = agent_schedule
        if rules:
            sim.set_rule_schedule(rules)
        return sim
    sim = build_simulation(config, scene, seed=seed, record=record)
    if sim.buffer is not None:
        meta = sim.buffer.meta
        meta["provenance"] = provenance(config)          # the edited set the user applied (with its starts)
        meta[SCENE_KEY] = scene_to_data(scene)
        if config.extra.get(BRANCH_KEY) is not None:
            meta[BRANCH_KEY] = dict(config.extra[BRANCH_KEY])
    sim.agent_schedule = agent_schedule
    if rules:
        sim.set_rule_schedule(rules)
    return sim
