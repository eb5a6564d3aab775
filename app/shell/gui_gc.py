"""Python's cyclic garbage is collected in the GUI thread only, while a Qt application runs.

Why: the automatic collector runs in whichever thread happens to allocate when a threshold is crossed. When that is
a job thread (app/shell/jobs.py) or the simulation worker, it destroys whatever unreachable Qt objects it finds there —
objects that belong to the GUI thread, e.g. QTimer, QEventLoop, QPainter and QPicture wrappers the GUI thread
made. Qt forbids destroying an object from another thread (a timer cannot even be stopped there), and the result is
a crash or a deadlock that no Python-level watchdog can report, because the thread that destroys holds the GIL while
it waits.

pyqtgraph ships the well-known remedy, :class:`pyqtgraph.util.garbage_collector.GarbageCollector`: it turns the
automatic collector off and collects, generation by generation with the same thresholds, from a timer in the GUI
thread. :func:`install` starts one (``main.py`` studio and ``spf play`` do, right after creating the
QApplication); :func:`uninstall` stops it and turns the automatic collector back on (the test suite does this after
each Qt test, so non-Qt tests that follow, which run no event loop, are collected as usual).

Long recordings: a full (oldest-generation) collection walks every tracked object. A long recording of a big city
holds hundreds of thousands of them (the worker's checkpoints and blocked-agent records among them), and a full
collection, once every 10 younger ones, then stalls the GUI thread long enough to make playback stutter.
The survivors of a full collection are long-lived by definition, so when a full collection took long
(:data:`FREEZE_AFTER_S`) this collector freezes them (``gc.freeze``):
the next full collection walks only what was allocated since. Frozen objects are still freed by reference
counting; only a reference cycle among them waits, until :func:`release_long_lived` (a project is closed or
replaced: the project controller calls it) or :func:`uninstall` unfreezes them for the next full collection.
"""
from __future__ import annotations

import gc
import time

__all__ = ["install", "uninstall", "installed", "release_long_lived"]

#: a full collection that took this long (a big heap: a long recording) freezes its survivors; a small heap is not
#: frozen, so its reference cycles are freed as soon as they form
FREEZE_AFTER_S = 0.02

#: how often the GUI thread checks the collector's counts (pyqtgraph's default is 1 s; job threads allocate fast)
INTERVAL_S = 0.25

_collector = None


def install(interval_s: float = INTERVAL_S) -> None:
    """Collect cyclic garbage only from a timer in the calling (GUI) thread; idempotent. Needs a QApplication."""
    global _collector
    if _collector is not None:
        return
    from pyqtgraph.util.garbage_collector import GarbageCollector

    class FreezingCollector(GarbageCollector):
        """pyqtgraph's collector (the same generations and thresholds), freezing what a full collection leaves."""

        def check(self) -> None:
            oldest = gc.get_count()[2]
            start = time.perf_counter()
            super().check()
            full = gc.get_count()[2] < oldest      # a full collection resets the oldest generation's count
            if full and time.perf_counter() - start >= FREEZE_AFTER_S:
                gc.freeze()

    _collector = FreezingCollector(interval=interval_s)


def release_long_lived() -> None:
    """Unfreeze what earlier full collections froze: the next full collection walks it again and frees the cycles
    among it (the objects of a project just closed). Cheap; the walk happens at the collector's next full pass."""
    gc.unfreeze()


def uninstall() -> None:
    """Stop the GUI-thread collector, collect once here, and turn Python's automatic collector back on."""
    global _collector
    if _collector is None:
        return
    _collector.timer.stop()
    _collector = None
    gc.unfreeze()
    gc.collect()
    gc.enable()


def installed() -> bool:
    return _collector is not None
