"""Pair geometry: offsets and squared distances between ordered agent pairs, and the distance/angle tests on them.

Why a module of its own: every binary predicate (core/logic/grounding/predicate_tables.py) and the CollidingClose coin draw
(core/logic/grounding/coins.py) start from the same geometry of a set of ordered pairs (a, b) — all N×N pairs of a small
scene, each view's [E, K, K] pairs, or a list of candidate pairs — and the same exact integer tests on it
(squared-distance bounds, "b is straight ahead of a"). Keeping them here lets both users share one definition,
so the coin pairs and the predicate tables can never disagree about which pairs are within reach.
"""
from __future__ import annotations

import math

import numpy as np

from core.logic.lang.ontology import Predicate

__all__ = ["DIRS_R", "DIRS_C", "PairGeom", "d2_bounds", "straight_ahead", "colliding_parts"]

# (d_row, d_col) per heading index; row -1 (Heading.NONE) is the zero vector. int64 like the positions (mixed
# integer widths make numpy cast on every operation, which dominates at a few hundred elements).
_DIRS = np.array([[0, -1], [0, 1], [-1, 0], [1, 0], [0, 0]], dtype=np.int64)
DIRS_R = np.ascontiguousarray(_DIRS[:, 0])
DIRS_C = np.ascontiguousarray(_DIRS[:, 1])


class PairGeom:
    """Pair geometry for first-argument indices ``a`` and second-argument indices ``b`` (broadcastable, -1 =
    none): offsets ``b - a`` and squared distance, plus the mask of real, distinct pairs."""

    __slots__ = ("a", "b", "dr", "dc", "d2", "ok", "side", "complete")

    def __init__(self, a: np.ndarray, b: np.ndarray, dr: np.ndarray, dc: np.ndarray, ok: np.ndarray,
                 complete: bool = False) -> None:
        self.a, self.b, self.dr, self.dc, self.ok = a, b, dr, dc, ok
        self.d2 = dr * dr + dc * dc
        self.side: tuple[np.ndarray, np.ndarray] | None = None  # LeftOf/RightOf intermediate (PredicateTables._side)
        self.complete = complete  # a = arange(N)[:, None], b = arange(N)[None, :] (all_pairs)

    def at_a(self, values: np.ndarray) -> np.ndarray:
        """Per-agent ``values`` of each pair's first argument (a broadcastable view for all_pairs)."""
        return values[:, None] if self.complete else values[self.a]

    def at_b(self, values: np.ndarray) -> np.ndarray:
        """Per-agent ``values`` of each pair's second argument (a broadcastable view for all_pairs)."""
        return values[None, :] if self.complete else values[self.b]

    @classmethod
    def of(cls, pos: np.ndarray, a: np.ndarray, b: np.ndarray) -> "PairGeom":
        pa, pb = pos[a], pos[b]
        return cls(a, b, pb[..., 0] - pa[..., 0], pb[..., 1] - pa[..., 1], (a >= 0) & (b >= 0) & (a != b))

    @classmethod
    def all_pairs(cls, pos: np.ndarray, index: np.ndarray, distinct: np.ndarray) -> "PairGeom":
        """Every ordered pair of the N agents, as [N, N] arrays (``a`` = row = first argument). ``index`` is
        ``arange(N)`` and ``distinct`` the off-diagonal mask, passed in so that callers can reuse them."""
        r, c = pos[:, 0], pos[:, 1]
        return cls(index[:, None], index[None, :], r[None, :] - r[:, None], c[None, :] - c[:, None], distinct,
                   complete=True)

    @classmethod
    def local(cls, pos: np.ndarray, ent: np.ndarray, valid: np.ndarray) -> "PairGeom":
        """All pairs (ent[e, i], ent[e, j]) of each ego's domain: arrays broadcast to [E, K, K] (int32: map
        coordinates are small, and half-width arrays halve the memory traffic for thousands of agents)."""
        p = pos.astype(np.int32)[ent]  # [E, K, 2]
        k = ent.shape[1]
        ok = valid[:, :, None] & valid[:, None, :] & ~np.eye(k, dtype=bool)[None]
        a = ent[:, :, None].astype(np.int64)
        b = ent[:, None, :].astype(np.int64)
        pr = np.ascontiguousarray(p[..., 0])
        pc = np.ascontiguousarray(p[..., 1])
        return cls(a, b, pr[:, None, :] - pr[:, :, None], pc[:, None, :] - pc[:, :, None], ok)


def d2_bounds(p: Predicate) -> tuple[int, int]:
    """Integer squared-distance thresholds of IsClose / NextTo: squared distances are integers, so
    ``lo < d <= hi`` ⟺ ``floor(lo²) < d² <= floor(hi²)`` and ``d < hi`` ⟺ ``d² < ceil(hi²)`` (exact, no floats
    on the arrays). Returns (floor(min²), floor(max²)) for is_close and (0, ceil(max²)) for next_to; memoised
    on the (immutable) predicate."""
    hit = p.__dict__.get("_d2_bounds")
    if hit is None:
        hi = float(p.params["max"])
        if p.grounding == "is_close":
            lo = float(p.params["min"])
            hit = (math.floor(lo * lo), math.floor(hi * hi))
        else:
            hit = (0, math.ceil(hi * hi))
        object.__setattr__(p, "_d2_bounds", hit)
    return hit


def straight_ahead(pred: Predicate, g: PairGeom, head_a: np.ndarray) -> np.ndarray:
    """angle between a's heading and (b - a) below the threshold (distance > 0 assumed by callers).

    For angles below π/2, ``arccos(dot/dist) < angle`` ⟺ ``dot > 0 and dot² > cos²(angle)·dist²``; with integer
    offsets the two never disagree (no offset ratio lies within rounding distance of cos(angle))."""
    dot = DIRS_R[head_a] * g.dr + DIRS_C[head_a] * g.dc
    angle = float(pred.params["angle"])
    if angle < math.pi / 2:
        c2 = math.cos(angle) ** 2
        return (dot > 0) & (dot * dot > c2 * g.d2)
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = np.where(g.d2 > 0, dot / np.sqrt(np.maximum(g.d2, 1)), -1.0)
    return np.arccos(np.clip(cos, -1.0, 1.0)) < angle


def colliding_parts(pred: Predicate, g: PairGeom, head: np.ndarray, reach2: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(base, ahead): a has moved and b is a distinct agent within a's reach; b is straight ahead of a."""
    ha = g.at_a(head)
    base = g.ok & (ha >= 0) & (g.d2 <= g.at_a(reach2))
    return base, straight_ahead(pred, g, ha)
