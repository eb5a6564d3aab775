"""Turning a rule decision into a concrete move along the agent's planned path
(docs/reference.md#choosing-the-move).

The logic core says which of Slow/Normal/Fast/Stop hold for an agent (its *local* vector); the planned path
says which moves make progress (its *global* vector). This module combines the two exactly like the
reference: a single local choice (Stop) wins, then a single global choice, else the intersection (falling back
to the global set), with a uniform draw among what is left. Keeping it free of simulator state makes the rule
testable on hand-made paths.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.base.codes import HEADING_VECTORS, Action, Kind

#: Move index layout: cars 0..11 = speed_index*4 + heading (speeds 1, 2, 3 cells), 12 = Stop;
#: pedestrians 0..3 = heading (1 cell), 4 = Stop. Same as the reference action vectors.
CAR_STOP = 12
PED_STOP = 4
_SPEED_ACTION = {1: Action.SLOW, 2: Action.NORMAL, 3: Action.FAST}


@dataclass(frozen=True)
class Move:
    """A chosen move: heading -1 and cells 0 means Stop. ``path_index`` is the new index in the trajectory."""

    heading: int
    cells: int
    path_index: int
    realised: Action  # what the move amounts to: Slow/Normal/Fast by cells moved (pedestrians Normal), or Stop

    @property
    def is_stop(self) -> bool:
        return self.cells == 0


def local_moves(kind: Kind, holds: np.ndarray) -> list[int]:
    """Move indices allowed by the rule decision ``holds`` (bool[4] in Action order); empty → Normal
    (docs/reference.md#actions-and-speeds)."""
    out: list[int] = []
    if kind == Kind.CAR:
        for act, base in ((Action.SLOW, 0), (Action.NORMAL, 4), (Action.FAST, 8)):
            if holds[act]:
                out.extend(range(base, base + 4))
        if holds[Action.STOP]:
            out.append(CAR_STOP)
        if not out:
            out = [4, 5, 6, 7]
    else:
        if holds[Action.NORMAL]:
            out.extend(range(4))
        if holds[Action.STOP]:
            out.append(PED_STOP)
        if not out:  # pedestrians have no Slow/Fast actions: such decisions fall back to Normal
            out = [0, 1, 2, 3]
    return out


def decided_action(kind: Kind, holds: np.ndarray) -> Action:
    """The decision as one label: first of Slow, Normal, Fast, Stop present in the local vector
    (docs/reference.md#vap-samples).

    Pedestrians only have Normal moves and Stop, so their label is Normal or Stop (the reference labels moving
    pedestrians "Slow"; we use the action they actually perform).
    """
    moves = local_moves(kind, holds)
    if kind == Kind.CAR:
        for act, base in ((Action.SLOW, 0), (Action.NORMAL, 4), (Action.FAST, 8)):
            if base in moves:
                return act
        return Action.STOP
    return Action.NORMAL if 0 in moves else Action.STOP


def global_moves(kind: Kind, pos: np.ndarray, traj: np.ndarray, index: int,
                 lane_node_mask: np.ndarray | None) -> dict[int, int]:
    """Moves that follow the trajectory from ``traj[index] == pos``: {move index: new trajectory index}.

    A car may move 1–3 cells straight ahead if it lands on one of the next cells of its path and (for 2–3
    cells) does not jump over a lane start/end node, so cars always stop on intersection "at" lines. Empty dict
    = no progress possible (the agent must Stop).
    """
    n = len(traj)
    nxt = index + 1 if index + 1 < n else 0
    d = traj[nxt] - pos
    out: dict[int, int] = {}
    speeds = (1, 2, 3) if kind == Kind.CAR else (1,)
    pr, pc = int(pos[0]), int(pos[1])
    for heading in range(4):
        vr, vc = int(HEADING_VECTORS[heading][0]), int(HEADING_VECTORS[heading][1])
        if d[0] * vr + d[1] * vc <= 0:
            continue
        for speed in speeds:
            tr, tc = pr + vr * speed, pc + vc * speed
            if kind == Kind.CAR and speed > 1 and lane_node_mask is not None:
                if any(_inside(lane_node_mask, pr + vr * s, pc + vc * s) and lane_node_mask[pr + vr * s, pc + vc * s]
                       for s in range(1, speed)):
                    continue
            for j in range(nxt, min(nxt + speed, n)):
                if traj[j, 0] == tr and traj[j, 1] == tc:
                    out[(speed - 1) * 4 + heading if kind == Kind.CAR else heading] = j
                    break
    return out


def _inside(mask: np.ndarray, r: int, c: int) -> bool:
    return 0 <= r < mask.shape[0] and 0 <= c < mask.shape[1]


def choose_move(kind: Kind, holds: np.ndarray, pos: np.ndarray, traj: np.ndarray, index: int,
                lane_node_mask: np.ndarray | None, rng: np.random.Generator) -> Move:
    """Combine the rule decision with the path (docs/reference.md#choosing-the-move) and draw the concrete move from
    ``rng`` when needed."""
    local = local_moves(kind, holds)
    glob = global_moves(kind, pos, traj, index, lane_node_mask)
    return move_from(kind, local, glob, index, rng)


def move_from(kind: Kind, local: list[int] | tuple[int, ...], glob: dict[int, int], index: int,
              rng: np.random.Generator) -> Move:
    """The decision of docs/reference.md#choosing-the-move given the local move list and the global moves
    ``{move: new path index}``."""
    is_car = kind == Kind.CAR
    choice = move_choice(is_car, local, glob, rng)
    if choice == (CAR_STOP if is_car else PED_STOP):
        return Move(-1, 0, index, Action.STOP)
    if is_car:
        cells, heading = choice // 4 + 1, choice % 4
        return Move(heading, cells, glob[choice], _SPEED_ACTION[cells])
    return Move(choice, 1, glob[choice], Action.NORMAL)


def move_choice(is_car: bool, local: list[int] | tuple[int, ...], glob: dict[int, int],
                rng: np.random.Generator) -> int:
    """The move index :func:`move_from` picks (the kind's Stop index when the agent does not move), without
    building a :class:`Move` — the simulator's step loop decodes it with :data:`MOVE_DECODE`. Draws from
    ``rng`` exactly when :func:`move_from` does (only a choice among several moves draws)."""
    stop = CAR_STOP if is_car else PED_STOP
    if len(local) == 1:
        choice = local[0]
    elif len(glob) <= 1:
        choice = next(iter(glob)) if glob else stop
    else:
        both = [m for m in local if m in glob]
        pool = both or sorted(glob)
        choice = pool[int(rng.integers(len(pool)))] if len(pool) > 1 else pool[0]
    return choice if choice in glob else stop  # glob holds moves only, never the Stop index


def path_move_table(is_car: bool, traj: np.ndarray, lane_node_mask: np.ndarray | None) -> np.ndarray:
    """:func:`global_moves` for every index of a path at once: int32 ``[L, 12]`` for cars (move index
    ``(speed-1)*4 + heading``) or ``[L, 4]`` for pedestrians; entry = the new path index, -1 = not a global move.

    Why: the simulator asks for the global moves of every agent every step; computing the whole path's table
    with a few array operations when a trip starts is cheaper than the per-step Python search."""
    t = np.asarray(traj, dtype=np.int64)
    n = len(t)
    nxt = np.arange(1, n + 1)
    nxt[-1] = 0
    d = t[nxt] - t
    vec = HEADING_VECTORS.astype(np.int64)                    # [4, 2]
    ok_dir = (d @ vec.T) > 0                                  # [L, 4]
    top = 3 if is_car else 1
    out = np.full((n, 4 * top), -1, dtype=np.int32)
    h, w = (lane_node_mask.shape if lane_node_mask is not None else (0, 0))
    for speed in range(1, top + 1):
        target = t[:, None, :] + vec[None] * speed             # [L, 4, 2]
        ok = ok_dir.copy()
        if is_car and speed > 1 and lane_node_mask is not None:
            for k in range(1, speed):
                cell = t[:, None, :] + vec[None] * k
                r, c = cell[..., 0], cell[..., 1]
                inside = (r >= 0) & (r < h) & (c >= 0) & (c < w)
                hit = np.zeros(ok.shape, dtype=bool)
                hit[inside] = lane_node_mask[r[inside], c[inside]]
                ok &= ~hit
        found = np.full((n, 4), -1, dtype=np.int64)
        for k in range(speed - 1, -1, -1):                     # the first matching j wins
            j = nxt + k
            valid = j < n
            cells = t[np.minimum(j, n - 1)]
            eq = (cells[:, None, :] == target).all(axis=2) & valid[:, None]
            found = np.where(eq, j[:, None], found)
        out[:, (speed - 1) * 4: speed * 4] = np.where(ok, found, -1)
    return out


def _holds_of(code: int) -> np.ndarray:
    return np.array([(code >> a) & 1 for a in range(4)], dtype=bool)


#: ``LOCAL_TABLE[kind][code]`` / ``DECIDED_TABLE[kind][code]``: :func:`local_moves` / :func:`decided_action` for
#: the holds vector whose bit ``a`` is ``holds[a]`` (code = Σ holds[a]·2^a), precomputed for the step loop.
LOCAL_TABLE: dict[Kind, tuple[tuple[int, ...], ...]] = {
    k: tuple(tuple(local_moves(k, _holds_of(c))) for c in range(16)) for k in Kind}
DECIDED_TABLE: dict[Kind, tuple[Action, ...]] = {
    k: tuple(decided_action(k, _holds_of(c)) for c in range(16)) for k in Kind}

#: ``MOVE_DECODE[is_car][move]`` = (heading, realised action as int) of a non-Stop move index (see :class:`Move`).
MOVE_DECODE: dict[bool, tuple[tuple[int, int], ...]] = {
    True: tuple((m % 4, int(_SPEED_ACTION[m // 4 + 1])) for m in range(CAR_STOP)),
    False: tuple((m, int(Action.NORMAL)) for m in range(PED_STOP)),
}
