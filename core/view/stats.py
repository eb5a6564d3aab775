"""Episode statistics for the studio's statistics dock and reports (no Qt): vectorised over recorded arrays."""
from __future__ import annotations

import numpy as np

from ..codes import ACTION_NAMES, Kind
from ..sim.episode import FIRED_DEFAULT


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
