"""Where shards run: in this process, on a local process pool, or as Ray tasks (one machine or a cluster).

Why every backend gives identical output: a shard's bytes depend only on its options and parameters (its seeds),
never on which process runs it or in which order shards finish; the driver records results as they arrive and the
manifest lists shards in plan order. The backends differ only in where ``run_shard_in_worker`` runs.

Failures: a shard that raises is retried up to ``retries`` times, each failed attempt reported through
``on_failure``; after the last attempt the export stops with an :class:`ExportError` naming the shard and the error
(finished shards stay recorded). On Ray, ``max_retries`` additionally covers a worker process or node that dies.
Cancel: polled every 0.1 s; the pool is terminated / the Ray tasks are cancelled (force), and whatever they were
writing is a temporary file that the next run removes.
"""
from __future__ import annotations

import os
from typing import Any, Callable

from core.base.paths import ROOT
from core.export.registry import ExportError
from core.export.shards import ShardFailure, run_shard_in_worker

# The process pool's modules and ray are imported by the backend that uses them: `python main.py --help` imports this
# module for the --backend choices.

__all__ = ["make_backend", "BACKENDS", "default_workers"]

BACKENDS = ("local", "ray", "inline")

OnDone = Callable[[dict[str, Any]], None]
OnFailure = Callable[[Any], None]


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 400 else text[:400] + "…"


class _Base:
    def __init__(self, workers: int, retries: int) -> None:
        self.workers = workers
        self.retries = retries

    def _fail(self, name: str, attempt: int, exc: BaseException, on_failure: OnFailure) -> bool:
        """Report a failed attempt; True when the shard may run again."""
        on_failure(ShardFailure(name, attempt, _short(exc)))
        if attempt > self.retries:
            if isinstance(exc, ExportError):
                raise exc
            raise ExportError(f"shard {name} failed {attempt} time(s); last error: {_short(exc)}")
        return True


class InlineBackend(_Base):
    """Shards one after another in this process (the studio's fallback, the 1-process benchmark)."""

    def run(self, kind: str, options: dict, shards: list[dict], out: str, on_done: OnDone, on_failure: OnFailure,
            cancelled: Callable[[], bool]) -> None:
        for sh in shards:
            attempt = 0
            while True:
                if cancelled():
                    return
                attempt += 1
                try:
                    result = run_shard_in_worker(kind, options, sh, out)
                except Exception as exc:  # noqa: BLE001 - reported and retried, then an ExportError
                    self._fail(sh["name"], attempt, exc, on_failure)
                    continue
                on_done(result)
                break


class LocalBackend(_Base):
    """A pool of ``workers`` spawned processes (spawn: no forked copy of the studio's threads or Qt state).

    ``concurrent.futures.ProcessPoolExecutor``: a worker that dies (killed, out of memory, a crash in native code)
    breaks the pool instead of leaving its task waiting forever; the shards that were in flight are reported as
    failed attempts ("a worker process died") and run again on a new pool."""

    def run(self, kind: str, options: dict, shards: list[dict], out: str, on_done: OnDone, on_failure: OnFailure,
            cancelled: Callable[[], bool]) -> None:
        import multiprocessing as mp
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        n = min(self.workers, len(shards))

        def new_pool() -> ProcessPoolExecutor:
            return ProcessPoolExecutor(n, mp_context=mp.get_context("spawn"))

        pool = new_pool()
        attempts = {sh["name"]: 1 for sh in shards}
        futures = {pool.submit(run_shard_in_worker, kind, options, sh, out): sh for sh in shards}
        try:
            while futures:
                if cancelled():
                    return
                done, _ = wait(list(futures), timeout=0.1, return_when=FIRST_COMPLETED)
                again: list[dict] = []
                broken = False
                for fut in done:
                    sh = futures.pop(fut)
                    name = sh["name"]
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        self._fail(name, attempts[name], RuntimeError("a worker process died while the pool ran "
                                                                      "this shard"), on_failure)
                    except Exception as exc:  # noqa: BLE001 - reported and retried, then an ExportError
                        self._fail(name, attempts[name], exc, on_failure)
                    else:
                        on_done(result)
                        continue
                    attempts[name] += 1
                    again.append(sh)
                if broken:   # every other shard in flight is lost with the pool: resubmit them on a new one
                    again.extend(futures.values())
                    futures.clear()
                    _stop_pool(pool)
                    pool = new_pool()
                for sh in again:
                    futures[pool.submit(run_shard_in_worker, kind, options, sh, out)] = sh
        finally:
            _stop_pool(pool)


