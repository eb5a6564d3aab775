"""VAP metrics (docs/vap.md "Metrics"): per-action recall, aAcc, wAcc and per-concept recall.

Definitions (the reference's, docs/reference.md#vap-metrics): over the evaluated agents (cars by default),
recall_c = correct_c / n_c per action c (nan when n_c = 0); aAcc = mean over images of the image's accuracy over
its evaluated agents; wAcc = Σ_c (recall_c / n_c) / Σ_c (1 / n_c) over the actions with n_c > 0 (inverse-frequency
weights). Images with no evaluated agent are left out of aAcc (the reference divides by zero there).
Pure numpy, so the arithmetic is tested without torch.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from core.base.codes import ACTION_NAMES


def weighted_accuracy(recalls: Sequence[float], counts: Sequence[int]) -> float:
    """wAcc from per-action recalls and ground-truth counts (actions with count 0 are skipped)."""
    num = den = 0.0
    for r, n in zip(recalls, counts):
        if n > 0 and not math.isnan(r):
            num += r / n
            den += 1.0 / n
    return num / den if den > 0 else float("nan")


@dataclass
class ActionMetrics:
    """Accumulates predictions image by image; read the figures when done."""

    n_actions: int = 4
    correct: np.ndarray = field(default_factory=lambda: np.zeros(4, np.int64))
    total: np.ndarray = field(default_factory=lambda: np.zeros(4, np.int64))
    confusion: np.ndarray = field(default_factory=lambda: np.zeros((4, 4), np.int64))   # [true, predicted]
    image_acc: list = field(default_factory=list)

    def add_image(self, pred: Iterable[int], true: Iterable[int]) -> None:
        p = np.asarray(list(pred), np.int64)
        t = np.asarray(list(true), np.int64)
        if len(p) != len(t):
            raise ValueError("pred and true must have one entry per evaluated agent")
        if len(t) == 0:
            return
        np.add.at(self.confusion, (t, p), 1)
        np.add.at(self.total, t, 1)
        np.add.at(self.correct, t[p == t], 1)
        self.image_acc.append(float((p == t).mean()))

    @property
    def recalls(self) -> list[float]:
        return [float(k / n) if n else float("nan") for k, n in zip(self.correct, self.total)]

    @property
    def a_acc(self) -> float:
        return float(np.mean(self.image_acc)) if self.image_acc else float("nan")

    @property
    def w_acc(self) -> float:
        return weighted_accuracy(self.recalls, self.total.tolist())

    def to_dict(self) -> dict:
        return {"recall": dict(zip(ACTION_NAMES, self.recalls)), "num_actions": dict(zip(ACTION_NAMES,
                self.total.tolist())), "aAcc": self.a_acc, "wAcc": self.w_acc, "images": len(self.image_acc),
                "confusion": self.confusion.tolist()}


@dataclass
class ConceptRecall:
    """Per-concept recall of predicted groundings: TP / (TP + FN) for each predicate (Table D)."""

    names: Sequence[str]
    tp: np.ndarray = None   # type: ignore[assignment]
    pos: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.tp = np.zeros(len(self.names), np.int64)
        self.pos = np.zeros(len(self.names), np.int64)

    def add(self, pred: np.ndarray, true: np.ndarray) -> None:
        """``pred``/``true`` bool ``[..., C]`` (C = number of concepts)."""
        p = np.asarray(pred, bool).reshape(-1, len(self.names))
        t = np.asarray(true, bool).reshape(-1, len(self.names))
        self.tp += (p & t).sum(axis=0)
        self.pos += t.sum(axis=0)

    @property
    def recalls(self) -> dict[str, float]:
        return {n: float(k / m) if m else float("nan") for n, k, m in zip(self.names, self.tp, self.pos)}


def format_table3(m: ActionMetrics, title: str = "") -> str:
    """Table 3's layout: per-action recall, then aAcc and wAcc; a Num. Actions row."""
    head = f"{'':<12}" + "".join(f"{a:>9}" for a in ACTION_NAMES) + f"{'aAcc':>9}{'wAcc':>9}"
    rec = f"{'Recall':<12}" + "".join(f"{r:>9.4f}" for r in m.recalls) + f"{m.a_acc:>9.4f}{m.w_acc:>9.4f}"
    num = f"{'Num. Actions':<12}" + "".join(f"{int(n):>9d}" for n in m.total)
    return "\n".join(([title] if title else []) + [head, rec, num])


def format_concepts(unary: ConceptRecall, binary: ConceptRecall) -> str:
    """Table D's layout: one line per concept with its recall."""
    lines = ["Concept recall (Table D)"]
    for table in (unary, binary):
        for name, r in table.recalls.items():
            lines.append(f"  {name:<16}{r:>8.4f}   ({int(table.pos[list(table.names).index(name)])} positives)")
    return "\n".join(lines)
