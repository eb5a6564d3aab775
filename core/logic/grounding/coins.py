"""CollidingClose coins: the random draws that decide the uncertain CollidingClose pairs of a step.

Why a module of its own: the coins are the only randomness in grounding, and episodes are compared bit for bit,
so the rule for which pairs draw and in what order must live in one place (docs/reference.md#collidingclose).
The reference draws a fresh coin each time a pair is grounded, so one physical pair can get different values in
different agents' views. Here every ordered pair (a, b) that needs a coin in a step (a has moved, distance ≤
range(a), and same cell or a pedestrian with b straight ahead) gets exactly one draw ``rng.random() < coin``, in
ascending (a, b) order, independent of who sees the pair and of ``view_limits``. All views therefore agree, and
a run is reproducible from the rng alone. :func:`draw_coins` finds the pairs on candidate lists (compiled kernel,
dense [M, N] block, or spatial buckets) and :func:`draw_coins_dense` on a small scene's all-pairs geometry — the
same pairs in the same order, hence the same draws; :func:`force_coins` lets scenes, and the inspector replaying a
recorded step, fix outcomes afterwards. The predicate tables read the drawn outcomes
(core/logic/grounding/predicate_tables.py, :meth:`PredicateTables.compute_binary`).
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from core.logic.grounding.agent_static import AgentStatic
from core.logic.grounding.pair_geometry import PairGeom, colliding_parts
from core.logic.grounding.spatial import DENSE_LIMIT, box_members
from core.logic.lang.ontology import Predicate

__all__ = ["CoinDraws", "NO_COINS", "coin_pairs", "draw_coins", "draw_coins_dense", "force_coins"]

#: The coins of one step: per CollidingClose predicate, (keys a·N + b ascending int64, outcomes bool).
CoinDraws = Mapping[str, tuple[np.ndarray, np.ndarray]]
#: A predicate that drew no coin.
NO_COINS = (np.zeros(0, np.int64), np.zeros(0, bool))


def coin_pairs(preds: Sequence[Predicate], pos: np.ndarray, head: np.ndarray, st: AgentStatic
               ) -> dict[str, np.ndarray]:
    """Per CollidingClose predicate of ``preds``, the ordered agent pairs (a, b) that draw a coin, in draw order
    (int64 ``[K, 2]``); see :meth:`core.logic.grounding.grounder.Grounder.coin_pairs`. ``pos`` holds at least one agent."""
    n = len(pos)
    out = {}
    for p in preds:  # the draws of a throwaway generator: only the pairs are wanted
        keys, _ = draw_coins(p, pos, head, st, np.random.default_rng(0))
        out[p.name] = np.stack([keys // n, keys % n], axis=1)
    return out


def draw_coins(pred: Predicate, pos: np.ndarray, head: np.ndarray, st: AgentStatic,
               rng: np.random.Generator, kern=None) -> tuple[np.ndarray, np.ndarray]:
    """The coin pairs of ``pred`` as keys a·N + b ascending and their outcomes, drawn from ``rng``;
    ``kern``: the compiled kernels (core/logic/fast.py), used for the pairs when given."""
    n = len(pos)
    reach = st.reach[pred.name]
    idx = np.nonzero(head >= 0)[0]
    if len(idx) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    angle = float(pred.params["angle"])
    if kern is not None and angle < math.pi / 2:   # the kernel knows the straight-ahead test below π/2
        keys = kern.coin_keys(pos, head, reach, st.reach2[pred.name], st.is_car, math.cos(angle) ** 2,
                              max(2, int(math.ceil(float(reach.max())))))
    elif len(idx) * n <= DENSE_LIMIT:
        g = PairGeom.of(pos, idx[:, None], np.arange(n)[None, :])
        need = _coin_needed(pred, g, head, st.reach2[pred.name], st.is_car)
        qa, b = np.nonzero(need)
        keys = idx[qa] * n + b  # row-major: sorted by (a, b)
    else:
        ri = np.ceil(reach[idx]).astype(np.int64)
        p = pos[idx]
        boxes = np.stack([p[:, 0] - ri, p[:, 0] + ri, p[:, 1] - ri, p[:, 1] + ri], axis=1)
        qq, b = box_members(pos, boxes)
        a = idx[qq]
        g = PairGeom.of(pos, a, b)
        need = _coin_needed(pred, g, head, st.reach2[pred.name], st.is_car)
        keys = a[need] * n + b[need]  # sorted: box_members orders by (query, agent) and idx ascends
    vals = rng.random(len(keys)) < float(pred.params["coin"])
    return keys, vals


def draw_coins_dense(pred: Predicate, g: PairGeom, head: np.ndarray, st: AgentStatic,
                     rng: np.random.Generator) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """:func:`draw_coins` on the all-pairs geometry, plus the predicate's whole [N, N] table.

    The coin-needing pairs are taken row-major from the [N, N] mask, i.e. in ascending (a, b) order — the
    same pairs in the same order as :func:`draw_coins`, hence the same draws. Table: a car's pair holds
    when b is straight ahead within reach; every coin pair holds iff its coin came up."""
    base, ahead = colliding_parts(pred, g, head, st.reach2[pred.name])
    car = st.is_car[:, None]
    need = base & ((g.d2 == 0) | (~car & ahead))
    table = base & ahead & car
    if not (head >= 0).any():  # nobody has moved yet: no coin, and no draw (as draw_coins)
        return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)), table
    keys = np.flatnonzero(need)  # = a * n + b, ascending
    vals = rng.random(len(keys)) < float(pred.params["coin"])
    np.put(table, keys, vals)  # coin pairs are never in the car part (ahead of a car excludes d2 == 0)
    return (keys, vals), table


def force_coins(drawn: dict[str, tuple[np.ndarray, np.ndarray]], tables: dict[str, np.ndarray] | None,
                forced: Mapping[tuple[str, int, int], bool], n: int) -> None:
    """Replace drawn coin outcomes by ``forced`` ones, in place (keys are sorted, so a binary search finds
    each pair); ``tables`` are the dense path's [N, N] predicate tables, kept in step."""
    for (name, a, b), value in forced.items():
        if name not in drawn:
            raise ValueError(f"{name} is not a CollidingClose predicate of this ontology "
                             f"(those are: {', '.join(drawn) or 'none'})")
        keys, vals = drawn[name]
        key = int(a) * n + int(b)
        j = int(np.searchsorted(keys, key))
        if j >= len(keys) or int(keys[j]) != key:
            raise ValueError(f"{name}({a}, {b}) draws no coin in this state (see Grounder.coin_pairs)")
        vals[j] = bool(value)
        if tables is not None:
            tables[name][int(a), int(b)] = bool(value)


def _coin_needed(pred: Predicate, g: PairGeom, head: np.ndarray, reach2: np.ndarray,
                 is_car: np.ndarray) -> np.ndarray:
    base, ahead = colliding_parts(pred, g, head, reach2)
    same = g.d2 == 0
    return base & (same | (~g.at_a(is_car) & ahead))
