"""Conflict witnesses as scenes: agents on a real map whose grounding really derives the two conflicting actions.

:func:`core.analysis.static.conflicts` finds an abstract witness — entities with types, unary facts and relations
over which the ego derives both heads. That is a truth table, not a place on a map. Here we turn it into a
:class:`core.sim.scene.Scene` the user can load ("Load as scene") and step:

1. from the abstract witness take, for each of the two heads, the first clause and binding that fire in it;
   the entities they bind (and the ego) are the agents, their literals the facts the placement must produce;
2. agent types (kind, concepts, priorities ordered as the witness's HigherPri facts say) come from the witness;
3. a backtracking search places the ego, then each other agent, on states of
   :mod:`core.analysis.junction_states` (real trip cells around an intersection) so every required literal holds
   in the per-state tables of :mod:`core.analysis.state_tables` and every agent is in the ego's view; a required
   CollidingClose on a pair that draws a coin is forced with the scene's ``coins``;
4. each full placement is decided by the compiled engine; the first in which the ego derives both heads becomes
   the scene, which is then checked end to end: ``build_simulation`` + the simulator's own grounding and
   decision must derive both heads for the ego (``verified``).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.analysis.junction_states import DEFAULT_MARGIN, junction_states
from core.analysis.scenes import agent_names, config_with_program, make_scene
from core.analysis.state_tables import AgentType, interpretation, semantic_truth, state_tables
from core.analysis.static import WitnessScene
from core.base.codes import ACTION_NAMES, HEADING_NAMES, Kind
from core.base.world import KNOWN_CONCEPTS
from core.logic.engines.compiled import CompiledEngine
from core.logic.lang.program import Program
from core.logic.lang.syntax import EGO, Clause
from core.sim.scene import build_simulation
from core.sim.scene_io import scene_to_data

__all__ = ["ConflictScene", "witness_scene", "firing_bindings"]


@dataclass(frozen=True)
class ConflictScene:
    """A loadable scene for a conflict: agent 0 is the ego that derives both ``heads``."""

    heads: tuple[str, str]
    scene: Any                     # core.sim.scene.Scene
    agents: tuple[dict, ...]       # name, kind, concepts, priority, cell, heading (for display)
    clauses: tuple[tuple[str, int | None], ...]   # (label, line) of the clause that fires for each head
    verified: bool                 # the simulator's own grounding derived both heads for the ego

    def to_dict(self) -> dict[str, Any]:
        return {"heads": list(self.heads), "agents": [dict(a) for a in self.agents],
                "clauses": [{"label": lb, "line": ln} for lb, ln in self.clauses], "verified": self.verified,
                "scene": scene_to_data(self.scene)}


def _holds(lit, env: dict[str, int], w: WitnessScene) -> bool:
    if lit.pred in ACTION_NAMES:
        v = lit.pred in w.actions
    elif len(lit.args) == 1:
        v = lit.pred in w.unary[env[lit.args[0]]]
    else:
        names = w.entities
        v = (lit.pred, names[env[lit.args[0]]], names[env[lit.args[1]]]) in set(w.binary)
    return v if lit.positive else not v


def firing_bindings(program: Program, w: WitnessScene, head: str) -> tuple[Clause, dict[str, int]] | None:
    """The first clause of ``head`` (file order) and the first binding (entity indices) whose body holds in the
    abstract witness ``w``."""
    k = len(w.entities)
    for c in program.clauses_for(head):
        for b in itertools.product(range(k), repeat=len(c.variables)):
            env = dict(zip(c.variables, b))
            env[EGO] = 0
            if all(_holds(lit, env, w) for lit in c.body):
                return c, env
    return None


def _types(program: Program, w: WitnessScene, ents: list[int]) -> list[AgentType]:
    onto = program.ontology
    kinds = [Kind.CAR if w.types[e] == "Car" else Kind.PEDESTRIAN for e in ents]
    concepts = []
    for e, kind in zip(ents, kinds):
        groundings = (onto[p].grounding for p in w.unary[e])
        cs = tuple(g[3:] for g in groundings if g and g[3:] in KNOWN_CONCEPTS and KNOWN_CONCEPTS[g[3:]] == kind)
        concepts.append(tuple(dict.fromkeys(cs)))
    # priorities: HigherPri(a, b) = priority(a) < priority(b); cars get 1 + the longest chain above them
    hp = {p.name for p in onto.binary if p.grounding == "higher_priority"}
    above: dict[int, set[int]] = {i: set() for i in range(len(ents))}
    index = {w.entities[e]: i for i, e in enumerate(ents)}
    for pred, a, b in w.binary:
        if pred in hp and a in index and b in index:
            above[index[b]].add(index[a])

    def level(i: int, seen: frozenset = frozenset()) -> int:
        ups = [level(j, seen | {i}) for j in above[i] if j not in seen and kinds[j] == Kind.CAR]
        return 1 + max(ups, default=0)

    return [AgentType(k, c, level(i) if k == Kind.CAR else 0) for i, (k, c) in enumerate(zip(kinds, concepts))]


def witness_scene(config, program: Program, heads: tuple[str, str], w: WitnessScene, *,
                  junction: int | None = None, margin: int = DEFAULT_MARGIN, budget: int = 4000,
                  verify: bool = True) -> ConflictScene | None:
    """A scene on ``config``'s map in which the ego (agent 0) derives both ``heads`` (see module doc), or None
    when no placement within ``budget`` candidate placements does."""
    found = [firing_bindings(program, w, h) for h in heads]
    fires = [f for f in found if f is not None]
    if len(fires) < len(found):
        return None
    ents = sorted({0} | {e for _, env in fires for e in env.values()})
    local = {e: i for i, e in enumerate(ents)}
    types = _types(program, w, ents)
    # required literals over local agent indices (action literals are left to the decision check)
    req: list[tuple[str, tuple[int, ...], bool]] = []
    for c, env in fires:
        for lit in c.body:
            if lit.pred not in ACTION_NAMES:
                req.append((lit.pred, tuple(local[env[a]] for a in lit.args), lit.positive))
    js = junction_states(config.city, junction, margin)
    tables = state_tables(config.city, program.ontology, js.states, program.used_predicates())
    engine = CompiledEngine(program)
    onto = program.ontology
    n, m = len(js.states), len(ents)
    kinds = tables.kinds.astype(np.int64)
    unary_sem = {}

    def candidates(j: int, placed: list[int]) -> np.ndarray:
        ok = kinds == int(types[j].kind)
        for pred, args, pos in req:
            if len(args) == 1 and args[0] == j:
                if pred in tables.unary:
                    ok &= tables.unary[pred] == pos
                else:
                    key = (pred, j)
                    if key not in unary_sem:
                        unary_sem[key] = semantic_truth(onto, pred, types[j])
                    if unary_sem[key] != pos:
                        return np.zeros(0, dtype=np.int64)
            elif len(args) == 2 and j in args and all(a <= j for a in args):
                a, b = args
                if a == b:
                    if pos:
                        return np.zeros(0, dtype=np.int64)
                    continue
                if pred in tables.binary:
                    none = np.zeros(n, dtype=bool)
                    if a < j:     # the first argument is placed, the second is the agent being placed
                        val = tables.binary[pred][placed[a], :]
                        coin = tables.coin[pred][placed[a], :] if pred in tables.coin else none
                    else:
                        val = tables.binary[pred][:, placed[b]]
                        coin = tables.coin[pred][:, placed[b]] if pred in tables.coin else none
                    ok &= (val | coin) if pos else (~val | coin)   # a coin pair is forced either way
                elif onto[pred].grounding == "higher_priority":
                    pa, pb = types[a].priority, types[b].priority
                    if (pa < pb) != pos:
                        return np.zeros(0, dtype=np.int64)
                elif pos:
                    return np.zeros(0, dtype=np.int64)
        if j > 0:
            ok &= tables.view[placed[0], :]
        ok[placed] = False
        return np.flatnonzero(ok)

    tried = 0
    stack: list[tuple[list[int], np.ndarray, int]] = [([], candidates(0, []), 0)]
    while stack:
        placed, cand, i = stack.pop()
        if i >= len(cand):
            continue
        stack.append((placed, cand, i + 1))
        chosen = placed + [int(cand[i])]
        if len(chosen) < m:
            stack.append((chosen, candidates(len(chosen), chosen), 0))
            continue
        tried += 1
        if tried > budget:
            return None
        coins = _coins(tables, chosen, req)
        if _decides(engine, onto, tables, types, chosen, heads, coins):
            scene = make_scene(js.states, types, chosen, coins=coins)
            ok = _verify(config, program, scene, heads) if verify else False
            if verify and not ok:
                continue
            return _result(program, heads, fires, js.states, types, chosen, scene, ok)
    return None


def _coins(tables, chosen: list[int], req) -> dict[tuple[str, int, int], bool]:
    """Outcome of every coin pair among the agents: what a required CollidingClose literal needs, else False."""
    out = {}
    for name, mask in tables.coin.items():
        for i, j in itertools.permutations(range(len(chosen)), 2):
            if mask[chosen[i], chosen[j]]:
                out[(name, i, j)] = False
    for pred, args, pos in req:
        if len(args) == 2 and (pred, args[0], args[1]) in out:
            out[(pred, args[0], args[1])] = pos
    return out


def _decides(engine, onto, tables, types, chosen, heads, coins) -> bool:
    k = len(chosen)
    dom = np.array([chosen], dtype=np.int64)
    dty = np.array([list(range(k))], dtype=np.int64)
    cv: dict[str, np.ndarray] = {}
    for (name, i, j), v in coins.items():
        cv.setdefault(name, np.zeros((1, k, k), dtype=bool))[0, i, j] = v
    interp = interpretation(onto, tables, types, dom, dty, cv)
    d = engine.decide(interp)
    return all(bool(d.holds[0, ACTION_NAMES.index(h)]) for h in heads)


def _verify(config, program: Program, scene, heads) -> bool:
    sim = build_simulation(config_with_program(config, program), scene, seed=0, record=False)
    _, d = sim.decide()
    return all(bool(d.holds[0, ACTION_NAMES.index(h)]) for h in heads)


def _result(program, heads, fires, states, types, chosen, scene, verified) -> ConflictScene:
    agents = []
    for name, s, t in zip(agent_names([t.kind for t in types]), chosen, types):
        agents.append({"name": name, "kind": t.kind.name.lower(),
                       "concepts": list(t.concepts), "priority": t.priority, "cell": list(states[s].cell),
                       "heading": HEADING_NAMES[states[s].heading]})
    clauses = tuple((c.label, c.pos.line if c.pos else None) for c, _ in fires)
    return ConflictScene(tuple(heads), scene, tuple(agents), clauses, verified)
