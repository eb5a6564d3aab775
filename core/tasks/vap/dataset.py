"""VAP dataset generation: simulate worlds, render frames, write labelled rows (docs/vap.md "Dataset").

Layout of a dataset folder::

    dataset_info.json                      manifest (settings, config hashes, seeds, counts per action)
    <stage>/world_<wwww>/step_<kkkk>.png   frames (1024² RGB by default)
    <stage>/world_<wwww>/frames.parquet    one row per frame (list columns: one entry per agent)
    <stage>/world_<wwww>/frames.jsonl      the same rows as JSON lines
    <stage>/world_<wwww>/world.json        the world's summary (seed, frames kept / dropped, action counts)

Why a folder per world, written under a temporary name and renamed when complete: a world is the unit of
resumption. An interrupted run (Ctrl-C, a killed process, Cancel in the studio) leaves only complete worlds, and
the next run with the same settings skips them. The manifest is rewritten (atomically) after every world.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core.agents.io import load_agent_set
from core.base.codes import ACTION_NAMES, Kind
from core.base.errors import ConfigError
from core.io.fileio import atomic_write_text, pid_alive
from core.render.icons import IconSet
from core.render.renderer import Renderer
from core.sim.config import SimConfig, load_mode
from core.sim.simulation import Simulation
from core.tasks.vap.compositions import random_composition
from core.tasks.vap.labels import (
    detailed_type,
    direction_heading,
    ground_truth,
    h_vectors,
    next_directions,
    own_directions,
    reference_label,
)
from core.tasks.vap.manifest import FORMAT, FORMAT_VERSION, MANIFEST, SKIP_STEPS, write_manifest  # noqa: F401 (re-exported)
from core.tasks.vap.png import BandCache, encode_png
from core.tasks.vap.pool import run_worlds, wait_for_workers, worker_state
from core.tasks.vap.schema import arrow_schema
from core.tasks.vap.settings import STAGES, VapDataConfig, config_hashes, fingerprint, mode_path

# pyarrow is imported when the frame tables are written.

_LOCK_NAME = ".generating.lock"

Progress = Callable[..., None]


class Cancel:
    """Normalises the ways a caller can ask generation to stop: a callable returning bool, an object with
    ``is_set()`` (threading.Event) or a ``cancelled`` attribute (the studio's JobContext)."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def __call__(self) -> bool:
        s = self.source
        if s is None:
            return False
        if hasattr(s, "is_set"):
            return bool(s.is_set())
        if hasattr(s, "cancelled") and not callable(s):
            c = s.cancelled
            return bool(c() if callable(c) else c)
        return bool(s())


@dataclass
class GenerationResult:
    """What :func:`generate` did: the manifest it wrote, worlds made and skipped, whether it was cancelled."""

    manifest: dict[str, Any]
    made: int
    skipped: int
    cancelled: bool
    frames: int
    seconds: float

    @property
    def frames_per_second(self) -> float:
        return self.frames / self.seconds if self.seconds > 0 else 0.0


def world_dir(out: Path, stage: str, w: int) -> Path:
    return out / stage / f"world_{w:04d}"


_CONFIG_CACHE: dict[tuple, dict[str, Any]] = {}


def load_stage_configs(config: VapDataConfig) -> dict[str, Any]:
    """The mode's :class:`~core.sim.config.SimConfig` per stage: one city, ontology and rule set, and each stage's
    own agent file when the mode names one (``agents_<stage>``). Cached per process while no file changed (the
    studio and tests generate repeatedly; loading the map is most of a small run's set-up)."""
    path = mode_path(config.mode).resolve()
    hit = _CONFIG_CACHE.get((str(path),))
    if hit is not None and hit["stamp"] == _stamp(hit["files"]):
        return hit["configs"]
    configs = _load_stage_configs(path)
    files = [str(path)] + sorted({f for c in configs.values() for f in c.files.values()})
    _CONFIG_CACHE[(str(path),)] = {"configs": configs, "files": files, "stamp": _stamp(files)}
    return configs


def _stamp(files: list[str]) -> tuple:
    out: list[tuple[str, int | None, int | None]] = []
    for f in files:
        try:
            st = os.stat(f)
            out.append((f, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((f, None, None))
    return tuple(out)


def _load_stage_configs(path: Path) -> dict[str, Any]:
    base = load_mode(path)
    files = base.extra.get("agent_files", {})
    out = {}
    for stage in STAGES:
        if stage in files:
            f = dict(base.files, agents=files[stage])
            out[stage] = replace(base.with_agents(load_agent_set(files[stage])), files=f)
        else:
            out[stage] = base
    return out


def _view_settings(config: VapDataConfig, sim_cfg) -> tuple[int, tuple[int, int, int, int]]:
    vap = sim_cfg.extra.get("vap", {}) or {}
    ppc = int(config.px_per_cell or vap.get("px_per_cell", 8))
    crop = tuple(int(v) for v in (config.crop or vap.get("crop", (0, 0, 128, 128))))
    if ppc < 1 or crop[2] <= 0 or crop[3] <= 0:
        raise ConfigError(f"bad VAP view: px_per_cell {ppc}, crop {crop}")
    return ppc, crop  # type: ignore[return-value]


class _Lock:
    """One generator per dataset folder: a second run on the same folder while one is alive is refused."""

    def __init__(self, out: Path) -> None:
        self.path = out / _LOCK_NAME

    def __enter__(self) -> "_Lock":
        if self.path.exists():
            try:
                pid = int(json.loads(self.path.read_text())["pid"])
            except (OSError, ValueError, KeyError, TypeError):
                pid = -1
            if pid > 0 and pid != os.getpid() and pid_alive(pid):
                raise ConfigError(f"{self.path.parent}: another generation (process {pid}) is writing this dataset")
        atomic_write_text(self.path, json.dumps({"pid": os.getpid(), "started": time.time()}))
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.path.unlink()
        except OSError:
            pass


def _clean_partials(out: Path) -> None:
    """Remove half-written worlds of runs that were interrupted (their temporary folders) and a manifest
    temporary file left by a run killed while it rewrote the manifest."""
    for p in out.glob(f"{MANIFEST}.*.tmp"):
        p.unlink(missing_ok=True)
    for stage in STAGES:
        d = out / stage
        if d.is_dir():
            for p in d.glob(".world_*.partial"):
                shutil.rmtree(p, ignore_errors=True)


def _check_existing(out: Path, fp: str) -> None:
    m = out / MANIFEST
    if not m.exists():
        return
    try:
        old = json.loads(m.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{m}: cannot read the existing manifest ({exc}); use another --out") from None
    if old.get("fingerprint") != fp:
        raise ConfigError(f"{out} holds a dataset made with other settings or config files (fingerprint "
                          f"{old.get('fingerprint')} vs {fp}); use another --out folder")


def generate(config: VapDataConfig, out_dir: str | Path, progress: Progress | None = None,
             cancel: Any = None) -> GenerationResult:
    """Generate (or complete) the dataset of ``config`` in ``out_dir``.

    ``progress(done_frames, total_frames, text)`` is called after every frame; ``cancel`` (callable, Event or
    JobContext) is polled after every frame: the world in progress is then discarded and the manifest says
    ``status: incomplete``. Worlds already complete in ``out_dir`` are skipped (resume).
    """
    t0 = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stop = Cancel(cancel)
    stage_cfgs = load_stage_configs(config)
    hashes = config_hashes(stage_cfgs, mode_path(config.mode))
    fp = fingerprint(config, hashes)
    _check_existing(out, fp)
    icons = _icon_set(config)
    made = skipped = frames = 0
    cancelled = False
    jobs = [(s, w) for s in STAGES for w in range(config.world_count(s))]
    per_world = config.steps - 1
    total = len(jobs) * per_world
    with _Lock(out):
        left = wait_for_workers(out)
        if left:
            raise ConfigError(f"{out}: worker processes {left} of an earlier generation are still writing")
        _clean_partials(out)
        todo = []
        for stage, w in jobs:
            if (world_dir(out, stage, w) / "world.json").exists():
                skipped += 1
            else:
                todo.append((stage, w))
        done = skipped * per_world
        if progress is not None and skipped:
            progress(done, total, f"{skipped} world(s) already done")
        ticks: dict[tuple[str, int], int] = {}

        def tick(stage: str, w: int, k: int) -> None:
            ticks[(stage, w)] = k
            if progress is not None:
                progress(done + sum(ticks.values()), total, f"{stage} world {w}")

        def world_done(summary: dict) -> None:
            nonlocal made, frames, done
            made += 1
            frames += summary["frames"]
            ticks.pop((summary["stage"], summary["world"]), None)
            done += per_world
            write_manifest(out, config, hashes, fp, stage_cfgs["train"])

        if config.workers > 1 and len(todo) > 1:
            cancelled = run_worlds(config, out, todo, _world_in_worker, stop, tick, world_done)
        else:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vap-png") as pool:
                for stage, w in todo:
                    if stop():
                        cancelled = True
                        break
                    summary = make_world(config, stage_cfgs[stage], stage, w, world_dir(out, stage, w), icons,
                                         pool, functools.partial(tick, stage, w), stop)
                    if summary is None:
                        cancelled = True
                        break
                    world_done(summary)
        manifest = write_manifest(out, config, hashes, fp, stage_cfgs["train"])
    return GenerationResult(manifest, made, skipped, cancelled, frames, time.perf_counter() - t0)


def _world_in_worker(stage: str, w: int) -> dict | None:
    """One world in a worker process of :func:`core.tasks.vap.pool.run_worlds` (None when cancelled)."""
    st = worker_state()
    cfg: VapDataConfig = st["config"]
    ticks, event = st["ticks"], st["stop"]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vap-png") as png:
        return make_world(cfg, load_stage_configs(cfg)[stage], stage, w, world_dir(st["out"], stage, w),
                          _icon_set(cfg), png, lambda k: ticks.put((stage, w, k)), event.is_set)


_DEFAULT_ICONS: list = []


def _icon_set(config: VapDataConfig):
    """The shipped art (loaded once per process) or the user's library (read again every run)."""
    if config.icons == "library":
        return IconSet.default()
    if not _DEFAULT_ICONS:
        _DEFAULT_ICONS.append(IconSet.load(library=None))
    return _DEFAULT_ICONS[0]


def _renderer(city, icons, ppc: int, seed: int, render_seed: int, cache: dict):
    """A renderer whose agent icon variants follow the world seed, sharing one static map per dataset."""
    r = Renderer(city, icons=icons, px_per_cell=ppc, seed=seed)
    key = (id(city), id(icons), ppc, render_seed)
    if key not in cache:
        if len(cache) >= 4:
            cache.clear()
        bg = Renderer(city, icons=icons, px_per_cell=ppc, seed=render_seed).background()
        bg.setflags(write=False)
        cache[key] = (city, icons, bg)   # city and icons kept alive: their ids cannot be reused meanwhile
    r._background = cache[key][2]  # the static map of render_seed; only agent variants use the world seed
    return r


_BG_CACHE: dict = {}
_BG_LOCK = threading.Lock()


def make_world(config: VapDataConfig, sim_cfg, stage: str, w: int, final: Path, icons, pool: ThreadPoolExecutor,
               tick: Callable[[int], None], stop: Callable[[], bool]) -> dict | None:
    """Simulate and write one world into ``final`` (via a temporary folder). None when cancelled."""
    seed = config.world_seed(stage, w)
    if config.agents == "random":
        sim_cfg = sim_cfg.with_agents(random_composition(stage, np.random.default_rng([seed, 0x5A])))
    ppc, crop = _view_settings(config, sim_cfg)
    with _BG_LOCK:
        renderer = _renderer(sim_cfg.city, icons, ppc, seed, config.render_seed, _BG_CACHE)
    tmp = final.parent / f".{final.name}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        rows, dropped = _simulate_world(config, sim_cfg, seed, renderer, crop, stage, w, tmp, pool,
                                        tick, stop)
        if rows is None:
            shutil.rmtree(tmp, ignore_errors=True)
            return None
        summary = _world_summary(config, sim_cfg, stage, w, seed, rows, dropped)
        _write_tables(tmp, rows)
        atomic_write_text(tmp / "world.json", json.dumps(summary, indent=1))
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        return summary
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _simulate_world(config: VapDataConfig, sim_cfg: SimConfig, seed: int, renderer: Renderer,
                    crop: tuple[int, int, int, int], stage: str, w: int, folder: Path, pool: ThreadPoolExecutor,
                    tick: Callable[[int], None], stop: Callable[[], bool]) -> tuple[list[dict] | None, list[int]]:
    sim = Simulation(sim_cfg, seed=seed, record=False)
    agents = sim.agents
    n = len(agents)
    kinds = np.asarray(agents.kinds)
    static = _agent_static(agents)
    side = crop[2] * renderer.ppc
    bands = BandCache(renderer.background(crop), config.png_level)   # unchanged map rows reuse their bytes
    rows: list[dict] = []
    dropped: list[int] = []
    futures: list[Future] = []
    prev = None
    for k in range(config.steps):
        snap = sim.snapshot()
        grounding, decisions = sim.decide(snap)
        outcome = sim.step(prepared=(grounding, decisions))
        if config.direction == "next":
            dirs = next_directions(snap.positions, sim.positions)
        else:
            dirs = own_directions(snap.headings)
        heads = np.array([direction_heading(d) for d in dirs], np.int64)
        frame = renderer.render(snap, previous=prev, crop=crop, headings=heads)
        prev = frame
        if k == 0:
            continue   # state 0 is not a frame (the reference renders 1..steps-1); drawn only for orientations
        if len(frame.boxes) != n or not all(frame.inside(i) for i in range(n)):
            dropped.append(k)
        else:
            name = f"step_{k:04d}.png"
            futures.append(pool.submit(_write_png, folder / name, frame.image, config.png_level, bands))
            gt = ground_truth(grounding)
            boxes = np.array([frame.boxes[i] for i in range(n)], np.int32)
            decided = np.asarray(outcome.decided, np.int8)
            rows.append(_row(stage, w, k, seed, f"{stage}/{world_dir(Path(), stage, w).name}/{name}",
                             frame.image.shape, static, boxes, dirs, side, gt, decided, kinds))
        tick(k)
        if stop():
            for f in futures:
                f.cancel()
            _wait(futures)
            return None, dropped
    _wait(futures)
    return rows, dropped


def _wait(futures: list[Future]) -> None:
    for f in futures:
        if not f.cancelled():
            f.result()


def _write_png(path: Path, image: np.ndarray, level: int, bands: BandCache | None = None) -> None:
    path.write_bytes(encode_png(image, level, bands))   # inside the world's temporary folder: renamed as a whole


def _agent_static(agents) -> dict[str, list]:
    n = len(agents)
    kinds = [int(k) for k in agents.kinds]
    return {
        "agent_index": list(range(n)),
        "agent_id": list(agents.names),
        "type": [Kind(k).label for k in kinds],
        "detailed_type": [detailed_type(kinds[i], agents.concept_names(i)) for i in range(n)],
        "priority": [int(p) for p in agents.priorities],
    }


def _row(stage, w, k, seed, image, shape, static, boxes, dirs, side, gt, decided, kinds) -> dict:
    h = h_vectors(boxes, dirs, np.asarray(static["priority"]), side)
    return {
        "stage": stage, "world": int(w), "step": int(k), "seed": int(seed), "image": image,
        "height": int(shape[0]), "width": int(shape[1]),
        **static,
        "box": boxes.tolist(), "direction": list(dirs), "h": h.tolist(),
        "unary": gt.unary.tolist(), "binary": gt.binary.tolist(), "sees": gt.sees.tolist(),
        "action": [int(a) for a in decided], "action_name": [ACTION_NAMES[int(a)] for a in decided],
        "label_ref": [reference_label(kinds[i], decided[i]) for i in range(len(decided))],
    }


def _world_summary(config, sim_cfg, stage, w, seed, rows, dropped) -> dict:
    cars = np.zeros(4, np.int64)
    cars_loader = np.zeros(4, np.int64)
    for r in rows:
        for t, a in zip(r["type"], r["action"]):
            if t == "Car":
                cars[a] += 1
                if r["step"] > SKIP_STEPS:
                    cars_loader[a] += 1
    return {"stage": stage, "world": int(w), "seed": int(seed), "frames": len(rows), "dropped": list(dropped),
            "agents": rows[0]["agent_id"] if rows else [],
            "detailed_types": rows[0]["detailed_type"] if rows else [],
            "car_actions": dict(zip(ACTION_NAMES, cars.tolist())),
            "car_actions_loader": dict(zip(ACTION_NAMES, cars_loader.tolist()))}


def _write_tables(folder: Path, rows: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(rows, schema=arrow_schema())
    tmp = folder / "frames.parquet.tmp"
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, folder / "frames.parquet")
    atomic_write_text(folder / "frames.jsonl", "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
