"""Python's cyclic garbage is collected in the GUI thread only, while a Qt application runs.

Why: the automatic collector runs in whichever thread happens to allocate when a threshold is crossed. When that is
a job thread (app/jobs.py) or the simulation worker, it destroys whatever unreachable Qt objects it finds there —
objects that belong to the GUI thread. Measured in our own test suite: one job thread freed QTimer, QEventLoop,
QPainter and QPicture wrappers made by the GUI thread. Qt forbids destroying an object from another thread (a timer
cannot even be stopped there), and the result is a crash or a deadlock that no Python-level watchdog can report,
because the thread that destroys holds the GIL while it waits.

pyqtgraph ships the well-known remedy, :class:`pyqtgraph.util.garbage_collector.GarbageCollector`: it turns the
automatic collector off and collects, generation by generation with the same thresholds, from a timer in the GUI
thread. :func:`install` starts one (``main.py`` studio and ``spf play`` do, right after creating the
QApplication); :func:`uninstall` stops it and turns the automatic collector back on (the test suite does this after
each Qt test, so non-Qt tests that follow, which run no event loop, are collected as usual).
"""
from __future__ import annotations

import gc

__all__ = ["install", "uninstall", "installed"]

#: how often the GUI thread checks the collector's counts (pyqtgraph's default is 1 s; job threads allocate fast)
INTERVAL_S = 0.25

_collector = None


def install(interval_s: float = INTERVAL_S) -> None:
    """Collect cyclic garbage only from a timer in the calling (GUI) thread; idempotent. Needs a QApplication."""
    global _collector
    if _collector is not None:
        return
    from pyqtgraph.util.garbage_collector import GarbageCollector

    _collector = GarbageCollector(interval=interval_s)


def uninstall() -> None:
    """Stop the GUI-thread collector, collect once here, and turn Python's automatic collector back on."""
    global _collector
    if _collector is None:
        return
    _collector.timer.stop()
    _collector = None
    gc.collect()
    gc.enable()


def installed() -> bool:
    return _collector is not None
