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
    n = len(pos)
    extent = int(max((boxes[:, 1] - boxes[:, 0]).max(), (boxes[:, 3] - boxes[:, 2]).max())) + 1
    s = max(extent, 1)
    br = pos[:, 0].astype(np.int64) // s
    bc = pos[:, 1].astype(np.int64) // s
    br_max, bc_max = int(br.max()), int(bc.max())
    ncol = bc_max + 1
    key = br * ncol + bc
    order = np.argsort(key, kind="stable")  # ascending agent index inside a bucket
    skey = key[order]
    nbuckets = (br_max + 1) * ncol
    starts = np.searchsorted(skey, np.arange(nbuckets + 1))
    qb_r0 = np.clip(boxes[:, 0].astype(np.int64) // s, 0, br_max)
    qb_r1 = np.clip(boxes[:, 1].astype(np.int64) // s, 0, br_max)
    qb_c0 = np.clip(boxes[:, 2].astype(np.int64) // s, 0, bc_max)
    qb_c1 = np.clip(boxes[:, 3].astype(np.int64) // s, 0, bc_max)
    nr = np.maximum(qb_r1 - qb_r0 + 1, 0)
    nc = np.maximum(qb_c1 - qb_c0 + 1, 0)
    nb = nr * nc
    q = np.repeat(np.arange(len(boxes)), nb)
    k = np.arange(len(q)) - np.repeat(np.cumsum(nb) - nb, nb)
    ncq = nc[q]
    bucket = (qb_r0[q] + k // ncq) * ncol + qb_c0[q] + k % ncq
    b0 = starts[bucket]
    cnt = starts[bucket + 1] - b0
    q2 = np.repeat(q, cnt)
    off = np.arange(len(q2)) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    a = order[np.repeat(b0, cnt) + off]
    r, c = pos[a, 0], pos[a, 1]
    bx = boxes[q2]
    keep = (r >= bx[:, 0]) & (r <= bx[:, 1]) & (c >= bx[:, 2]) & (c <= bx[:, 3])
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
