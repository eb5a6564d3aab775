"""Gridlock detection over a recorded episode (no Qt): agents that stand still because they wait on one another.

Why: a locked-up city looks like a busy one — every agent is "just stopping". The episode records, per agent and
step, the clause that fired for the decided action and the agents bound to its variables (``fired`` /
``witness``, docs/formats.md "Episode files"), so "who waits on whom" is recorded data: agent A decided Stop by
clause c with witness B means A waits on B. A gridlock is a cycle in that relation among agents that have all
stood still for ``still_steps`` (K) steps: nobody in it can go first, so nobody ever will.

Definition used here (one step k = the transition from state k to state k+1):

* an agent is *still* for s steps at state k+1 when its cell is the same in states k+1-s .. k+1;
* its *wait edge* is the recorded Stop explanation of the latest step of its current still period in which it
  decided Stop by a rule (``fired`` >= 0) with a witness that did not move either; a Stop whose witness was a
  passer-by (a pedestrian crossing in front, a car driving past) does not replace it. Why the latest such step
  and not only step k: a clause records one witness, and which of several qualifying agents is recorded can
  change from step to step (the default city's lock-up alternates between the car it is locked with and
  pedestrians walking past), so the cycle is not visible at every single step;
* an edge A → B counts at step k while A decided Stop by a rule at step k, both are still for >= K steps, and
  neither moved since the step the edge was recorded;
* a gridlock is a strongly connected set of >= 2 agents in that graph (each waits, through recorded
  explanations, on the others). It is *detected* at the first step k where this holds, and lasts until one of
  its cycle agents moves again (``end`` = that step). Agents still for >= K steps whose edges lead into the cycle
  are *stuck behind* it (``blocked``): in the default city a two-car cycle ends up holding six more cars and
  five pedestrians.

Agents stopped by a non-cyclic chain (a queue behind an agent forced to Stop, or waiting on an agent that is at
its goal or has no rule Stop) are never flagged: the chain ends somewhere.

Incremental: :class:`GridlockDetector` keeps O(N) per-agent counters and reads each recorded step once (numpy
per chunk of steps; Python only for steps that add a wait edge or in which a gridlocked agent moved, and the cycle
search then starts from the agents whose edges changed), so the studio can run it after every recorded frame. It
keeps a checkpoint of its state every ``CHECKPOINT_EVERY`` steps, so going back (a branch truncates the
recording) replays at most that many steps. docs/gridlock.md has the figures and the default city's lock-up.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from core.base.codes import ACTION_INDEX

#: K: how many steps every agent of a gridlock must have stood still before it is flagged. On the default city
#: (docs/gridlock.md has the counts) the mutual waits that resolve themselves (a CollidingClose coin flip lets one
#: agent go) all but once do so within 38 steps: K = 40 flags the waits that never resolve, and none of the short
#: waits at busy intersections.
DEFAULT_STILL_STEPS = 40
#: the detector keeps its state every this many steps (rewinding replays at most this many steps)
CHECKPOINT_EVERY = 128
#: recorded steps read from the episode at once
_CHUNK = 256
_STOP = ACTION_INDEX["Stop"]


@dataclass(frozen=True)
class WaitLink:
    """``agent`` waits on ``waits_on``: it decided Stop during ``step`` by clause ``clause`` (an id of the
    episode's ``meta.clauses``) with ``waits_on`` bound to one of the clause's variables; ``witness`` is that
    step's recorded binding of every variable (-1: unbound)."""

    agent: int
    waits_on: int
    clause: int
    step: int
    witness: tuple[int, ...] = ()


@dataclass
class BlockedAgent:
    """An agent stuck behind a gridlock from step ``joined`` (until it moved during step ``left``, None: never)."""

    link: WaitLink
    joined: int
    left: int | None = None

    @property
    def agent(self) -> int:
        return self.link.agent


@dataclass
class Gridlock:
    """A set of agents that wait on one another (see the module docstring).

    ``step``: the step during which it was detected (the timeline marker's step). ``since``: the state from which
    every cycle agent has stood still. ``cycle``: its agents, each followed by the one it waits on where the
    cycle allows (``links`` gives each agent's edge into the cycle). ``end``: the step during which a cycle agent
    moved again, None while it lasts. The gridlock is shown at states ``step`` .. ``end`` (or the newest).
    """

    step: int
    since: int
    cycle: tuple[int, ...]
    links: tuple[WaitLink, ...]
    blocked: list[BlockedAgent] = field(default_factory=list)
    end: int | None = None

    def active_at(self, state: int) -> bool:
        return self.step <= state and (self.end is None or state <= self.end)

    def blocked_at(self, state: int) -> list[BlockedAgent]:
        """The agents stuck behind the cycle at ``state``."""
        return [b for b in self.blocked if b.joined <= state and (b.left is None or state <= b.left)]

    def agents_at(self, state: int) -> tuple[int, ...]:
        """Cycle agents, then the agents stuck behind it at ``state``."""
        return self.cycle + tuple(b.agent for b in self.blocked_at(state))

    def clauses(self) -> tuple[int, ...]:
        """The distinct clause ids linking the cycle, in cycle order."""
        return tuple(dict.fromkeys(link.clause for link in self.links))

    def to_dict(self, names: Sequence[str] | None = None, clauses: Sequence[Mapping[str, Any]] | None = None,
                state: int | None = None) -> dict[str, Any]:
        """Plain, JSON-ready description (agent names and clause labels when given)."""
        def who(a: int) -> Any:
            return names[a] if names is not None and 0 <= a < len(names) else a

        def link(lk: WaitLink) -> dict[str, Any]:
            return {"agent": who(lk.agent), "waits_on": who(lk.waits_on), "clause": lk.clause,
                    "label": clause_label(lk.clause, clauses), "step": lk.step}

        blocked = self.blocked if state is None else self.blocked_at(state)
        return {"step": self.step, "since": self.since, "end": self.end,
                "cycle": [who(a) for a in self.cycle], "links": [link(lk) for lk in self.links],
                "blocked": [dict(link(b.link), joined=b.joined, left=b.left) for b in blocked]}


def clause_label(clause: int, clauses: Sequence[Mapping[str, Any]] | None) -> str:
    """``Stop#7`` for clause id 7 of an episode's ``meta.clauses`` (``clause 7`` when unknown)."""
    for c in clauses or ():
        if c.get("id") == clause and c.get("label"):
            return str(c["label"])
    return f"clause {clause}"


def summary(g: Gridlock, names: Sequence[str], clauses: Sequence[Mapping[str, Any]] | None = None,
            state: int | None = None) -> str:
    """One line for the timeline, the status bar and the CLI."""
    waits = ", ".join(f"{names[lk.agent]} waits on {names[lk.waits_on]} ({clause_label(lk.clause, clauses)})"
                      for lk in g.links)
    behind = len(g.blocked_at(state) if state is not None else [b for b in g.blocked if b.left is None])
    more = f"; {behind} more stuck behind" if behind else ""
    return f"Gridlock of {len(g.cycle)} agents, still since step {g.since}: {waits}{more}"


@dataclass
class _State:
    still_since: np.ndarray     # int64 [N] state from which the agent has not moved
    edge_step: np.ndarray       # int64 [N] step of the wait edge (-1: none)
    edge_clause: np.ndarray     # int32 [N]
    edge_w: np.ndarray          # int32 [N, V] witnesses that stood still at edge_step (-1: none)
    edge_raw: np.ndarray        # int32 [N, V] the recorded witness row of edge_step
    member: np.ndarray          # int32 [N] index of the live gridlock the agent is part of (-1: none)
    graph: np.ndarray           # int32 [N, V] the wait graph of the last step scanned (-1: no edge)
    gridlocks: list[Gridlock]

    def snapshot(self) -> "_State":
        """An independent copy for a checkpoint. A gridlock that ended never changes again, so it is shared;
        live ones (their ``end`` and blocked list still change) are copied."""
        def live_copy(g: Gridlock) -> Gridlock:
            return replace(g, blocked=[replace(b) for b in g.blocked])

        return _State(self.still_since.copy(), self.edge_step.copy(), self.edge_clause.copy(), self.edge_w.copy(),
                      self.edge_raw.copy(), self.member.copy(), self.graph.copy(),
                      [g if g.end is not None else live_copy(g) for g in self.gridlocks])


class GridlockDetector:
    """Finds gridlocks in a recorded episode, incrementally (see the module docstring).

    ``update(episode)`` reads the steps recorded since the last call and returns the gridlocks detected in them;
    ``gridlocks`` lists every gridlock found so far (the live ones have ``end`` None). Reading an episode that was
    cut and re-recorded: call ``rewind(episode, k)`` with the first step that may have changed (or ``reset()``).
    """

    def __init__(self, still_steps: int = DEFAULT_STILL_STEPS) -> None:
        if isinstance(still_steps, bool) or not isinstance(still_steps, (int, np.integer)) or still_steps < 1:
            raise ValueError(f"still_steps (K) must be an integer >= 1, got {still_steps!r}")
        self.still_steps = int(still_steps)
        self.reset()

    def reset(self) -> None:
        self.scanned = 0
        self._s: _State | None = None
        self._checkpoints: dict[int, _State] = {}

    @property
    def gridlocks(self) -> list[Gridlock]:
        return [] if self._s is None else self._s.gridlocks

    def active_at(self, state: int) -> list[Gridlock]:
        """The gridlocks shown at ``state`` (detected at or before it, not ended before it)."""
        return [g for g in self.gridlocks if g.active_at(state)]

    # ---- scanning ---------------------------------------------------------------------------------------------
    def update(self, episode, stop: int | None = None) -> list[Gridlock]:
        """Scan steps ``scanned .. stop-1`` (default: every recorded step whose next state is recorded too)."""
        last = min(episode.num_steps, len(episode.array("positions")) - 1)   # step k needs state k+1
        stop = last if stop is None else min(int(stop), last)
        if self._s is None:
            self._start(episode)
        s = self._s
        assert s is not None
        before = len(s.gridlocks)
        k = self.scanned
        while k < stop:
            hi = min(stop, k + _CHUNK, (k // CHECKPOINT_EVERY + 1) * CHECKPOINT_EVERY)
            self._chunk(episode, k, hi)
            k = self.scanned = hi
            if k % CHECKPOINT_EVERY == 0:
                self._checkpoints[k] = s.snapshot()
        return s.gridlocks[before:]

    def rewind(self, episode, k: int) -> None:
        """Forget everything from step ``k`` on (the recording was cut there and may differ afterwards): restore
        the nearest checkpoint at or before ``k`` and scan up to ``k`` again."""
        k = max(int(k), 0)
        if k >= self.scanned:
            return
        base = max((c for c in self._checkpoints if c <= k), default=None)
        if base is None:
            self.reset()
        else:
            self._s = self._checkpoints[base].snapshot()
            self.scanned = base
            self._checkpoints = {c: st for c, st in self._checkpoints.items() if c <= base}
        self.update(episode, k)

    def _start(self, episode) -> None:
        shape = episode.array("witness").shape
        n, v = int(shape[1]), int(shape[2]) if len(shape) == 3 and shape[2] > 0 else 1
        self._s = _State(still_since=np.zeros(n, np.int64), edge_step=np.full(n, -1, np.int64),
                         edge_clause=np.full(n, -1, np.int32), edge_w=np.full((n, v), -1, np.int32),
                         edge_raw=np.full((n, v), -1, np.int32), member=np.full(n, -1, np.int32),
                         graph=np.full((n, v), -1, np.int32), gridlocks=[])
        self._checkpoints[0] = self._s.snapshot()

    def _chunk(self, episode, k: int, hi: int) -> None:
        """Steps k .. hi-1. The per-agent counters and the wait graph of every step are computed for the whole
        chunk with numpy; Python only visits the steps whose graph changed or in which a gridlocked agent moved."""
        s = self._s
        assert s is not None
        n, v = s.edge_w.shape
        c = hi - k
        rows = np.arange(c)
        steps = k + rows
        pos = np.asarray(episode.array("positions")[k: hi + 1])
        moved = np.any(pos[1:] != pos[:-1], axis=2)                                       # [c, N]
        fired = np.asarray(episode.array("fired")[k:hi])
        rule_stop = (np.asarray(episode.array("decided")[k:hi]) == _STOP) & (fired >= 0) & ~moved
        wit = np.asarray(episode.array("witness")[k:hi])
        if wit.shape != (c, n, v):   # a file recorded without witness variables: no agent waits on another
            wit = np.full((c, n, v), -1, np.int32)
        ok = (wit >= 0) & (wit != np.arange(n)[None, :, None]) & rule_stop[:, :, None]
        ok &= ~moved[rows[:, None, None], np.where(ok, wit, 0)]                            # the witness stood still
        has = ok.any(axis=2)
        # still_since / edge_step only grow: running maxima over the chunk
        ss = np.maximum(np.maximum.accumulate(np.where(moved, steps[:, None] + 1, -1), axis=0), s.still_since)
        es = np.maximum(np.maximum.accumulate(np.where(has, steps[:, None], -1), axis=0), s.edge_step)
        inside = es >= k
        src = np.where(inside, es - k, 0)
        ew = np.where(inside[:, :, None], np.where(ok, wit, -1)[src, np.arange(n)[None, :]], s.edge_w[None])
        cand = rule_stop & (ss <= steps[:, None] + 1 - self.still_steps) & (es >= ss)
        wc = np.where(ew >= 0, ew, 0)
        keep = (ew >= 0) & cand[rows[:, None, None], wc] & (ss[rows[:, None, None], wc] <= es[:, :, None])
        graph = np.where(keep & cand[:, :, None], ew, -1)                                  # [c, N, V]
        # only a step that adds a wait edge can make a new cycle or a new agent stuck behind one (removing edges
        # cannot), so the others are skipped unless a gridlock ends (its agents are free to form new ones)
        prev = np.concatenate([s.graph[None], graph[:-1]])
        added = np.any((graph >= 0) & (graph != prev), axis=(1, 2))
        any_moved = moved.any(axis=1)

        def edge(j: int, a: int) -> tuple[int, int, tuple[int, ...]]:
            """(clause, step, recorded witness row) of a's wait edge at step k+j."""
            e = int(es[j, a])
            if e >= k:
                return int(fired[e - k, a]), e, tuple(int(x) for x in wit[e - k, a])
            return int(s.edge_clause[a]), e, tuple(int(x) for x in s.edge_raw[a])

        live = bool((s.member >= 0).any())
        for j in map(int, np.flatnonzero(added | any_moved)):
            freed = False
            if any_moved[j] and live:
                for a in np.flatnonzero(moved[j] & (s.member >= 0)):
                    freed |= self._moved(int(a), k + j)
            if added[j] or freed:   # after a gridlock ended any cycle may be new, else only through changed rows
                roots = None if freed else np.flatnonzero(((graph[j] >= 0) & (graph[j] != prev[j])).any(axis=1))
                self._link(k + j, graph[j], partial(edge, j), ss[j], roots)
            live = bool((s.member >= 0).any())
        # the state after step hi-1
        last = c - 1
        new = np.flatnonzero(es[last] >= k)
        s.edge_clause[new] = fired[es[last, new] - k, new]
        s.edge_raw[new] = wit[es[last, new] - k, new]
        s.still_since, s.edge_step, s.edge_w, s.graph = ss[last].copy(), es[last].copy(), ew[last].copy(), \
            graph[last].copy()

    def _moved(self, a: int, k: int) -> bool:
        """Agent ``a``, part of a live gridlock, moved during step k: a cycle agent ends the gridlock (its agents
        are free to move; returns True), an agent stuck behind it leaves it."""
        s = self._s
        assert s is not None
        gi = int(s.member[a])
        g = s.gridlocks[gi]
        if a in g.cycle:
            g.end = k
            for b in g.blocked:
                if b.left is None:
                    b.left = k
            s.member[s.member == gi] = -1
            return True
        for b in g.blocked:
            if b.agent == a and b.left is None:
                b.left = k
        s.member[a] = -1
        return False

    def _link(self, k: int, graph: np.ndarray, edge: Callable[[int], tuple[int, int, tuple[int, ...]]],
              still_since: np.ndarray, roots: np.ndarray | None) -> None:
        """Turn the wait graph of step k (``graph`` [N, V]: the agents each agent waits on, -1: none; ``edge(a)``:
        a's clause, step and witness row) into gridlocks: new cycles, agents joining a live one. A new cycle
        contains a new edge, so only cycles through the agents ``roots`` whose edges changed are looked for (None:
        all). An agent is part of one gridlock at most: a cycle sharing agents with live gridlocks joins the one of
        its lowest-numbered such agent."""
        s = self._s
        assert s is not None
        n = len(graph)
        src = np.repeat(np.arange(n), graph.shape[1])
        dst = graph.ravel()
        keep = dst >= 0
        src, dst = src[keep], dst[keep]
        if not len(src):
            return

        def link(a: int, ok: Callable[[int], bool]) -> WaitLink:
            target = next(int(x) for x in graph[a] if x >= 0 and ok(int(x)))
            clause, step, raw = edge(a)
            return WaitLink(a, target, clause, step, raw)

        for comp in _cycles(graph, roots):
            members = set(comp)
            owners = s.member[comp]
            if (owners >= 0).all():
                continue    # a cycle of a live gridlock (or one joining two: its agents stay where they are)
            if (owners < 0).all():
                order = _cycle_order(sorted(members), graph)
                s.gridlocks.append(Gridlock(step=k, since=int(still_since[order].max()), cycle=tuple(order),
                                            links=tuple(link(a, members.__contains__) for a in order)))
                s.member[order] = len(s.gridlocks) - 1
                continue
            gi = int(owners[owners >= 0][0])
            for a in sorted(members):
                if s.member[a] < 0:
                    # B023: link() calls the test at once, while members and gi are this iteration's
                    s.gridlocks[gi].blocked.append(BlockedAgent(
                        link(a, lambda x: x in members or s.member[x] == gi), k))  # noqa: B023
                    s.member[a] = gi
        # agents whose wait edges lead into a gridlock are stuck behind it (breadth first, one round per hop)
        while True:
            into = (s.member[dst] >= 0) & (s.member[src] < 0)
            if not into.any():
                return
            joined = [link(p, lambda x: s.member[x] >= 0) for p in dict.fromkeys(int(a) for a in src[into])]
            for lk in joined:
                gi = int(s.member[lk.waits_on])
                s.gridlocks[gi].blocked.append(BlockedAgent(lk, k))
            for lk in joined:
                s.member[lk.agent] = s.member[lk.waits_on]


def _cycles(graph: np.ndarray, roots: np.ndarray | None = None) -> list[list[int]]:
    """The strongly connected components of >= 2 agents of the wait graph (``graph`` [N, V]: the agents each agent
    waits on, -1: none) that contain one of ``roots`` (None: any), each sorted, ordered by their lowest agent.
    Agents without an edge in or out cannot be on a cycle: they are peeled off with numpy first (a queue behind a
    stopped agent goes entirely); the search (Tarjan) then runs in Python from the roots over what is left."""
    n = len(graph)
    alive = graph >= 0
    count = int(alive.sum())
    while count:
        has_in = np.zeros(n, bool)
        has_in[graph[alive]] = True
        ok = alive.any(axis=1) & has_in
        alive &= ok[:, None] & ok[np.where(alive, graph, 0)]
        left = int(alive.sum())
        if left == count:
            break
        count = left
    if not count:
        return []
    core = np.where(alive, graph, -1).tolist()
    starts = np.flatnonzero(alive.any(axis=1)) if roots is None else [r for r in roots if alive[r].any()]
    if not len(starts):
        return []
    comps = _tarjan(lambda v: [x for x in core[v] if x >= 0], [int(r) for r in starts])
    if roots is not None:
        keep = {int(r) for r in roots}
        comps = [c for c in comps if keep.intersection(c)]
    return sorted(comps, key=lambda c: c[0])


def _tarjan(succ: Callable[[int], list[int]], starts: Sequence[int]) -> list[list[int]]:
    """Strongly connected components of >= 2 nodes reachable from ``starts`` (Tarjan, iterative; ``succ(v)``: the
    nodes v has an edge to)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in starts:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on.add(v)
            nxt = succ(v)
            if i < len(nxt):
                work.append((v, i + 1))
                x = nxt[i]
                if x not in index:
                    work.append((x, 0))
                elif x in on:
                    low[v] = min(low[v], index[x])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) >= 2:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def _cycle_order(comp: list[int], graph: np.ndarray) -> list[int]:
    """The component's agents starting at the lowest index, each followed by the agent it waits on while that
    walk finds new ones; the rest (a component can hold several cycles) after it."""
    members = set(comp)
    order = [min(comp)]
    seen = set(order)
    while True:
        nxt = next((int(x) for x in graph[order[-1]] if x in members), None)
        if nxt is None or nxt in seen:
            break
        order.append(nxt)
        seen.add(nxt)
    return order + sorted(members - seen)


def find_gridlocks(episode, still_steps: int = DEFAULT_STILL_STEPS) -> list[Gridlock]:
    """Every gridlock of a whole recorded episode (an episode file or a live buffer), in detection order."""
    det = GridlockDetector(still_steps)
    det.update(episode)
    return det.gridlocks


_DETECTORS: "weakref.WeakKeyDictionary[Any, GridlockDetector]" = weakref.WeakKeyDictionary()


def detector_for(episode, still_steps: int = DEFAULT_STILL_STEPS) -> GridlockDetector:
    """The shared detector of a (live or loaded) episode object: what the timeline marker kind and the studio
    read, so one recording is scanned once. Not updated here; call ``update``/``rewind`` on it."""
    try:
        det = _DETECTORS.get(episode)
    except TypeError:   # an episode-like object that cannot be weakly referenced: not shared
        return GridlockDetector(still_steps)
    if det is None or det.still_steps != still_steps:
        det = GridlockDetector(still_steps)
        _DETECTORS[episode] = det
    return det
