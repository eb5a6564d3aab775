"""Factorised evaluation of one many-variable clause body (bucket elimination), for the compiled engine.

Why: broadcasting a clause with m existential variables over ``[E, K, ..., K]`` costs K^m truth values per ego —
11 variables over 7 entities in view already take gigabytes. Most many-variable bodies are sparse: each pair
literal ``P(Y, Z)`` links two variables, and the variables form chains or stars, not cliques. Eliminating the
variables one at a time (last-appearing first) only ever joins a variable with the variables it is linked to
(directly or through an eliminated one), so the cost is K^w per ego, where the *join width* w is the largest
such group — 2 for a chain, whatever its length.

The answer is the same as the dense evaluation's, witness included: after the backward pass, the forward pass
assigns variables in order of first appearance, each to the smallest entity that still extends to a full
binding (bucket elimination makes this backtrack-free), which is exactly the first true binding in row-major
order that the dense ``argmax`` picks and the z3 engine's first satisfied disjunct.

Input factors are boolean tables per ego row: one unary table ``[r, K]`` per variable (its domain mask and
one-variable literals), and pair tables ``[r, K, K]`` over two variables (i < j).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

__all__ = ["JoinPlan", "plan_joins"]

# a factor reference: ("u", i) unary table of variable i, ("p", k) k-th pair table, ("m", i) message of bucket i
_Ref = tuple[str, int]


@dataclass(frozen=True)
class JoinPlan:
    """Bucket elimination in reverse order of the variables: per variable, the factors joined when it is
    eliminated (their scopes all end with it) and the union scope of that join."""

    nvars: int
    pairs: tuple[tuple[int, int], ...]          # scope (i, j), i < j, of each pair table
    buckets: tuple[tuple[_Ref, ...], ...]       # per variable i: the factors whose last variable is i
    scopes: tuple[tuple[int, ...], ...]         # per variable i: the joined scope (sorted, ends with i)
    scalar: tuple[int, ...]                     # buckets whose message has an empty scope (a per-ego bool)

    @property
    def width(self) -> int:
        """Largest number of variables joined at once (the exponent of the per-ego cost)."""
        return max((len(s) for s in self.scopes), default=0)

    def cost(self, k: int) -> int:
        """Truth values held at once per ego row for a domain of ``k`` entities (the largest join)."""
        return max((k ** len(s) for s in self.scopes), default=1)

    def evaluate(self, unary: list[np.ndarray], pairs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """body bool [r] and local witness int64 [r, m] (-1 where the body is false).

        ``unary[i]`` bool [r, K]; ``pairs[k]`` bool [r, K, K] over ``self.pairs[k]``."""
        r, k = unary[0].shape
        scope_of: dict[_Ref, tuple[int, ...]] = {("u", i): (i,) for i in range(self.nvars)}
        table: dict[_Ref, np.ndarray] = {("u", i): u for i, u in enumerate(unary)}
        sc: tuple[int, ...]  # a factor's scope: a pair table's (i, j) here, any factor's below
        for n, (sc, t) in enumerate(zip(self.pairs, pairs)):
            scope_of[("p", n)], table[("p", n)] = sc, t
        body = np.ones(r, dtype=bool)
        for i in range(self.nvars - 1, -1, -1):  # backward: eliminate the last variable first
            s = self.scopes[i]
            acc: np.ndarray | None = None
            for ref in self.buckets[i]:
                sc = scope_of[ref]
                a = table[ref].reshape([r] + [k if v in sc else 1 for v in s])
                acc = a if acc is None else acc & a
            assert acc is not None
            msg = cast(np.ndarray, acc.any(axis=-1))  # never a scalar: acc has the ego axis
            if len(s) == 1:
                body &= msg
            else:
                scope_of[("m", i)], table[("m", i)] = s[:-1], msg
        wit = np.zeros((r, self.nvars), dtype=np.int64)
        rows = np.arange(r)
        for i in range(self.nvars):  # forward: the smallest value that still extends, variable by variable
            cand = np.ones((r, k), dtype=bool)
            for ref in self.buckets[i]:
                sc = scope_of[ref]
                cand &= table[ref][(rows,) + tuple(wit[:, v] for v in sc[:-1])]
            wit[:, i] = cand.argmax(axis=1)
        wit[~body] = -1
        return body, wit


def plan_joins(nvars: int, pairs: list[tuple[int, int]]) -> JoinPlan:
    """The elimination plan for ``nvars`` variables linked by ``pairs`` (each (i, j) with i < j)."""
    scope_of: dict[_Ref, tuple[int, ...]] = {("u", i): (i,) for i in range(nvars)}
    sc: tuple[int, ...]
    for n, sc in enumerate(pairs):
        scope_of[("p", n)] = sc
    buckets: list[list[_Ref]] = [[] for _ in range(nvars)]
    for ref, sc in scope_of.items():
        buckets[sc[-1]].append(ref)
    scopes: list[tuple[int, ...]] = [()] * nvars
    scalar = []
    for i in range(nvars - 1, -1, -1):
        s = tuple(sorted({v for ref in buckets[i] for v in scope_of[ref]}))
        scopes[i] = s
        if len(s) == 1:
            scalar.append(i)
        else:
            scope_of[("m", i)] = s[:-1]
            buckets[s[-2]].append(("m", i))
    return JoinPlan(nvars, tuple(pairs), tuple(tuple(b) for b in buckets), tuple(scopes), tuple(scalar))
