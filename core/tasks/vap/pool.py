"""Worlds generated in worker processes (``VapDataConfig.workers`` > 1): the simulation, labels and rendering of
one world hold the GIL, so threads alone leave the second core to the PNG encoder; a process per core makes whole
worlds in parallel.

Why this is safe for the dataset: a world is a pure function of the settings and its seed, written into its own
temporary folder and renamed when complete (``dataset.make_world``), so the files do not depend on which process
made a world or in which order worlds finish; the parent rebuilds the manifest from the complete worlds on disk
after each one. Processes are *spawned* (never forked: the studio calling this has Qt threads) and only plain
values cross between them (the settings as a dict, world indices, frame ticks, the world summary). Cancel sets an
event every worker polls after each frame (its world in progress is discarded); on Linux a worker dies with its
parent (a killed ``vap make`` leaves no orphan writing into the folder the next run cleans).
"""
from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import queue
import signal
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable

from core.io.fileio import pid_alive
from core.tasks.vap.settings import VapDataConfig

_STATE: dict[str, Any] = {}


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):       # not Linux: the worker ends when its task queue closes instead
        pass


#: a worker's marker in the dataset folder while it lives (see :func:`wait_for_workers`)
WORKER_MARK = ".worker_{pid}.pid"


def _init(config: dict, out: str, stop, ticks) -> None:
    _die_with_parent()
    (Path(out) / WORKER_MARK.format(pid=os.getpid())).write_text(str(os.getppid()))
    _STATE.update(config=VapDataConfig.from_dict(config), out=Path(out), stop=stop, ticks=ticks)


def worker_state() -> dict[str, Any]:
    """In a worker: the settings, dataset folder, cancel event and tick queue its initializer received."""
    return _STATE


def run_worlds(config: VapDataConfig, out: Path, todo: list[tuple[str, int]], work: Callable[[str, int], Any],
               stop: Callable[[], bool], on_tick: Callable[[str, int, int], None],
               on_world: Callable[[dict], None]) -> bool:
    """Run ``work(stage, w)`` (a module-level function, summary or None when cancelled) for the worlds ``todo``
    in ``config.workers`` processes; ``on_tick(stage, w, k)`` per frame and ``on_world(summary)`` per complete
    world are called in this thread. Returns True when cancelled. A worker's error cancels the rest and is raised
    here."""
    ctx = mp.get_context("spawn")
    event, ticks = ctx.Event(), ctx.Queue()
    cancelled = False
    with ProcessPoolExecutor(max_workers=min(config.workers, len(todo)), mp_context=ctx, initializer=_init,
                             initargs=(config.to_dict(), str(out), event, ticks)) as ex:
        pending: dict[Future, tuple[str, int]] = {ex.submit(work, s, w): (s, w) for s, w in todo}
        try:
            while pending:
                try:
                    on_tick(*ticks.get(timeout=0.05))
                    while True:
                        on_tick(*ticks.get_nowait())
                except queue.Empty:
                    pass
                for f in [f for f in pending if f.done()]:
                    pending.pop(f)
                    if f.cancelled():
                        continue
                    summary = f.result()
                    if summary is None:
                        cancelled = True
                    else:
                        on_world(summary)
                if not cancelled and stop():
                    cancelled = True
                if cancelled:
                    event.set()
                    for f in pending:
                        f.cancel()
        except BaseException:
            event.set()
            for f in pending:
                f.cancel()
            raise
    for mark in Path(out).glob(WORKER_MARK.format(pid="*")):   # every worker has ended (the pool joined them)
        mark.unlink(missing_ok=True)
    return cancelled


def wait_for_workers(out: Path, seconds: float = 15.0) -> list[int]:
    """Before a run writes into ``out``: wait for worker processes of a killed run to end (they get SIGKILL when
    their parent dies, but a loaded machine may run them a little longer, and one must never write into the
    temporary world folder of the next run). Returns the pids still alive after ``seconds``; stale marks of
    ended workers are removed."""
    deadline = time.monotonic() + seconds
    alive = []
    for mark in sorted(Path(out).glob(WORKER_MARK.format(pid="*"))):
        try:
            pid = int(mark.name.split("_")[1].split(".")[0])
        except (IndexError, ValueError):
            continue
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(pid):
            alive.append(pid)
        else:
            mark.unlink(missing_ok=True)
    return alive
