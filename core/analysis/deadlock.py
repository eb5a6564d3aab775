"""Deadlock search: configurations of up to k agents around an intersection in which every agent stops, each
because of another, for ever.

The bound (also in docs/rules.md, "Deadlock search"):

* **where**: the states of :mod:`core.analysis.junction_states` — every cell of real planned trips (cars on the
  lane graph, pedestrians on the walking network) inside one intersection's junction square grown by
  ``margin`` cells, with the heading of the move that reached it; any two agents on different cells;
* **who**: each agent's kind with no concept or one concept the rules test, and car priorities 1..k when the
  rules use HigherPri (:func:`core.analysis.state_tables.agent_types`);
* **k = 2**: every pair of states and types (exhaustive); **k = 3**: every cycle a → b → c → a in which each
  agent stops when it sees only the next one (found on the state graph, up to ``budget`` cycles checked; the
  report says whether the budget cut the search), then checked with all three together;
* **deadlock**: with only these agents on the map, every agent's decided action is Stop (derived Stop and, for a
  car, no Slow/Normal/Fast; for a pedestrian no Normal) for *every* outcome of the CollidingClose coins among
  them; no agent stops when it is alone (it waits on another), and no smaller subset is already a deadlock.
  "For ever" then follows: nobody moves, so positions, headings and therefore the grounding stay the same
  every step (only the coins are redrawn, and every outcome was checked). Each reported deadlock is also
  simulated (``verify_steps`` steps of the real simulator from its scene) and kept only if nobody moved.

"Reachable" is per agent (each state lies on a trip the planners produce); whether the rules let all k agents
arrive there together is not checked — load the scene and step back from it in the studio to see.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from core.analysis.junction_states import DEFAULT_MARGIN, junction_states
from core.analysis.scenes import agent_names, config_with_program, make_scene, stopped_steps
from core.analysis.state_tables import AgentType, StateTables, agent_types, interpretation, state_tables
from core.base.codes import HEADING_NAMES, Action, Kind
from core.logic.engines.compiled import CompiledEngine
from core.logic.lang.program import Program
from core.sim.scene_io import scene_to_data

__all__ = ["DeadlockAgent", "Deadlock", "DeadlockSearch", "find_deadlocks", "MAX_DEADLOCK_AGENTS",
           "decided_stop"]

#: Largest k the search supports (the k = 3 cycle search is already cubic in the number of states).
MAX_DEADLOCK_AGENTS = 3
_S, _N, _SL, _F = int(Action.STOP), int(Action.NORMAL), int(Action.SLOW), int(Action.FAST)


def decided_stop(holds: np.ndarray, is_car: np.ndarray) -> np.ndarray:
    """bool [E]: the decided action is Stop (docs/reference.md#choosing-the-move): Stop derived and no moving
    action a car (Slow/Normal/Fast) or a pedestrian (Normal) could take instead."""
    moving = np.where(is_car, holds[:, _SL] | holds[:, _N] | holds[:, _F], holds[:, _N])
    return holds[:, _S] & ~moving


@dataclass(frozen=True)
class DeadlockAgent:
    name: str
    kind: str
    concept: str | None
    priority: int
    cell: tuple[int, int]
    heading: str
    clause: str           # label of the Stop clause that fires for it
    line: int | None      # its line in the rule file
    waits_on: tuple[str, ...]   # the agents bound in that clause's witness

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "concept": self.concept, "priority": self.priority,
                "cell": list(self.cell), "heading": self.heading, "clause": self.clause, "line": self.line,
                "waits_on": list(self.waits_on)}


@dataclass(frozen=True)
class Deadlock:
    agents: tuple[DeadlockAgent, ...]
    scene: Any                      # core.sim.scene.Scene (loadable: build_simulation / apply_scene)
    verified_steps: int             # simulated steps in which nobody moved

    @property
    def clauses(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.clause for a in self.agents))

    def __str__(self) -> str:
        who = "; ".join(f"{a.name} ({a.kind}{' ' + a.concept if a.concept else ''}"
                        f"{f', priority {a.priority}' if a.kind == 'car' else ''}) at {a.cell} heading {a.heading} "
                        f"stops by {a.clause} (line {a.line}) waiting on {', '.join(a.waits_on)}"
                        for a in self.agents)
        return f"DEADLOCK of {len(self.agents)} agents: {who}"

    def to_dict(self) -> dict[str, Any]:
        return {"agents": [a.to_dict() for a in self.agents], "clauses": list(self.clauses),
                "verified_steps": self.verified_steps, "scene": scene_to_data(self.scene)}


@dataclass(frozen=True)
class DeadlockSearch:
    """What was searched (the bound) and what was found."""

    max_agents: int
    junction: int
    region: tuple[int, int, int, int]
    states: dict[str, int]
    types: tuple[str, ...]
    configurations: int             # configurations decided (pairs x types x coin outcomes, cycles, ...)
    found: int                      # deadlock configurations found before grouping
    complete: bool                  # False when the k = 3 budget cut the search
    deadlocks: tuple[Deadlock, ...] = field(default_factory=tuple)
    rejected: int = 0               # found in the tables but moved when simulated (should stay 0)

    def bound(self) -> str:
        top, bottom, left, right = self.region
        return (f"up to {self.max_agents} agents on {self.states.get('car', 0)} car and "
                f"{self.states.get('pedestrian', 0)} pedestrian trip states in rows {top}..{bottom}, cols "
                f"{left}..{right} (junction {self.junction}); types: {', '.join(self.types)}"
                + ("" if self.complete else "; k = 3 search cut by its budget"))

    def to_dict(self) -> dict[str, Any]:
        return {"max_agents": self.max_agents, "junction": self.junction, "region": list(self.region),
                "states": dict(self.states), "types": list(self.types), "configurations": self.configurations,
                "found": self.found, "complete": self.complete, "rejected": self.rejected, "bound": self.bound(),
                "deadlocks": [d.to_dict() for d in self.deadlocks]}


class _Search:
    def __init__(self, program: Program, tables: StateTables, types: list[AgentType]) -> None:
        self.program = program
        self.onto = program.ontology
        self.t = tables
        self.types = types
        self.used = program.used_predicates()
        self.engine = CompiledEngine(program)
        self.type_kind = np.array([int(t.kind) for t in types])
        self.state_kind = tables.kinds.astype(np.int64)
        self.ok = self.state_kind[:, None] == self.type_kind[None, :]   # [N, T] type fits the state's kind
        self.decided = 0
        self.cc = list(tables.coin)

    def decide(self, dom: np.ndarray, dom_types: np.ndarray, coins: dict[str, np.ndarray] | None = None):
        interp = interpretation(self.onto, self.t, self.types, dom, dom_types, coins, self.used)
        d = self.engine.decide(interp)
        self.decided += len(dom)
        is_car = self.type_kind[dom_types[:, 0]] == int(Kind.CAR)
        return d, decided_stop(d.holds, is_car)

    # -- one agent alone ------------------------------------------------------------------------------------
    def alone(self) -> np.ndarray:
        """bool [N, T]: the agent stops with nobody else in view (then it waits on no one)."""
        s, a = np.nonzero(self.ok)
        out = np.zeros(self.ok.shape, dtype=bool)
        if len(s):
            _, stop = self.decide(s[:, None], a[:, None])
            out[s, a] = stop
        return out

    # -- directed pairs: does ego s (type a) stop seeing only t (type b), for every coin outcome? --------------
    def pair_stops(self, s: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For ordered state pairs (s, t): does ego s of type a stop seeing only t of type b? Pairs with the same
        signature (unary facts, relations both ways, coins, kinds) decide alike, so each signature is decided
        once: returns bool [U, T, T], the Stop clause ids [U, T, T] and each pair's signature index [P]."""
        tb = self.t
        bits = [np.stack([tb.unary[k][s] for k in tb.unary] + [tb.unary[k][t] for k in tb.unary], 1)
                if tb.unary else np.zeros((len(s), 0), bool)]
        for k in tb.binary:
            bits.append(np.stack([tb.binary[k][s, t], tb.binary[k][t, s]], 1))
        for k in tb.coin:
            bits.append(np.stack([tb.coin[k][s, t], tb.coin[k][t, s]], 1))
        bits.append(np.stack([self.state_kind[s] == 1, self.state_kind[t] == 1], 1))
        sig = np.packbits(np.concatenate(bits, 1), axis=1)
        _, first, inverse = np.unique(sig, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        T = len(self.types)
        stop_u = np.ones((len(first), T, T), dtype=bool)
        clause_u = np.full((len(first), T, T), -1, dtype=np.int64)
        rs, rt = s[first], t[first]
        a_idx: np.ndarray
        b_idx: np.ndarray
        a_idx, b_idx = np.meshgrid(np.arange(T), np.arange(T), indexing="ij")
        a_idx, b_idx = a_idx.reshape(-1), b_idx.reshape(-1)
        fits = self.ok[rs][:, a_idx] & self.ok[rt][:, b_idx]          # [U, T*T]
        u, ab = np.nonzero(fits)
        if len(u) == 0:
            return np.zeros((1, T, T), bool), np.full((1, T, T), -1), np.zeros(len(s), np.int64)
        dom = np.stack([rs[u], rt[u]], 1)
        dty = np.stack([a_idx[ab], b_idx[ab]], 1)
        ncoin = [(k, tb.coin[k][rs[u], rt[u]], tb.coin[k][rt[u], rs[u]]) for k in self.cc]
        # every coin outcome: a bit per (predicate, direction); pairs without that coin ignore the bit
        nbits = 2 * len(ncoin)
        all_stop = np.ones(len(u), dtype=bool)
        clause = np.full(len(u), -1, dtype=np.int64)
        for combo in itertools.product((False, True), repeat=nbits):
            coins = {}
            for i, (k, _, _) in enumerate(ncoin):
                m = np.zeros((len(u), 2, 2), dtype=bool)
                m[:, 0, 1] = combo[2 * i]
                m[:, 1, 0] = combo[2 * i + 1]
                coins[k] = m
            relevant = np.ones(len(u), dtype=bool)
            for i, (_, st, ts) in enumerate(ncoin):  # skip outcomes that differ only in coins a pair lacks
                if combo[2 * i]:
                    relevant &= st
                if combo[2 * i + 1]:
                    relevant &= ts
            rows = np.flatnonzero(relevant)
            if not len(rows):
                continue
            d, stop = self.decide(dom[rows], dty[rows], {k: v[rows] for k, v in coins.items()})
            all_stop[rows] &= stop
            fresh = rows[clause[rows] < 0]
            clause[fresh] = np.asarray(d.clause)[np.searchsorted(rows, fresh), _S]
        stop_u[:] = False
        stop_u[u, a_idx[ab], b_idx[ab]] = all_stop
        clause_u[u, a_idx[ab], b_idx[ab]] = clause
        return stop_u, clause_u, inverse


def find_deadlocks(config, program: Program | None = None, *, max_agents: int = 2, junction: int | None = None,
                   margin: int = DEFAULT_MARGIN, max_results: int = 5, verify_steps: int = 5,
                   budget: int = 20000, check: Callable[[], None] | None = None) -> DeadlockSearch:
    """Search deadlocks of ``program`` (default: the config's) on ``config``'s map (see module doc).

    ``check()`` is called now and then (a background job's ``check_cancelled``: its exception ends the search).

    ``config`` is a :class:`core.sim.config.SimConfig` (its city, and its rules when ``program`` is None);
    reported scenes are verified with ``core.sim.scene.build_simulation`` on the config with ``program``.
    """
    if not 2 <= max_agents <= MAX_DEADLOCK_AGENTS:
        raise ValueError(f"the deadlock search handles 2..{MAX_DEADLOCK_AGENTS} agents, got {max_agents}")
    program = program if program is not None else config.program
    js = junction_states(config.city, junction, margin)
    types = agent_types(program.ontology, program.used_predicates(), max_agents)
    tables = state_tables(config.city, program.ontology, js.states, program.used_predicates())
    search = _Search(program, tables, types)
    n = len(js.states)
    alone = search.alone()
    cells = tables.cells
    distinct = (cells[:, None, 0] != cells[None, :, 0]) | (cells[:, None, 1] != cells[None, :, 1])
    sees = tables.view & distinct                      # sees[s, t]: t is in s's view, another cell
    s_idx, t_idx = np.nonzero(sees)
    stop_u, _, inv = search.pair_stops(s_idx, t_idx)
    pidx = np.full((n, n), -1, dtype=np.int64)
    pidx[s_idx, t_idx] = np.arange(len(s_idx))
    waits = _Waits(stop_u, inv, s_idx, alone, pidx)
    found: list[tuple[tuple[int, ...], tuple[int, ...]]] = []   # (states, types)
    # k = 2: both wait on each other (chunks keep the [pairs, T, T] arrays small)
    p_all = np.flatnonzero((s_idx < t_idx) & (pidx[t_idx, s_idx] >= 0))
    count = 0
    for lo in range(0, len(p_all), 20000):
        if check is not None:
            check()
        p = p_all[lo:lo + 20000]
        q = pidx[t_idx[p], s_idx[p]]
        both = waits.of(p) & waits.of(q).transpose(0, 2, 1)
        hit = np.argwhere(both)
        count += len(hit)
        found += [((int(s_idx[p[i]]), int(t_idx[p[i]])), (int(a), int(b))) for i, a, b in hit.tolist()]
    complete = True
    if max_agents >= 3:
        extra, count3, complete = _three_cycles(search, waits, n, budget, check)
        found += extra
        count += count3
    deadlocks, rejected = _report(config, program, search, js, found, max_results, verify_steps)
    states = {"car": int((tables.kinds == int(Kind.CAR)).sum()), "pedestrian": int((tables.kinds == 0).sum())}
    return DeadlockSearch(max_agents, js.index, js.region, states, tuple(t.label() for t in types),
                          search.decided, count, complete, tuple(deadlocks), rejected)


@dataclass
class _Waits:
    """wait(p)[a, b]: ego s_idx[p] of type a stops seeing only t_idx[p] of type b, and not when alone."""

    stop_u: np.ndarray
    inv: np.ndarray
    s_idx: np.ndarray
    alone: np.ndarray
    pidx: np.ndarray

    def of(self, p: np.ndarray) -> np.ndarray:
        return self.stop_u[self.inv[p]] & ~self.alone[self.s_idx[p]][:, :, None]

    def at(self, s: int, t: int) -> np.ndarray | None:
        p = int(self.pidx[s, t])
        return None if p < 0 else self.of(np.array([p]))[0]


def _three_cycles(search: _Search, waits: _Waits, n: int, budget: int,
                  check: Callable[[], None] | None = None) -> tuple[list, int, bool]:
    """Minimal 3-agent wait cycles s → t → u → s, checked with all three agents together."""
    ws = np.zeros((n, n), dtype=bool)
    p_all = np.flatnonzero(waits.pidx.reshape(-1) >= 0)
    for lo in range(0, len(p_all), 20000):
        flat = p_all[lo:lo + 20000]
        p = waits.pidx.reshape(-1)[flat]
        ws.reshape(-1)[flat] = waits.of(p).any(axis=(1, 2))
    two = ws.astype(np.float32) @ ws.astype(np.float32)         # paths of length 2
    close = (two > 0) & ws.T                                      # s ->> u and u -> s
    cand = np.argwhere(close)
    found: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = []
    count, checked = 0, 0
    complete = True
    for s, u in cand.tolist():
        for t in np.flatnonzero(ws[s] & ws[:, u]).tolist():
            if not (s < t and s < u) or t == u:      # each cycle once (rotation starting at its smallest state)
                continue
            if checked >= budget:
                return found, count, False
            checked += 1
            if check is not None and checked % 500 == 0:
                check()
            m1, m2, m3 = waits.at(s, t), waits.at(t, u), waits.at(u, s)
            assert m1 is not None and m2 is not None and m3 is not None   # ws marks pairs that have a wait table
            # types a, b, c with m1[a, b] & m2[b, c] & m3[c, a]
            hit = np.argwhere(m1[:, :, None] & m2[None, :, :] & m3.T[:, None, :])
            for a, b, c in hit.tolist():
                if _has_two_deadlock(waits, (s, t, u), (a, b, c)):
                    continue
                if _joint_stop(search, (s, t, u), (a, b, c)):
                    found.append(((s, t, u), (a, b, c)))
                    count += 1
                    break
    return found, count, complete


def _has_two_deadlock(waits: _Waits, states, types) -> bool:
    for i, j in itertools.combinations(range(len(states)), 2):
        p, q = waits.at(states[i], states[j]), waits.at(states[j], states[i])
        if p is not None and q is not None and p[types[i], types[j]] and q[types[j], types[i]]:
            return True
    return False


def _domains(search: _Search, states: Sequence[int], types: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    k = len(states)
    dom = np.full((k, k), -1, dtype=np.int64)
    dty = np.zeros((k, k), dtype=np.int64)
    for i in range(k):
        row = [i] + [j for j in range(k) if j != i and search.t.view[states[i], states[j]]]
        for c, j in enumerate(row):
            dom[i, c] = states[j]
            dty[i, c] = types[j]
    return dom, dty


def _joint_stop(search: _Search, states: Sequence[int], types: Sequence[int]) -> bool:
    """All agents stop with all of them on the map, for every outcome of their coins."""
    dom, dty = _domains(search, states, types)
    k = len(states)
    coin_pairs = [(name, i, j) for name in search.cc for i in range(k) for j in range(k)
                  if i != j and search.t.coin[name][states[i], states[j]]]
    for combo in itertools.product((False, True), repeat=len(coin_pairs)):
        coins = {}
        for name in search.cc:
            m = np.zeros((k, k, k), dtype=bool)
            for (nm, i, j), v in zip(coin_pairs, combo):
                if nm == name and v:
                    for e in range(k):       # the same physical coin in every ego's view
                        row = list(dom[e])
                        if states[i] in row and states[j] in row:
                            m[e, row.index(states[i]), row.index(states[j])] = True
            coins[name] = m
        _, stop = search.decide(dom, dty, coins)
        if not stop.all():
            return False
    return True


def _report(config, program: Program, search: _Search, js, found, max_results: int, verify_steps: int):
    """Group found deadlocks by pattern (types and firing clauses), build and simulate one scene per pattern."""
    out: list[Deadlock] = []
    seen: set = set()
    rejected = 0
    cfg = config_with_program(config, program)
    tried: set = set()
    for states, types in found:
        if len(out) >= max_results:
            break
        # one configuration per kinds-and-cells pattern is enough to learn its clauses
        pre = tuple(sorted((int(search.types[a].kind), search.types[a].concepts) for a in types)) + tuple(states)
        if pre in tried:
            continue
        tried.add(pre)
        dom, dty = _domains(search, states, types)
        d, _ = search.decide(dom, dty)
        cl = np.asarray(d.clause)[:, _S]
        key = tuple(sorted((int(search.types[types[i]].kind), int(cl[i])) for i in range(len(states))))
        if key in seen:
            continue
        seen.add(key)
        scene = make_scene(js.states, search.types, states, types)
        steps = stopped_steps(cfg, scene, verify_steps)
        if steps < verify_steps:
            rejected += 1
            continue
        names = agent_names([search.types[a].kind for a in types])
        agents = []
        for i, (s, a) in enumerate(zip(states, types)):
            st, ty = js.states[s], search.types[a]
            c = program.clauses[int(cl[i])] if cl[i] >= 0 else None
            wit = np.asarray(d.witness)[i, _S]
            bound = [int(dom[i][int(w)]) for w in wit if w >= 0]      # witness = columns of the domain row
            waits = tuple(dict.fromkeys(names[list(states).index(b)] for b in bound if b != s))
            agents.append(DeadlockAgent(names[i], ty.kind.name.lower(), ty.concept, ty.priority, st.cell,
                                        HEADING_NAMES[st.heading], c.label if c else "?",
                                        c.pos.line if c and c.pos else None, waits))
        out.append(Deadlock(tuple(agents), scene, steps))
    return out, rejected
