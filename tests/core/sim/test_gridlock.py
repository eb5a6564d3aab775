"""Gridlock detection (core/sim/gridlock.py): the definition on hand-made recordings, real lock-ups built with the
scene API, cities that are busy but not locked, incremental scanning and rewinding, and the timeline marker kind."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from core.base.codes import ACTION_INDEX, Action
from core.sim.gridlock import DEFAULT_STILL_STEPS, GridlockDetector, detector_for, find_gridlocks, summary
from core.view.gridlock import describe
from tests.support.gridlock import lock_scene

STOP, NORMAL = ACTION_INDEX["Stop"], ACTION_INDEX["Normal"]


class Recording:
    """An episode-like object over plain arrays (what the detector reads: positions, decided, fired, witness)."""

    def __init__(self, positions, decided, fired, witness, names=None):
        self._a = {"positions": np.asarray(positions, np.int16), "decided": np.asarray(decided, np.int8),
                   "fired": np.asarray(fired, np.int32), "witness": np.asarray(witness, np.int32)}
        n = self._a["positions"].shape[1]
        self.agents = SimpleNamespace(names=tuple(names or (f"A{i}" for i in range(n))))
        self.meta = {"clauses": [{"id": 0, "label": "Stop#1", "text": "Stop(X) :- Near(X, Y)."},
                                 {"id": 1, "label": "Stop#2", "text": "Stop(X) :- Ahead(Y, X)."}]}

    @property
    def num_steps(self):
        return len(self._a["decided"])

    @property
    def num_states(self):
        return self.num_steps + 1

    def array(self, name):
        return self._a[name]


def recording(t: int, n: int, waits: dict[int, int], *, moves=(), stops=None, flicker=None) -> Recording:
    """``t`` steps of ``n`` agents standing on cells (i, 0). ``waits`` {a: b}: a decides Stop by clause 0 with
    witness b every step (agents not in it decide Normal); ``moves`` (step, agent): the agent moves one cell in that
    step; ``stops``: agents deciding Stop with no witness; ``flicker`` (a, c): on odd steps a's witness is c."""
    pos = np.zeros((t + 1, n, 2), np.int16)
    pos[:, :, 0] = np.arange(n)
    for k, a in moves:
        pos[k + 1:, a, 1] += 1
    dec = np.full((t, n), NORMAL, np.int8)
    fired = np.full((t, n), -1, np.int32)
    wit = np.full((t, n, 2), -1, np.int32)
    for a, b in waits.items():
        dec[:, a], fired[:, a], wit[:, a, 0] = STOP, 0, b
    for a in stops or ():
        dec[:, a], fired[:, a] = STOP, 1
    if flicker:
        a, c = flicker
        wit[1::2, a, 0] = c
    for k, a in moves:   # an agent that moves in a step did not decide Stop in it
        dec[k, a], fired[k, a], wit[k, a] = NORMAL, -1, -1
    return Recording(pos, dec, fired, wit)


# ---- the definition on hand-made recordings ---------------------------------------------------------------------

def test_a_cycle_of_still_agents_is_flagged_once_they_stood_still_for_k_steps():
    ep = recording(20, 4, {0: 1, 1: 2, 2: 0, 3: 0})
    (g,) = find_gridlocks(ep, still_steps=5)
    assert (g.step, g.since, g.end) == (4, 0, None)          # state 5 is the first after 5 still steps
    assert g.cycle == (0, 1, 2)
    assert [(lk.agent, lk.waits_on, lk.clause) for lk in g.links] == [(0, 1, 0), (1, 2, 0), (2, 0, 0)]
    assert [b.agent for b in g.blocked] == [3] and g.blocked[0].link.waits_on == 0
    assert g.agents_at(19) == (0, 1, 2, 3) and g.active_at(4) and not g.active_at(3)
    (g7,) = find_gridlocks(ep, still_steps=7)                 # K is a parameter
    assert g7.step == 6


def test_a_chain_that_ends_in_an_agent_not_waiting_is_not_a_gridlock():
    # 0 -> 1 -> 2; agent 2 stands still deciding Stop by a clause without a witness, 3 waits on nobody
    assert find_gridlocks(recording(30, 4, {0: 1, 1: 2}, stops=[2]), still_steps=5) == []
    # the same chain closed by agent 2 waiting on an agent that keeps moving
    moving = recording(30, 4, {0: 1, 1: 2, 2: 3}, moves=[(k, 3) for k in range(30)])
    assert find_gridlocks(moving, still_steps=5) == []


