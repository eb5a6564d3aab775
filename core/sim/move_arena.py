"""Every agent's global-move table in one array, so that a step chooses all agents' moves with a few array
operations instead of a Python loop over agents.

Why: a per-agent loop (look up the path's global moves, combine them with the rule decision, decode the move)
would be a large part of a step of a thousand agents. Here a trip's
:func:`~core.sim.movement.path_move_table` is written once into a shared arena (rows = path cells, columns =
move indices), and a step gathers one row per agent and applies :func:`~core.sim.movement.move_choice`'s rule
to all of them at once.

Exactness: the result is :func:`~core.sim.movement.move_choice` agent by agent, including *which* agents draw
from the random generator and how many choices each draw has; the draws themselves are made by the simulator in
agent order, interleaved with new trips in the order one agent at a time would make them
(tests/core/sim/test_move_arena.py compares both).

Columns: a move index of either kind maps to one column — car moves 0..11 (``(speed-1)*4 + heading``) and
pedestrian moves 0..3 (heading) to the same number, Stop (car 12, pedestrian 4) to :data:`STOP_COL`. Both kinds'
move lists are ascending, so "the k-th allowed move" is the k-th set column.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from core.base.codes import Action, Kind
from core.logic.fast import kernels as fast_kernels
from core.sim.movement import CAR_STOP, LOCAL_TABLE, MOVE_DECODE, PED_STOP, path_move_table

#: above this many moving agents the compiled kernel (core/logic/kernels.py) chooses the moves when numba is
#: available (the threshold of the grounder's kernels, core.logic.grounding.grounder.DENSE_PAIR_AGENTS)
KERNEL_AGENTS = 128
#: column of Stop; columns 0..11 are move indices
STOP_COL = 12
N_COLS = 13


def _col(is_car: bool, move: int) -> int:
    return STOP_COL if move == (CAR_STOP if is_car else PED_STOP) else move


def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    local = np.zeros((2, 16, N_COLS), bool)           # [is_car, holds code, column]: movement.LOCAL_TABLE
    heading = np.full((2, N_COLS), -1, np.int8)        # [is_car, column]: heading after the move
    realised = np.full((2, N_COLS), int(Action.STOP), np.int8)
    for is_car, kind in ((False, Kind.PEDESTRIAN), (True, Kind.CAR)):
        for code in range(16):
            for move in LOCAL_TABLE[kind][code]:
                local[int(is_car), code, _col(is_car, move)] = True
        for move, (head, real) in enumerate(MOVE_DECODE[is_car]):
            heading[int(is_car), move] = head
            realised[int(is_car), move] = real
    return local, heading, realised


LOCAL_COLS, HEADING_OF, REALISED_OF = _tables()


@dataclass
class Choice:
    """The outcome of :meth:`MoveArena.choose` for the agents ``agents`` (ascending indices).

    ``col`` is the chosen column (:data:`STOP_COL` = no move) except for the agents in ``draw`` (positions into
    ``agents``), which need ``pool[r]``'s ``rng.integers(npool[r])``-th set column; ``row`` is each agent's
    gathered table row (new path index per move column, -1 = not a global move)."""

    agents: np.ndarray
    col: np.ndarray
    row: np.ndarray
    draw: np.ndarray
    pool: np.ndarray
    npool: np.ndarray


class MoveArena:
    """The global-move tables and cells of every agent's current path, packed into two arrays.

    A new path gets fresh rows at the end (old rows become garbage); when the arena is full the live rows are
    packed to the front, and the capacity doubled while more than half of it is live, so packing is rare and
    bounded by the live rows (a few MB for 1000 agents).
    """

    def __init__(self, is_car: np.ndarray, lane_node_mask: np.ndarray | None, capacity: int = 4096) -> None:
        n = len(is_car)
        self.is_car = np.asarray(is_car, bool)
        self._is_car_i = self.is_car.astype(np.intp)
        self.lane_node_mask = lane_node_mask
        self.moves = np.full((capacity, 12), -1, np.int32)   # new path index per move column 0..11
        self.cells = np.zeros((capacity, 2), np.int32)
        self.start = np.zeros(n, np.intp)
        self.length = np.zeros(n, np.intp)
        self.src: list = [None] * n                          # the path object each agent's rows were made from
        self.used = 0

    # ---- keeping the arena in step with the simulator's paths ---------------------------------------------------
    def sync(self, paths: list[np.ndarray]) -> None:
        """Re-table exactly the agents whose path object changed (new trip, checkpoint restore, scene install)."""
        if len(paths) == len(self.src) and all(map(operator.is_, paths, self.src)):
            return
        for i, (p, q) in enumerate(zip(paths, self.src)):
            if p is not q:
                self.put(i, p)

    def put(self, i: int, path: np.ndarray) -> None:
        """Table agent ``i``'s new ``path``."""
        cells = np.asarray(path, np.int32)
        n = len(cells)
        if self.used + n > len(self.moves):
            self._pack(n)
        s = self.used
        if n:
            table = path_move_table(bool(self.is_car[i]), cells, self.lane_node_mask)
            self.moves[s: s + n, : table.shape[1]] = table
            self.moves[s: s + n, table.shape[1]:] = -1
            self.cells[s: s + n] = cells
        self.start[i], self.length[i], self.src[i] = s, n, path
        self.used = s + n

    def _pack(self, extra: int) -> None:
        live = [i for i in range(len(self.src)) if self.src[i] is not None and self.length[i]]
        idx = (np.concatenate([np.arange(self.start[i], self.start[i] + self.length[i]) for i in live])
               if live else np.zeros(0, np.intp))
        cap = len(self.moves)
        while cap < 2 * (len(idx) + extra):
            cap *= 2
        moves = np.full((cap, 12), -1, np.int32)
        cells = np.zeros((cap, 2), np.int32)
        moves[: len(idx)] = self.moves[idx]
        cells[: len(idx)] = self.cells[idx]
        self.moves, self.cells = moves, cells
        at = 0
        for i in live:
            self.start[i] = at
            at += int(self.length[i])
        self.used = at

    # ---- choosing ---------------------------------------------------------------------------------------------
    def global_moves(self, i: int, k: int) -> dict[int, int]:
        """Agent ``i``'s global moves from path index ``k`` as movement.global_moves gives them."""
        row = self.moves[self.start[i] + k].tolist()
        return {m: j for m, j in enumerate(row[: 12 if self.is_car[i] else 4]) if j >= 0}

    def choose(self, agents: np.ndarray, codes: np.ndarray, path_index: np.ndarray) -> Choice:
        """movement.move_choice for each agent in ``agents`` (holds codes and path indices of all agents)."""
        m = len(agents)
        kern = None
        if m > KERNEL_AGENTS:   # small scenes never import numba nor compile the kernels
            kern = fast_kernels()
        if kern is not None:
            col, row, draw, pool, npool = kern.choose_moves(self.moves, self.start, path_index, agents, codes,
                                                            self._is_car_i, LOCAL_COLS, STOP_COL)
            return Choice(agents, col, row, draw, pool, npool)
        row = self.moves[self.start[agents] + path_index[agents]]         # [M, 12]
        glob = np.zeros((m, N_COLS), bool)
        glob[:, :12] = row >= 0
        local = LOCAL_COLS[self._is_car_i[agents], codes[agents]]        # [M, 13]
        n_local = local.sum(axis=1)
        n_glob = glob.sum(axis=1)
        col = np.full(m, STOP_COL, np.intp)
        single = n_local == 1                                             # one local move: it, if global
        col[single] = local[single].argmax(axis=1)
        few = ~single & (n_glob <= 1)                                     # at most one global move: it
        col[few] = np.where(n_glob[few] == 1, glob[few].argmax(axis=1), STOP_COL)
        rest = ~single & ~few                                             # local ∩ global, else global
        both = local & glob
        pool = np.where(both.any(axis=1)[:, None], both, glob)
        npool = pool.sum(axis=1)
        one = rest & (npool == 1)
        col[one] = pool[one].argmax(axis=1)
        col = np.where(glob[np.arange(m), col], col, STOP_COL)           # Stop or a non-global single local move
        draw = np.flatnonzero(rest & (npool > 1))
        return Choice(agents, col, row, draw, pool, npool)
