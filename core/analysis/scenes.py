"""Turning analysis findings into loadable scenes, and checking them with the real simulator.

Shared by the conflict witnesses (:mod:`core.analysis.witness`) and the deadlock search
(:mod:`core.analysis.deadlock`): both place agents of chosen :class:`~core.analysis.state_tables.AgentType` on trip
states of :mod:`core.analysis.junction_states`, and both trust a finding only after the simulator itself — its own
grounding, engine and movement, through :func:`core.sim.scene.build_simulation` — reproduces it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

import numpy as np

from core.analysis.junction_states import AgentState
from core.analysis.state_tables import AgentType
from core.base.codes import Action, Kind
from core.logic.lang.program import Program, RuleFile
from core.sim.scene import Scene, SceneAgent, build_simulation

__all__ = ["config_with_program", "make_scene", "agent_names", "stopped_steps"]


def config_with_program(config, program: Program):
    """``config`` (a SimConfig) whose rules are exactly ``program`` (the section being analysed), so that a
    simulation built from it decides with that program; the map file stays, the other file roles are dropped
    (the episode embeds the changed texts instead)."""
    rules = RuleFile({program.name: program}, program.ontology, program.file)
    return replace(config, ontology=program.ontology, rules=rules, rule_section=program.name,
                   files={k: v for k, v in config.files.items() if k == "map"})


def make_scene(states: Sequence[AgentState], types: Sequence[AgentType], idx: Sequence[int],
               type_idx: Sequence[int] | None = None, coins: Mapping[tuple[str, int, int], bool] | None = None):
    """A :class:`core.sim.scene.Scene`: agent i on ``states[idx[i]]`` (cell, heading, its whole trip and the index
    on it) with type ``types[type_idx[i]]`` (default ``types[i]``); ``coins`` forces CollidingClose outcomes."""
    tys = [types[a] for a in type_idx] if type_idx is not None else list(types)
    agents = tuple(SceneAgent(t.kind, position=states[s].cell, goal=states[s].path[-1], path=states[s].path,
                              path_index=states[s].index, heading=states[s].heading, concepts=t.concepts,
                              priority=t.priority) for s, t in zip(idx, tys))
    return Scene(agents, coins=dict(coins or {}))


def agent_names(kinds: Sequence[Kind]) -> list[str]:
    """``Car_1, Pedestrian_1, Car_2, …`` in agent order: the names a scene's agents get in a new simulation."""
    counts: dict[Kind, int] = {}
    out = []
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
        out.append(f"{k.label}_{counts[k]}")
    return out


def stopped_steps(config, scene, steps: int, seed: int = 0) -> int:
    """How many of the first ``steps`` simulated steps of ``scene`` every agent decided Stop and nobody moved."""
    sim = build_simulation(config, scene, seed=seed, record=False)
    start = sim.positions.copy()
    for k in range(steps):
        out = sim.step()
        if not (out.decided == int(Action.STOP)).all() or not np.array_equal(sim.positions, start):
            return k
    return steps