def test_a_cycle_ends_when_one_of_its_agents_moves_and_a_new_one_is_a_new_gridlock():
    ep = recording(40, 3, {0: 1, 1: 0, 2: 0}, moves=[(12, 1)])
    g1, g2 = find_gridlocks(ep, still_steps=5)
    assert (g1.step, g1.end, g1.cycle) == (4, 12, (0, 1))
    assert g1.blocked[0].left == 12                          # the queue is not behind a gridlock any more
    assert not g1.active_at(13) and g1.active_at(12)
    # agent 1 moved during step 12 (still from state 13): a gridlock again after 5 more still steps
    assert (g2.step, g2.since, g2.end, g2.cycle) == (17, 13, None, (0, 1))


def test_a_witness_that_alternates_with_a_passer_by_keeps_the_cycle():
    # agent 0 waits on 1 at even steps and on agent 2 (walking past: it moves every step) at odd ones
    ep = recording(30, 3, {0: 1, 1: 0}, moves=[(k, 2) for k in range(30)], flicker=(0, 2))
    (g,) = find_gridlocks(ep, still_steps=5)
    assert g.step == 4 and g.cycle == (0, 1) and g.links[0].step % 2 == 0
    # a Stop whose only witness moved in that step never makes an edge: 2 -> 0 while 2 moves is no gridlock
    assert find_gridlocks(recording(30, 3, {0: 2, 2: 0}, moves=[(k, 2) for k in range(0, 30, 2)]), 5) == []


def test_bad_k_is_refused():
    for k in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="still_steps"):
            GridlockDetector(k)


# ---- incremental scanning and rewinding ----------------------------------------------------------------------

def random_recording(seed: int, t: int = 400, n: int = 9, v: int = 2) -> Recording:
    """Agents that mostly stand still and wait on random others, so cycles form, break and re-form."""
    rng = np.random.default_rng(seed)
    steps = rng.random((t, n)) < 0.02
    pos = np.zeros((t + 1, n, 2), np.int16)
    pos[1:, :, 1] = np.cumsum(steps, axis=0)
    dec = np.where(steps, NORMAL, np.where(rng.random((t, n)) < 0.9, STOP, NORMAL)).astype(np.int8)
    fired = np.where(dec == STOP, rng.integers(0, 2, (t, n)), -1).astype(np.int32)
    wit = np.where((dec == STOP)[:, :, None], rng.integers(-1, n, (t, n, v)), -1).astype(np.int32)
    # witnesses change rarely (a wait lasts): copy the previous step's most of the time
    for k in range(1, t):
        keep = (rng.random(n) < 0.95) & (dec[k] == STOP) & (dec[k - 1] == STOP)
        wit[k, keep] = wit[k - 1, keep]
        fired[k, keep] = fired[k - 1, keep]
    return Recording(pos, dec, fired, wit)


def as_data(gridlocks):
    return [g.to_dict() for g in gridlocks]


@pytest.mark.parametrize("seed", range(3))
def test_step_by_step_updates_and_rewinds_give_the_whole_file_answer(seed):
    ep = random_recording(seed)
    whole = as_data(find_gridlocks(ep, 6))
    assert whole, "the random recording should contain gridlocks"
    det = GridlockDetector(6)
    for stop in range(0, ep.num_steps + 1, 13):   # a growing recording, read as it grows
        det.update(ep, stop)
    det.update(ep)
    assert as_data(det.gridlocks) == whole
    for k in (ep.num_steps - 3, 300, 129, 128, 5, 0):   # back to any step (checkpoint or not), then on again
        det.rewind(ep, k)
        assert det.scanned == k
        assert as_data(det.gridlocks) == as_data(find_gridlocks(Partial(ep, k), 6))
        det.update(ep)
        assert as_data(det.gridlocks) == whole