def _stop_pool(pool) -> None:
    """Stop a process pool now: queued shards are dropped and running workers terminated (what they were writing
    is a temporary file, removed by the next run)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        if p.is_alive():
            p.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        p.join(5)


class RayBackend(_Base):
    """Shards as Ray tasks: ``ray.init(address)`` when Ray is not initialised yet (``None`` starts or joins a
    local cluster; ``auto`` or ``ray://host:10001`` joins a running one, docs/export.md). ``workers`` caps the
    tasks in flight (default: the cluster's CPUs)."""

    def __init__(self, workers: int | None, retries: int, address: str | None) -> None:
        import ray

        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            # the workers import core.export from the studio's folder (the same path on every node, docs/export.md)
            root = str(ROOT)
            path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "runtime_env": {"env_vars": {"PYTHONPATH": path}}}
            if address:
                kwargs["address"] = address
            elif workers:
                kwargs["num_cpus"] = workers
            try:
                ray.init(**kwargs)
            except Exception as exc:  # noqa: BLE001 - connection problems are the user's to fix
                raise ExportError(f"cannot start or join the Ray cluster ({address or 'local'}): {_short(exc)}") \
                    from None
            self._started = True
        cpus = int(ray.cluster_resources().get("CPU", 1))
        super().__init__(workers or cpus, retries)

    def run(self, kind: str, options: dict, shards: list[dict], out: str, on_done: OnDone, on_failure: OnFailure,
            cancelled: Callable[[], bool]) -> None:
        ray = self._ray

        # max_retries: Ray re-runs a task whose worker process or node died; exceptions are retried below so that
        # each failed attempt is seen and reported
        task = ray.remote(max_retries=self.retries, num_cpus=1)(run_shard_in_worker)
        queue = list(shards)
        inflight: dict[Any, tuple[dict, int]] = {}

        def submit(sh: dict, attempt: int) -> None:
            inflight[task.remote(kind, options, sh, out)] = (sh, attempt)

        try:
            while queue or inflight:
                while queue and len(inflight) < self.workers:
                    submit(queue.pop(0), 1)
                if cancelled():
                    for ref in inflight:
                        ray.cancel(ref, force=True)
                    return
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=0.1)
                for ref in ready:
                    sh, attempt = inflight.pop(ref)
                    try:
                        result = ray.get(ref)
                    except Exception as exc:  # noqa: BLE001 - RayTaskError wraps the shard's exception
                        cause = getattr(exc, "cause", None) or exc
                        self._fail(sh["name"], attempt, cause, on_failure)
                        submit(sh, attempt + 1)
                        continue
                    on_done(result)
        finally:
            if self._started:
                ray.shutdown()


def make_backend(name: str, workers: int | None = None, ray_address: str | None = None, retries: int = 2):
    if workers is not None and workers < 1:
        raise ExportError(f"--workers must be >= 1, got {workers}")
    if name == "inline":
        return InlineBackend(1, retries)
    if name == "local":
        return LocalBackend(workers or default_workers(), retries)
    if name == "ray":
        return RayBackend(workers, retries, ray_address)
    raise ExportError(f"unknown backend {name!r} (backends: {', '.join(BACKENDS)})")
