"""Per-step frames: how a simulation running in one thread hands its recorded history to another.

Why: :class:`~core.sim.simulation.Simulation` and its :class:`~core.sim.episode.EpisodeBuffer` are not
thread-safe and the buffer's arrays are reallocated as it grows. The studio's worker therefore copies what each
step appended into an immutable :class:`StepFrame` (a few small arrays) and sends that; the GUI replays frames
into its *own* ``EpisodeBuffer`` with :func:`apply_frame`, which then has exactly the worker's content (same
plan ids, same arrays) and serves every read (timeline, inspector, statistics, saving) without locks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from core.base.world import AgentTable
from core.sim.episode import STATE_FIELDS, STEP_FIELDS, CoinOutcomes, EpisodeBuffer, EpisodeView


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


def _frozen_coins(coins: CoinOutcomes | None) -> CoinOutcomes | None:
    if coins is None:
        return None
    return {name: (_frozen(pairs), _frozen(outcomes)) for name, (pairs, outcomes) in coins.items()}


@dataclass(frozen=True)
class StepFrame:
    """What one step appended: new plans, the step record (None for the initial state) and the new state.

    ``state_index`` is the index of the appended state (0 for the initial frame). ``agents`` is the (immutable)
    agent table of that state. ``seconds`` is the simulation time of the step. ``coins`` are the step's recorded
    CollidingClose coins (:meth:`EpisodeView.coins <core.sim.episode.EpisodeView.coins>`; None: not recorded).
    """

    state_index: int
    plans: tuple[tuple[int, np.ndarray], ...]
    step: Mapping[str, np.ndarray] | None
    state: Mapping[str, np.ndarray]
    agents: AgentTable
    seconds: float = 0.0
    coins: CoinOutcomes | None = None

    @property
    def positions(self) -> np.ndarray:
        return self.state["positions"]


class FrameTap:
    """Reads the newest additions of a buffer as frames (used in the thread that owns the buffer)."""

    def __init__(self, buffer: EpisodeBuffer) -> None:
        self.buffer = buffer
        self.plans_sent = 0

    def rewind(self, num_steps: int) -> None:
        """After ``buffer.truncate(num_steps)``: continue after the plans still in the buffer."""
        self.plans_sent = len(self.buffer.array("plan_agent"))

    def frame(self, agents: AgentTable, seconds: float = 0.0) -> StepFrame:
        """The frame for the newest state (and the step that led to it)."""
        buf = self.buffer
        k = buf.num_states - 1
        off = buf.array("plan_offsets")
        cells = buf.array("plan_cells")
        pagent = buf.array("plan_agent")
        plans = tuple((int(pagent[p]), _frozen(cells[int(off[p]):int(off[p + 1])]))
                      for p in range(self.plans_sent, len(pagent)))
        self.plans_sent = len(pagent)
        state = {f: _frozen(buf.array(f)[k]) for f in STATE_FIELDS}
        step = coins = None
        if k > 0:
            step = {f: _frozen(buf.array(f)[k - 1]) for f in STEP_FIELDS}
            coins = _frozen_coins(buf.coins(k - 1))
        return StepFrame(k, plans, step, state, agents, float(seconds), coins)

    def initial(self, agents: AgentTable) -> StepFrame:
        self.plans_sent = 0
        return self.frame(agents)


def apply_frame(target: EpisodeBuffer, frame: StepFrame) -> None:
    """Append ``frame`` to ``target`` (which must hold exactly the states before it)."""
    if frame.state_index != target.num_states:
        raise ValueError(f"frame for state {frame.state_index} does not follow the {target.num_states} "
                         f"recorded states")
    for agent, cells in frame.plans:
        target.add_plan(agent, cells)
    if frame.step is not None:
        s = frame.step
        target.append_step(s["holds"], s["decided"], s["realised"], s["fired"], s["witness"], s["reached"],
                           frame.coins)
    st = frame.state
    target.append_state(st["positions"], st["headings"], st["goals"], st["path_index"], st["plan_id"],
                        frame.agents)


def copy_episode(view: EpisodeView, meta: Mapping[str, Any] | None = None) -> EpisodeBuffer:
    """A growable in-memory copy of any episode view (e.g. a loaded file the studio continues)."""
    wit = view.array("witness")
    buf = EpisodeBuffer(view.agents, dict(meta if meta is not None else view.meta),
                        witness_vars=int(wit.shape[2]) if wit.ndim == 3 else 1)
    off = np.asarray(view.array("plan_offsets"))
    cells = np.asarray(view.array("plan_cells"))
    pagent = np.asarray(view.array("plan_agent"))
    pstep = np.asarray(view.array("plan_step"))
    order = 0
    for k in range(view.num_states):
        while order < len(pagent) and int(pstep[order]) <= k:
            buf.add_plan(int(pagent[order]), cells[int(off[order]):int(off[order + 1])])
            order += 1
        if k > 0:
            r = view.step_record(k - 1)
            buf.append_step(r.holds, r.decided, r.realised, r.fired, r.witness, r.reached, view.coins(k - 1))
        buf.append_state(view.array("positions")[k], view.array("headings")[k], view.array("goals")[k],
                         view.array("path_index")[k], view.array("plan_id")[k], view.agents_at(k))
    return buf