def naive_gridlocks(ep, k_still: int) -> list[tuple[int, frozenset, int | None, frozenset]]:
    """The definition of the module docstring step by step in plain Python (no chunks, no skipped steps):
    (detection step, cycle agents, end, agents stuck with it at its end or at the last step)."""
    import networkx as nx

    pos, dec = np.asarray(ep.array("positions")), np.asarray(ep.array("decided"))
    fired, wit = np.asarray(ep.array("fired")), np.asarray(ep.array("witness"))
    t, n = dec.shape
    still = [0] * n
    edge: list = [None] * n
    found: list[dict] = []
    for k in range(t):
        moved = [bool((pos[k + 1, a] != pos[k, a]).any()) for a in range(n)]
        for a in range(n):
            if moved[a]:
                still[a] = k + 1
        for g in found:
            if g["end"] is None and any(moved[a] for a in g["cycle"]):
                g["end"], g["final"] = k, frozenset(g["members"])
                g["members"] = set()
            elif g["end"] is None:
                g["members"] -= {a for a in range(n) if moved[a]}
        stopping = [dec[k, a] == STOP and fired[k, a] >= 0 and not moved[a] for a in range(n)]
        for a in range(n):
            ws = [int(w) for w in wit[k, a] if stopping[a] and 0 <= w != a and not moved[w]]
            if ws:
                edge[a] = (k, ws)
        cand = {a for a in range(n) if stopping[a] and k + 1 - still[a] >= k_still and edge[a] is not None
                and edge[a][0] >= still[a]}
        graph = nx.DiGraph()
        graph.add_nodes_from(cand)
        graph.add_edges_from((a, w) for a in cand for w in edge[a][1] if w in cand and still[w] <= edge[a][0])
        live = [g for g in found if g["end"] is None]
        for comp in nx.strongly_connected_components(graph):
            if len(comp) < 2:
                continue
            # an agent is part of one gridlock at most: a cycle sharing agents with live gridlocks joins the one of
            # its lowest-numbered such agent
            owner = next((g for a in sorted(comp) for g in live if a in g["members"]), None)
            if owner is None:
                found.append({"step": k, "cycle": frozenset(comp), "end": None, "members": set(comp)})
                live.append(found[-1])
            else:
                owner["members"] |= {a for a in comp if not any(a in h["members"] for h in live)}
        grew = True
        while grew:
            grew = False
            for a in graph.nodes:
                g = next((g for g in live for w in graph.successors(a) if w in g["members"]), None)
                if g is not None and not any(a in h["members"] for h in live):
                    g["members"].add(a)
                    grew = True
    return [(g["step"], g["cycle"], g["end"], g.get("final", frozenset(g["members"]))) for g in found]


@pytest.mark.parametrize("seed", range(4))
def test_the_detector_follows_the_definition_step_by_step(seed):
    ep = random_recording(seed, t=300, v=1)      # one witness per agent: "stuck behind which gridlock" is unique
    got = [(g.step, frozenset(g.cycle), g.end,
            frozenset(g.cycle) | {b.agent for b in g.blocked if b.left is None or b.left == g.end})
           for g in find_gridlocks(ep, 6)]
    assert got == naive_gridlocks(ep, 6)
    assert len(got) > 5


def test_rewinding_reads_the_changed_recording():
    ep = recording(40, 2, {0: 1, 1: 0})
    det = detector_for(ep, 5)
    det.update(ep)
    assert len(det.gridlocks) == 1
    ep._a["decided"][10:, 1] = NORMAL          # the recording was cut at 10 and went on differently
    ep._a["fired"][10:, 1] = -1
    det.rewind(ep, 10)
    det.update(ep)
    assert [g.end for g in det.gridlocks] == [None] and det.gridlocks[0].step == 4
    ep._a["decided"][:, 1] = NORMAL
    ep._a["fired"][:, 1] = -1
    det.rewind(ep, 0)
    det.update(ep)
    assert det.gridlocks == []
    assert detector_for(ep, 5) is det and detector_for(ep, 6) is not det


class Partial:
    """The first ``n`` steps of a recording."""

    def __init__(self, ep, n):
        self.ep, self.n = ep, n
        self.agents, self.meta = ep.agents, ep.meta

    @property
    def num_steps(self):
        return self.n

    def array(self, name):
        return self.ep.array(name)[: self.n + 1 if name == "positions" else self.n]


# ---- real simulations (scene API) ---------------------------------------------------------------------------

def check_links_are_recorded(g, ep):
    fired, wit = np.asarray(ep.array("fired")), np.asarray(ep.array("witness"))
    dec = np.asarray(ep.array("decided"))
    for lk in list(g.links) + [b.link for b in g.blocked]:
        assert dec[lk.step, lk.agent] == STOP
        assert fired[lk.step, lk.agent] == lk.clause
        assert lk.waits_on in wit[lk.step, lk.agent] and tuple(wit[lk.step, lk.agent]) == lk.witness


