"""Fleiss' kappa: agreement of a fixed number of raters on categorical answers, beyond chance.

For N items each rated by the same n raters into k categories, with counts ``n_ij`` (item i, category j):
``P_i = (sum_j n_ij^2 - n) / (n (n - 1))``, ``P_bar = mean_i P_i``, ``p_j = sum_i n_ij / (N n)``,
``P_e = sum_j p_j^2`` and ``kappa = (P_bar - P_e) / (1 - P_e)`` (Fleiss 1971). Written out here (a few lines of
numpy) rather than pulling in statsmodels for one formula; the unit test checks it on the textbook example.
"""
from __future__ import annotations

from typing import Hashable, Mapping, Sequence, TypeVar

import numpy as np

__all__ = ["fleiss_kappa", "counts_table"]


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float:
    """Kappa of an items × categories count table whose rows all sum to the same number of raters (>= 2).
    Returns nan when chance agreement is 1 (every answer in one category: kappa is undefined)."""
    t = np.asarray(counts, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] == 0:
        raise ValueError("need an items × categories table with at least one item")
    n = t.sum(axis=1)
    if not np.all(n == n[0]) or n[0] < 2:
        raise ValueError("every item must be rated by the same number (>= 2) of raters")
    raters = n[0]
    p_i = ((t * t).sum(axis=1) - raters) / (raters * (raters - 1))
    p_bar = p_i.mean()
    p_j = t.sum(axis=0) / (t.shape[0] * raters)
    p_e = float((p_j * p_j).sum())
    if np.isclose(p_e, 1.0):
        return float("nan")
    return float((p_bar - p_e) / (1 - p_e))


Item = TypeVar("Item", bound=Hashable)


def counts_table(ratings: Mapping[str, Mapping[Item, Hashable]], categories: Sequence[Hashable]
                 ) -> tuple[np.ndarray, list[Item]]:
    """Items × categories counts from ``rater -> item -> category``, over the items every rater answered with one
    of ``categories``; returns (table, items)."""
    raters = list(ratings.values())
    if not raters:
        return np.zeros((0, len(categories)), np.int64), []
    common = [i for i in raters[0] if all(r.get(i) in categories for r in raters)]
    col = {c: j for j, c in enumerate(categories)}
    table = np.zeros((len(common), len(categories)), np.int64)
    for row, item in enumerate(common):
        for r in raters:
            table[row, col[r[item]]] += 1
    return table, common
