"""Who is in whose view: each agent's field-of-view box and the padded matrix of every ego's domain.

Why a module of its own: an ego's closed domain — itself first, then the agents inside its field of view in
ascending agent order, cut to its view limit (docs/reference.md#who-is-in-view, #spf-observation) — is decided
before any predicate is grounded and does not depend on the ontology's predicates. :class:`FieldOfView` holds
the box geometry of one city and view configuration (docs/reference.md#field-of-view) and the memoised
per-ego caps; :func:`domains_from_pairs` / :func:`domains_from_mask` turn in-view pairs into ``ent[N, K]``
(global agent indices, -1 = padding) — the layout every engine evaluates (see core/logic/grounding/grounder.py).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

__all__ = ["FieldOfView", "domains_from_pairs", "domains_from_mask"]

# columns of a position giving (r0, r1, c0, c1) before the per-heading offsets (FieldOfView.boxes)
_BOX_COLS = np.array([0, 0, 1, 1])


class FieldOfView:
    """The field-of-view boxes of one map and view configuration (the ontology's ``view``), and the per-ego
    domain caps."""

    def __init__(self, height: int, width: int, view: Mapping[str, Any]) -> None:
        self.fov = f = int(view["fov"])
        b = view["behind"]
        self.behind = (int(b["left"]), int(b["right"]), int(b["up"]), int(b["down"]))
        left, right, up, down = self.behind
        # (r0, r1, c0, c1) offsets per heading LEFT, RIGHT, UP, DOWN, NONE (index -1 → last row); see
        # docs/reference.md#field-of-view: 25 ahead and aside, 1 behind Left/Up, 2 behind Right/Down by default
        self._box_off = np.array([[-f, f, -f, left], [-f, f, -right, f], [-f, up, -f, f], [-down, f, -f, f],
                                  [-f, f, -f, f]], dtype=np.int64)
        self._box_hi = np.array([height - 1, height - 1, width - 1, width - 1], dtype=np.int64)
        self._limit_cache: dict[tuple, np.ndarray] = {}
        self._no_limits: dict[int, np.ndarray] = {}

    def boxes(self, positions: np.ndarray, headings: np.ndarray) -> np.ndarray:
        """Inclusive crop boxes (r0, r1, c0, c1) per agent, clipped to the map (docs/reference.md#field-of-view)."""
        pos = np.asarray(positions, dtype=np.int64)
        boxes = pos[:, _BOX_COLS] + self._box_off[np.asarray(headings, dtype=np.int64)]
        return np.minimum(np.maximum(boxes, 0), self._box_hi)

    def kernel_domains(self, kern, pos: np.ndarray, boxes: np.ndarray, lim: np.ndarray | None
                       ) -> np.ndarray | None:
        """:func:`domains_from_pairs` of the in-view pairs by the compiled kernel (one loop, a bucket grid of
        half the view's side); None when some ego lies outside its own box (an off-map position),
        which the numpy path handles."""
        n = len(pos)
        if lim is None:
            lim = self._no_limits.get(n)
            if lim is None:
                lim = self._no_limits[n] = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        ent, ok = kern.domains(pos, boxes, lim, max(2, (2 * self.fov + 1) // 2))
        return ent if ok else None

    def view_limits(self, n: int, view_limits: Mapping[int, int]) -> np.ndarray:
        """int64 [N]: the domain size cap per ego (no cap = int64 max), memoised per limits (a simulation passes
        the same ones every step)."""
        key = (n, tuple(view_limits.items()))
        lim = self._limit_cache.get(key)
        if lim is None:
            lim = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
            for ego, v in view_limits.items():
                lim[int(ego)] = max(int(v), 1)
            lim.setflags(write=False)
            if len(self._limit_cache) > 64:
                self._limit_cache.clear()
            self._limit_cache[key] = lim
        return lim


def domains_from_pairs(q: np.ndarray, a: np.ndarray, n: int, lim: np.ndarray | None) -> np.ndarray:
    """ent [N, K] from the in-view pairs (q = ego, a = agent), sorted by (q, a): per ego, itself first, then
    the others ascending, at most ``lim[ego]`` entities; -1 pads."""
    counts = np.bincount(q, minlength=n)
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(q)) - starts[q]
    # ego first: entries before the ego move one slot right, the ego goes to slot 0
    rank = np.where(a == q, 0, rank + (a < q))
    if lim is not None:
        keep = rank < lim[q]
        q, a, rank = q[keep], a[keep], rank[keep]
    k = int(rank.max()) + 1
    ent = np.full((n, k), -1, dtype=np.int32)
    ent[q, rank] = a
    return ent


def domains_from_mask(m: np.ndarray, lim: np.ndarray | None) -> np.ndarray:
    """:func:`domains_from_pairs` from the [N, N] in-view mask whose diagonal is all True, with one row sort
    instead of a dozen operations on pair lists: key = agent index if in view else N, the ego's key -1."""
    n = len(m)
    key = np.where(m, np.arange(n)[None, :], n)
    key.flat[:: n + 1] = -1
    key.sort(axis=1)
    counts = m.sum(axis=1)
    if lim is not None:
        counts = np.minimum(counts, lim)
    k = int(counts.max())
    ent = key[:, :k].astype(np.int32)
    ent[:, 0] = np.arange(n)
    ent[np.arange(k)[None, :] >= counts[:, None]] = -1
    return ent
