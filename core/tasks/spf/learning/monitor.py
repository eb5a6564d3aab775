"""Progress, cancel and live metrics of a training run, shared by the CLI (tqdm) and the studio (a job's context).

A learner calls ``monitor.progress(done, total)`` as it goes, ``monitor.metric(step, name=value, ...)`` for the live
plot (``reward``: mean training reward of recent episodes, ``val_tsr`` / ``val_score``: validation figures) and
checks ``monitor.cancelled``; on cancel it stops and keeps the best checkpoint written so far.
"""
from __future__ import annotations

import time
from typing import Callable

from core.tasks.spf.evaluate import evaluate
from core.tasks.spf.policy import Policy

__all__ = ["Monitor", "CallbackMonitor", "validate"]


class Monitor:
    """No-op monitor (the base the others extend)."""

    cancelled = False

    def progress(self, done: int, total: int) -> None:
        pass

    def metric(self, step: int, **values: float) -> None:
        pass

    def message(self, text: str) -> None:
        pass


class CallbackMonitor(Monitor):
    """A monitor from plain callables (what the studio's job runner and tests pass)."""

    def __init__(self, progress: Callable[[int, int], None] | None = None,
                 metric: Callable[[int, dict], None] | None = None,
                 cancelled: Callable[[], bool] | None = None,
                 message: Callable[[str], None] | None = None) -> None:
        self._progress, self._metric, self._cancelled, self._message = progress, metric, cancelled, message

    @property
    def cancelled(self) -> bool:  # type: ignore[override]
        return bool(self._cancelled and self._cancelled())

    def progress(self, done: int, total: int) -> None:
        if self._progress:
            self._progress(done, total)

    def metric(self, step: int, **values: float) -> None:
        if self._metric:
            self._metric(step, values)

    def message(self, text: str) -> None:
        if self._message:
            self._message(text)


def validate(policy: Policy, mode: str, episodes: int, split: str = "val") -> dict:
    """TSR / DSR / Score of ``policy`` on the first ``episodes`` episodes of the mode's ``split`` set (0: all of
    them), with the fixed test reward (the same code as ``spf eval``)."""
    t = time.perf_counter()
    rep = evaluate(mode, policy, split, episodes=list(range(episodes)) if episodes else None)
    d = rep.to_dict()
    return {"TSR": round(d["TSR"], 4), "DSR": round(d["DSR"], 4), "DSR_average": round(d["DSR_average"], 4),
            "Score": round(d["Score"], 4), "episodes": d["episodes"], "seconds": round(time.perf_counter() - t, 1)}
