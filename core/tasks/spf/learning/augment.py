"""View augmentation for behaviour cloning: new training views made from demonstrated ones, labelled by the oracle.

Why: the oracle's demonstrations come from the *training* agents (8 agents in easy), whose views are mostly full
(81 % of easy's distinct demonstrated rows show 5 entities; the validation and test agents give mostly 2–3), and an
observation lists the other entities in agent order, so a given situation puts "the other car in the intersection" in
only a few view slots. A learner then misses the rule where it shows up with fewer entities or in another slot
(measured in docs/spf.md: the intersection Stops with 2–4 entities in view).

An augmented view keeps the ego (entity 0) and a random *ordered subset* of the other real entities: the others are
shuffled, a uniform number of them kept (all of them = a pure permutation), the kept ones moved to the first slots
and the rest made placeholders (all zero, as the environment fills a view). Every unary and binary predicate is
moved with its entities, so the result is a view the environment can produce (the same situation with some agents
out of sight, or with agents listed in another order). Its label is the oracle's decision on *that* view
(``ViewRules.decide``, the exact oracle, which is a function of the observation), so the label is never guessed:
hiding the one car that forced a Stop turns the label into Normal. This is querying the demonstrator on new
states, as DAgger does, restricted to views derived from demonstrated ones.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["real_entities", "random_entity_maps", "remap_views", "ViewAugmenter"]


def real_entities(obs: np.ndarray, blocks: Sequence[tuple[int, int]], n: int) -> np.ndarray:
    """Number of real entities per view ``[B]`` (the ego counts; a real entity has a true unary predicate,
    placeholders are all zero and come last)."""
    un = [obs[:, off:off + n] for off, ar in blocks if ar == 1]
    real = np.stack(un, axis=-1).max(axis=-1) > 0.5 if un else np.ones((len(obs), n), bool)
    real[:, 0] = True
    return real.sum(axis=1)


def random_entity_maps(n_real: np.ndarray, n: int, rng: np.random.Generator,
                       drop: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per view, ``maps [B, n]``: the old slot that goes to each new slot (``-1`` = placeholder), the ego staying
    in slot 0; the other real entities shuffled and, with ``drop``, only the first k kept (k uniform in 0..others).
    Also returns the new number of real entities ``[B]``."""
    b = len(n_real)
    slots = np.arange(1, n)[None, :].repeat(b, axis=0)                      # [B, n-1] old slots 1..n-1
    real = slots < n_real[:, None]
    keys = np.where(real, rng.random((b, n - 1)), np.inf)
    order = np.take_along_axis(slots, np.argsort(keys, axis=1), axis=1)      # real others shuffled, then the rest
    others = n_real - 1
    keep = rng.integers(0, others + 1) if drop else others
    new_real = np.arange(n - 1)[None, :] < np.asarray(keep)[:, None]
    maps = np.full((b, n), -1, dtype=np.int64)
    maps[:, 0] = 0
    maps[:, 1:] = np.where(new_real, order, -1)
    return maps, 1 + np.asarray(keep, dtype=np.int64)


def remap_views(obs: np.ndarray, maps: np.ndarray, blocks: Sequence[tuple[int, int]], n: int) -> np.ndarray:
    """The views with their entities moved as ``maps`` says: ``P(new i) = P(old maps[i])`` for unary,
    ``P(new i, new j) = P(old maps[i], old maps[j])`` for binary predicates; a placeholder slot is all zero."""
    out = np.zeros_like(obs)
    b = len(obs)
    valid = maps >= 0
    m = np.where(valid, maps, 0)
    rows = np.arange(b)[:, None]
    for off, ar in blocks:
        if ar == 1:
            out[:, off:off + n] = np.where(valid, obs[:, off:off + n][rows, m], 0)
        elif ar == 2:
            bb = obs[:, off:off + n * n].reshape(b, n, n)
            v = bb[rows[:, :, None], m[:, :, None], m[:, None, :]] * (valid[:, :, None] & valid[:, None, :])
            out[:, off:off + n * n] = v.reshape(b, n * n)
        else:
            raise ValueError(f"view augmentation handles unary and binary predicates, not arity {ar}")
    return out


class ViewAugmenter:
    """Turns a ``fraction`` of each batch into augmented views labelled by the oracle (see the module docstring).
    ``env`` is an SPF environment of the mode (its ``layout``, ``fov`` and ``expert`` rules are used)."""

    def __init__(self, env, fraction: float = 0.5) -> None:
        base = env.unwrapped
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"augmentation fraction must be in 0..1, got {fraction}")
        self.blocks = [(int(o), int(a)) for o, a in base.layout.blocks.values()]
        self.n = int(base.fov)
        self.expert = base.expert
        self.fraction = float(fraction)

    def label(self, obs: np.ndarray, n_real: np.ndarray) -> np.ndarray:
        """The oracle's action for each view."""
        return np.array([int(self.expert.decide(o, int(k)).action) for o, k in zip(obs, n_real)], dtype=np.int64)

    def __call__(self, obs: np.ndarray, actions: np.ndarray, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray]:
        """A copy of the batch whose first ``fraction`` rows are augmented views with the oracle's labels."""
        k = int(round(len(obs) * self.fraction))
        obs, actions = obs.copy(), actions.copy()
        if k == 0:
            return obs, actions
        maps, n_real = random_entity_maps(real_entities(obs[:k], self.blocks, self.n), self.n, rng)
        obs[:k] = remap_views(obs[:k], maps, self.blocks, self.n)
        actions[:k] = self.label(obs[:k], n_real)
        return obs, actions
