"""Which agents lie inside which axis-aligned boxes — the in-view test (docs/reference.md#who-is-in-view) without
N×N work.

For a few dozen agents a dense comparison is fastest; for hundreds or thousands a bucket grid (bucket side =
the largest box side, so a box touches at most 2×2 buckets) only compares each box with the agents of the
buckets it overlaps. Both give the same pairs, sorted by (query, agent).
"""
from __future__ import annotations

import numpy as np

__all__ = ["box_members", "box_mask", "DENSE_LIMIT"]

#: Up to this many agents × queries the dense test is used.
DENSE_LIMIT = 256 * 256


def box_mask(pos: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """bool [Q, N]: agent n's position lies inside query q's inclusive box (the dense test, O(Q·N))."""
    r, c = pos[:, 0], pos[:, 1]
    return ((r[None, :] >= boxes[:, 0:1]) & (r[None, :] <= boxes[:, 1:2])
            & (c[None, :] >= boxes[:, 2:3]) & (c[None, :] <= boxes[:, 3:4]))


def _dense(pos: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q, a = np.nonzero(box_mask(pos, boxes))
    return q.astype(np.int64), a.astype(np.int64)


def _bucketed(pos: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row stripes: agents sorted by (stripe, column), stripe = row // s with s a quarter of the largest box
    height. A box covers a few stripes; in each, the agents whose column lies in the box's column range are one
    contiguous run of that order (two binary searches), so only the row test is left, on about
    (box height + s) × box width cells' worth of agents — fewer candidates than square buckets (4 × box area)
    and no per-bucket bookkeeping."""
    n = len(pos)
    pr = pos[:, 0].astype(np.int64)
    pc = pos[:, 1].astype(np.int64)
    r0, r1 = boxes[:, 0].astype(np.int64), boxes[:, 1].astype(np.int64)
    c0, c1 = boxes[:, 2].astype(np.int64), boxes[:, 3].astype(np.int64)
    s = max(int((r1 - r0).max() + 1) // 4, 1)
    width = int(pc.max()) + 1 if n else 1
    stripe = pr // s
    last = int(stripe.max())
    key = stripe * width + pc
    order = np.argsort(key, kind="stable")  # ascending agent index among equal keys
    skey = key[order]
    s0 = np.clip(r0 // s, 0, last)
    s1 = np.clip(r1 // s, 0, last)
    ns = np.where(r1 >= r0, s1 - s0 + 1, 0)
    q = np.repeat(np.arange(len(boxes), dtype=np.int64), ns)
    k = np.arange(len(q)) - np.repeat(np.cumsum(ns) - ns, ns)
    row_key = (s0[q] + k) * width
    lo = np.searchsorted(skey, row_key + np.clip(c0[q], 0, width), side="left")
    hi = np.searchsorted(skey, row_key + np.clip(c1[q], -1, width - 1), side="right")
    cnt = np.maximum(hi - lo, 0)
    q2 = np.repeat(q, cnt)
    off = np.arange(len(q2)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    a = order[np.repeat(lo, cnt) + off]
    r = pr[a]
    keep = (r >= r0[q2]) & (r <= r1[q2])
    q2, a = q2[keep], a[keep]
    srt = np.argsort(q2 * n + a, kind="stable")
    return q2[srt], a[srt]


def box_members(pos: np.ndarray, boxes: np.ndarray, *, method: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """All (query, agent) pairs with agent position inside the query's inclusive box.

    ``pos`` int [N, 2] (row, col); ``boxes`` int [Q, 4] as (r0, r1, c0, c1), inclusive. Returns two int64
    arrays sorted by query then agent. ``method``: "auto", "dense" or "bucket".
    """
    if len(pos) == 0 or len(boxes) == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e
    if method == "dense" or (method == "auto" and len(pos) * len(boxes) <= DENSE_LIMIT):
        return _dense(pos, boxes)
    return _bucketed(pos, boxes)
