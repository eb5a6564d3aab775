"""Episode statistics for the studio's statistics dock and reports (no Qt): vectorised over recorded arrays."""
from __future__ import annotations

import numpy as np

from core.base.codes import ACTION_NAMES, Kind
from core.sim.episode import FIRED_DEFAULT


def action_counts(episode, start: int = 0, stop: int | None = None) -> np.ndarray:
    """int [T', 4]: how many agents decided Slow/Normal/Fast/Stop in each step ``start <= k < stop``."""
    dec = np.asarray(episode.array("decided")[start:stop], np.int64)
    if dec.size == 0:
        return np.zeros((0, 4), np.int64)
    out = np.zeros((dec.shape[0], 4), np.int64)
    for a in range(4):
        out[:, a] = (dec == a).sum(axis=1)
    return out


def clause_counts(episode, upto: int | None = None) -> np.ndarray:
    """int [C + 1]: firings per clause id over steps ``< upto`` (last entry: default decisions, where no clause
    fired; actions forced by an override are in neither)."""
    n_clauses = len(episode.meta.get("clauses", []))
    fired = np.asarray(episode.array("fired")[:upto], np.int64).ravel()
    counts = np.bincount(fired[fired >= 0], minlength=n_clauses)[: max(n_clauses, 0)] if n_clauses else \
        np.zeros(0, np.int64)
    if fired.size and fired.max(initial=-1) >= n_clauses:   # ids beyond the table: widen
        counts = np.bincount(fired[fired >= 0])
    return np.concatenate([counts, [int((fired == FIRED_DEFAULT).sum())]])


def goals_cumulative(episode) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative goals reached after each step, for pedestrians and cars: two int arrays [T]."""
    reached = np.asarray(episode.array("reached"), bool)
    kinds = np.asarray(episode.agents.kinds)
    if reached.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ped = np.cumsum(reached[:, kinds == Kind.PEDESTRIAN].sum(axis=1))
    car = np.cumsum(reached[:, kinds == Kind.CAR].sum(axis=1))
    return ped, car


def clause_labels(episode) -> list[str]:
    """Short label per clause id: ``Stop #2`` style unless the rule file labelled it."""
    out = []
    for c in episode.meta.get("clauses", []):
        label = str(c.get("label") or f"clause {c.get('id')}")
        head = str(c.get("head") or "")
        out.append(label if head and label.lower().startswith(head.lower()) else f"{head}: {label}".strip(": "))
    return out


def step_range_text(k: int) -> str:
    """The steps the statistics count at shown state ``k``: the steps that led to it (0..k-1). The dock's footer
    and its Clauses title both use this, so they always name the same range."""
    if k <= 0:
        return "no step yet"
    return "step 0" if k == 1 else f"steps 0–{k - 1}"


def range_summary(counts_cum: np.ndarray, ped: np.ndarray, car: np.ndarray, k: int, total: int,
                  firings: int | None = None, defaults: int | None = None) -> str:
    """The statistics footer for shown state ``k`` of ``total`` recorded steps, counting only steps < k.

    ``counts_cum`` is ``np.cumsum(action_counts(episode), axis=0)`` (int [T, 4]) and ``ped``/``car`` come from
    :func:`goals_cumulative`, so a cursor move costs O(1) whatever the length of the recording; ``firings`` /
    ``defaults`` are clause firings and default decisions in the same range (from :func:`clause_counts`).
    """
    if total == 0:
        return "No steps recorded yet."
    k = max(0, min(int(k), total))
    head = f"{step_range_text(k).capitalize()} (shown step {k} of {total} steps)"
    if k == 0:
        return head + ": nothing counted yet."
    tot = np.asarray(counts_cum[k - 1], np.int64)
    share = ", ".join(f"{n} {100.0 * v / max(int(tot.sum()), 1):.0f}%" for n, v in zip(ACTION_NAMES, tot))
    text = f"{head} · decisions: {share}"
    if firings is not None:
        text += f" · clause firings: {firings}" + (f" (+{defaults} default)" if defaults is not None else "")
    p = int(ped[k - 1]) if len(ped) >= k else 0
    c = int(car[k - 1]) if len(car) >= k else 0
    return text + f" · goals reached: {p} by pedestrians, {c} by cars"


