"""Episode statistics for the studio's statistics dock and reports (no Qt): vectorised over recorded arrays."""
from __future__ import annotations

import numpy as np

from ..codes import Kind
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
