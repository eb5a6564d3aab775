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

import multiprocessing as mp
import queue
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from .settings import VapDataConfig

_STATE: dict[str, Any] = {}


def _die_with_parent() -> None:
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):       # not Linux: the worker ends when its task queue closes instead
        pass


def _init(config: dict, out: str, stop, ticks) -> None:
    _die_with_parent()
    _STATE.update(config=VapDataConfig.from_dict(config), out=Path(out), stop=stop, ticks=ticks)


def _world(stage: str, w: int) -> dict | None:
    """Make world ``w`` of ``stage`` in this worker (None when cancelled)."""
    from .dataset import _icon_set, load_stage_configs, make_world, world_dir

    cfg: VapDataConfig = _STATE["config"]
    ticks, stop = _STATE["ticks"], _STATE["stop"]
    sim_cfg = load_stage_configs(cfg)[stage]

    def tick(k: int) -> None:
        ticks.put((stage, w, k))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vap-png") as png:
        return make_world(cfg, sim_cfg, stage, w, world_dir(_STATE["out"], stage, w), _icon_set(cfg), png, tick,
                          stop.is_set)


def run_worlds(config: VapDataConfig, out: Path, todo: list[tuple[str, int]], stop: Callable[[], bool],
               on_tick: Callable[[str, int, int], None], on_world: Callable[[dict], None]) -> bool:
    """Make the worlds ``todo`` in ``config.workers`` processes; ``on_tick(stage, w, k)`` per frame and
    ``on_world(summary)`` per complete world are called in this thread. Returns True when cancelled. A worker's
    error cancels the rest and is raised here."""
    ctx = mp.get_context("spawn")
    event, ticks = ctx.Event(), ctx.Queue()
    cancelled = False
    with ProcessPoolExecutor(max_workers=min(config.workers, len(todo)), mp_context=ctx, initializer=_init,
                             initargs=(config.to_dict(), str(out), event, ticks)) as ex:
        pending: dict[Future, tuple[str, int]] = {ex.submit(_world, s, w): (s, w) for s, w in todo}
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
    return cancelled