class RunningStats:
    """The statistics of a growing recording, kept up to date incrementally.

    Why: the dock refreshes several times a second while a recording of 10,000+ steps grows; recomputing every
    per-step count from scratch would make each refresh O(recorded steps x agents). :meth:`update` scans only the steps
    recorded since the previous call (or everything again when the recording was replaced or cut), and the
    per-cursor figures are read from cumulative arrays in O(1) per clause.

    ``counts``: int [T, 4] agents per decided action in each step (:func:`action_counts`); ``counts_cum`` its
    cumulative sum; ``ped`` / ``car``: :func:`goals_cumulative`; ``clauses_cum``: int [T, C + 1] cumulative
    :func:`clause_counts` (row k - 1 = ``clause_counts(episode, upto=k)``).
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.episode = None
        self.steps = 0
        self.counts = np.zeros((0, 4), np.int64)
        self.counts_cum = np.zeros((0, 4), np.int64)
        self.ped = np.zeros(0, np.int64)
        self.car = np.zeros(0, np.int64)
        self.clauses_cum = np.zeros((0, 1), np.int64)

    def update(self, episode) -> bool:
        """Catch up with ``episode``; True when something changed."""
        t = episode.num_steps
        n_clauses = len(episode.meta.get("clauses", []))
        if episode is not self.episode or t < self.steps or self.clauses_cum.shape[1] < n_clauses + 1:
            self.reset()
            self.episode = episode
            self.clauses_cum = np.zeros((0, n_clauses + 1), np.int64)
        start = self.steps
        if t == start:
            return False
        counts = action_counts(episode, start, t)
        reached = np.asarray(episode.array("reached")[start:t], bool)
        kinds = np.asarray(episode.agents.kinds)
        ped = reached[:, kinds == Kind.PEDESTRIAN].sum(axis=1)
        car = reached[:, kinds == Kind.CAR].sum(axis=1)
        fired = np.asarray(episode.array("fired")[start:t], np.int64)
        width = self.clauses_cum.shape[1]
        if fired.size and int(fired.max()) >= width - 1:   # clause ids beyond the table: widen, count again
            self.reset()
            self.episode = episode
            self.clauses_cum = np.zeros((0, int(fired.max()) + 2), np.int64)
            return self.update(episode)
        cols = np.where(fired >= 0, fired, np.where(fired == FIRED_DEFAULT, width - 1, -1))
        rows = np.broadcast_to(np.arange(t - start)[:, None], fired.shape)
        ok = cols >= 0
        per_step = np.bincount(rows[ok] * width + cols[ok], minlength=(t - start) * width).reshape(t - start, width)

        def grow(cum: np.ndarray, new: np.ndarray) -> np.ndarray:
            base = cum[-1] if len(cum) else np.zeros(new.shape[1:], np.int64)
            return np.concatenate([cum, base + np.cumsum(new, axis=0)])

        self.counts = np.concatenate([self.counts, counts])
        self.counts_cum = grow(self.counts_cum, counts)
        self.ped = grow(self.ped[:, None], ped[:, None].astype(np.int64))[:, 0]
        self.car = grow(self.car[:, None], car[:, None].astype(np.int64))[:, 0]
        self.clauses_cum = grow(self.clauses_cum, per_step)
        self.steps = t
        return True

    def clause_counts(self, upto: int) -> np.ndarray:
        """Same as :func:`clause_counts` (episode, upto) for the episode last updated, in O(clauses)."""
        k = max(0, min(int(upto), self.steps))
        if k == 0:
            return np.zeros(self.clauses_cum.shape[1], np.int64)
        return self.clauses_cum[k - 1].copy()
