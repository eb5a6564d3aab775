"""What the map view draws for state k of an episode, as plain arrays (no Qt).

Why: "the view shows exactly the recorded state" is tested here and in the GUI test against the same data, and
the map view stays a thin painter: it turns a :class:`MapScene` into one scatter batch, a few path curves and a
rectangle, without reading the episode itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np

from core.sim.episode import FIRED_FORCED
from core.view.colouring import Colouring, colour_by, colour_context
from core.view.overrides import overrides_at

PathMode = Literal["all", "selected", "none"]


@dataclass(frozen=True)
class PlannedPaths:
    """Remaining planned paths of several agents in one array: path ``i`` (agent ``agents[i]``) is
    ``cells[ends[i] - lengths[i]:ends[i]]``. What the map draws, without one small array per agent."""

    agents: np.ndarray   # int64 [P]
    cells: np.ndarray    # int32 [M, 2], every path's cells one after the other
    ends: np.ndarray     # int64 [P], cumulative lengths

    @cached_property
    def lengths(self) -> np.ndarray:
        lens = self.ends.copy()
        lens[1:] -= self.ends[:-1]
        return lens

    def items(self) -> tuple[tuple[int, np.ndarray], ...]:
        """(agent, cells [L, 2]) per path (views of ``cells``): the shape of :attr:`MapScene.paths`."""
        starts = (self.ends - self.lengths).tolist()
        cells = self.cells
        return tuple((a, cells[s:e]) for a, s, e in zip(self.agents.tolist(), starts, self.ends.tolist()))

    def pick(self, which) -> tuple[np.ndarray, np.ndarray]:
        """(cells [M', 2], cumulative lengths) of the paths ``which`` (indices into this set), in that order."""
        which = np.asarray(which, np.int64)
        lens = self.lengths[which]
        return np.take(self.cells, _ranges(self.ends[which] - lens, lens), axis=0), np.cumsum(lens)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + lengths[i] - 1`` of every i, one after the other."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    before = np.cumsum(lengths) - lengths
    return np.repeat(starts - before, lengths) + np.arange(total, dtype=np.int64)


@dataclass(frozen=True)
class MapScene:
    """Everything drawn for one state. Coordinates are cell (row, col); the view centres glyphs in cells."""

    step: int
    positions: np.ndarray            # int32 [N, 2]
    headings: np.ndarray             # int8 [N]
    kinds: np.ndarray                # int8 [N]
    names: tuple[str, ...]
    colouring: Colouring
    goals: np.ndarray | None         # int32 [N, 2]
    planned: PlannedPaths                        # the remaining planned paths drawn, in one array
    selected: int | None
    fov: tuple[int, int, int, int] | None        # inclusive (r0, r1, c0, c1) of the selected agent's view
    agents: object = None                        # the AgentTable of the state (icon art needs concepts)
    forced: np.ndarray | None = None             # bool [N]: the action of this state is forced by the user

    @cached_property
    def paths(self) -> tuple[tuple[int, np.ndarray], ...]:
        """(agent, remaining path cells [L, 2]) per drawn path (made when first read: the map draws ``planned``)."""
        return self.planned.items()

    @property
    def forced_agents(self) -> np.ndarray:
        """Indices of the agents whose action at this state is forced (an outline on the map)."""
        return np.zeros(0, np.int64) if self.forced is None else np.flatnonzero(self.forced)

    @property
    def rgb(self) -> np.ndarray:
        return self.colouring.rgb()


def fov_box(grounder, position, heading) -> tuple[int, int, int, int] | None:
    """The selected agent's field of view, from the logic core's own crop rule (docs/reference.md#field-of-view)."""
    if grounder is None:
        return None
    box = grounder.fov_boxes(np.asarray([position], np.int64), np.asarray([heading], np.int64))[0]
    r0, r1, c0, c1 = (int(v) for v in box)
    return r0, r1, c0, c1


def build_scene(episode, k: int, *, scheme: str = "Type", selected: int | None = None,
                paths: PathMode = "all", goals: bool = True, grounder=None,
                clause_labels=None) -> MapScene:
    """The scene of state ``k`` (0..num_steps) of an episode view."""
    snap = episode.snapshot(k)
    col = colour_by(scheme, colour_context(episode, k, clause_labels, scheme=scheme))
    n = len(snap)
    if selected is not None and not 0 <= selected < n:
        selected = None
    which: list[int] = []
    if paths == "all":
        which = list(range(n))
    elif paths == "selected" and selected is not None:
        which = [selected]
    planned = planned_paths(episode, k, which)
    fov = None
    if selected is not None:
        fov = fov_box(grounder, snap.positions[selected], snap.headings[selected])
    return MapScene(k, snap.positions, snap.headings, np.asarray(snap.agents.kinds), tuple(snap.agents.names),
                    col, episode.goals(k) if goals else None, planned, selected, fov, snap.agents,
                    forced_at(episode, k))


def remaining_paths(episode, k: int, agents: list[int]) -> tuple[tuple[int, np.ndarray], ...]:
    """(agent, remaining planned cells [L, 2]) of ``agents`` at state ``k``: the same as
    ``episode.remaining_path(k, i)`` for each, with the plan lookups done once over all agents (a frame draws every
    agent's path; per-agent lookups were a good part of a 200-agent frame)."""
    return planned_paths(episode, k, agents).items() if agents else ()


def planned_paths(episode, k: int, agents: list[int]) -> PlannedPaths:
    """The remaining planned paths of ``agents`` at state ``k`` in one array (one gather from the recorded plans,
    not one slice per agent)."""
    sel = np.asarray(agents, np.int64)
    if not len(sel):
        return PlannedPaths(sel, np.zeros((0, 2), np.int32), np.zeros(0, np.int64))
    pid = np.asarray(episode.array("plan_id")[k])[sel]
    idx = np.asarray(episode.array("path_index")[k], np.int64)[sel]
    off = np.asarray(episode.array("plan_offsets"), np.int64)
    starts = off[pid] + idx
    lens = np.maximum(off[pid + 1] - starts, 0)
    # np.take, not fancy indexing: far faster for rows of a 2-D array
    cells = np.take(np.asarray(episode.array("plan_cells")), _ranges(starts, lens), axis=0).astype(np.int32)
    return PlannedPaths(sel, cells, np.cumsum(lens))


def forced_at(episode, k: int) -> np.ndarray:
    """bool [N]: agents whose decision of state ``k`` is forced by an override, not derived by the rules — the
    recorded ones (fired clause = FIRED_FORCED) before the newest state; at the newest state, those a user
    intervention will force when the simulation steps (the same agents the inspector calls forced)."""
    n = len(episode.agents)
    over = overrides_at(episode.meta, k, n) >= 0
    if k < episode.num_steps:
        over |= np.asarray(episode.step_record(k).fired) == FIRED_FORCED
    return over


def nearest_agent(positions: np.ndarray, row: float, col: float, radius: float) -> int | None:
    """Index of the agent whose cell centre is nearest to (row, col) within ``radius`` cells, else None."""
    if len(positions) == 0:
        return None
    d2 = (positions[:, 0] + 0.5 - row) ** 2 + (positions[:, 1] + 0.5 - col) ** 2
    i = int(np.argmin(d2))
    return i if d2[i] <= radius * radius else None