def test_two_cars_that_stop_each_other_are_flagged_with_their_clauses(config):
    from core.sim.scene import SceneAgent, build_simulation

    queued = SceneAgent("car", position=(81, 95), goal=(102, 111), heading="Down", priority=2)
    sim = build_simulation(config, lock_scene(queued), seed=0)
    sim.run(DEFAULT_STILL_STEPS + 15)
    ep = sim.buffer
    (g,) = find_gridlocks(ep)
    names, clauses = ep.agents.names, ep.meta["clauses"]
    assert sorted(names[a] for a in g.cycle) == ["Car_1", "Car_2"] and g.end is None
    pos = np.asarray(ep.array("positions"))
    assert (pos[g.since:, list(g.cycle)] == pos[g.since, list(g.cycle)]).all()    # they never moved again
    assert g.step == g.since + DEFAULT_STILL_STEPS - 1
    labels = {names[lk.agent]: clauses[lk.clause]["text"] for lk in g.links}
    assert "CollidingClose(X, Y)" in labels["Car_1"] and "HigherPri(Y, X)" in labels["Car_2"]
    assert [names[b.agent] for b in g.blocked] == ["Car_3"]                         # the car queued behind
    check_links_are_recorded(g, ep)
    text = "\n".join(describe(g, names, clauses, state=ep.num_steps, program=config.program))
    assert "Car_1 stops by Stop#7 waiting on Car_2" in text and "CollidingClose(X=Car_1, Y=Car_2)" in text
    assert "Stuck behind it" in text and "Car_3 waits on Car_2" in text
    assert summary(g, names, clauses).startswith("Gridlock of 2 agents")


def test_a_queue_behind_an_agent_forced_to_stop_is_not_a_gridlock(config):
    from core.sim.scene import Scene, SceneAgent, build_simulation

    sim = build_simulation(config, Scene((
        SceneAgent("car", position=(75, 95), goal=(102, 111), heading="Down", priority=2),
        SceneAgent("car", position=(70, 95), goal=(102, 111), heading="Down", priority=3))), seed=0)
    for _ in range(DEFAULT_STILL_STEPS + 20):
        sim.step(overrides={0: Action.STOP})
    ep = sim.buffer
    pos = np.asarray(ep.array("positions"))
    assert (pos[DEFAULT_STILL_STEPS:] == pos[-1]).all(), "both cars stood still for K steps"
    assert np.asarray(ep.array("witness"))[-1, 1, 0] == 0, "the second car waits on the first"
    assert find_gridlocks(ep) == []


def test_a_busy_city_with_long_waits_is_not_a_gridlock(config):
    """The default city, seed 0, before it locks up: agents wait 50-100 steps at intersections, nothing is
    flagged."""
    from tests.support.studio import run_sim

    ep = run_sim(config, seed=0, steps=320).buffer
    moved = np.any(np.diff(np.asarray(ep.array("positions")), axis=0) != 0, axis=2)
    longest = max(max(len(run) for run in "".join("x" if m else "." for m in col).split("x"))
                  for col in moved.T)
    assert longest >= 2 * DEFAULT_STILL_STEPS
    assert find_gridlocks(ep) == []


# ---- the timeline marker kind ---------------------------------------------------------------------------------

def test_the_timeline_shows_a_gridlock_marker(config):
    from core.sim.events import MarkerIndex, event_kinds, extract_events
    from core.sim.scene import build_simulation

    assert "gridlock" in event_kinds() and not event_kinds()["gridlock"].per_agent
    sim = build_simulation(config, lock_scene(), seed=0)
    index = MarkerIndex()
    for _ in range(DEFAULT_STILL_STEPS + 10):      # the studio records while playing
        sim.step()
        index.update(sim.buffer)
    marks = [e for e in index.events if e.kind == "gridlock"]
    assert [e.step for e in marks] == [g.step for g in find_gridlocks(sim.buffer)] and len(marks) == 1
    assert "Car_1 waits on Car_2 (Stop#7)" in marks[0].text
    assert [e for e in extract_events(sim.buffer) if e.kind == "gridlock"] == marks
    index.truncate(marks[0].step)                  # a branch before the gridlock: the marker goes ...
    assert [e for e in index.events if e.kind == "gridlock"] == []
    index.update(sim.buffer)                       # ... and comes back when the same steps are recorded again
    assert [e for e in index.events if e.kind == "gridlock"] == marks
