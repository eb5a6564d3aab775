#!/usr/bin/env python3
"""Studio responsiveness (offscreen Qt): timeline-scrub latency and playback speed.

For the bundled default city (18 agents) and a generated city with 100 agents it prints:

* latency from "set timeline step" to "frame drawn", over random steps (median and p95), two ways:
  - *map frame*: ``set_cursor(k)`` + ``flush_redraw("later")`` (scene built; glyphs, paths, goals, field of view,
    legend updated) + a synchronous repaint of the map viewport. This is what scrubbing shows first; the
    inspector and statistics follow in the next event-loop pass. Target (issue "Studio shell"): median < 16 ms.
  - *whole window*: ``flush_redraw("now")`` (inspector and statistics recomputed too) + a synchronous repaint of
    the whole main window (map, timeline, inspector with its plot, statistics plot, status bar).
  each with nothing selected and with an agent selected (field of view + inspector content).
* playback: steps per second while the studio plays "as fast as possible" and draws, next to the headless
  simulator's steps per second on the same config (the ratio is the GUI's cost), and the worst GUI event-loop
  gap seen meanwhile.
* memory per recorded step (Python allocations traced with tracemalloc while steps are recorded, after a warm-up):
  the studio (simulation worker with its checkpoints + the GUI's copy of the recording) next to the headless
  simulator recording the same steps.
* seek latency: branching back to a random past step (the worker restores the nearest checkpoint and replays the
  steps after it) until the studio reports the branch, median and worst.

Usage: QT_QPA_PLATFORM=offscreen python bench/gui.py [--samples 200] [--record 300] [--play-seconds 4] [--seeks 20]
       [--every-step-checkpoints]   (the former checkpoint policy, to compare memory per step and seek)
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LOGICITY_DATA_DIR", tempfile.mkdtemp(prefix="logicity-bench-"))

TARGET_MEDIAN_MS = 16.0


def generated_config(n_agents: int = 100):
    from core.agents.generate import random_agent_set
    from core.map.generate import generate_city
    from core.sim.config import SimConfig, load_mode

    base = load_mode(ROOT / "configs" / "modes" / "default.yaml")
    city = generate_city(7, blocks=(6, 6))
    return SimConfig(city=city, agents=random_agent_set(n_agents, seed=7), ontology=base.ontology, rules=base.rules,
                     name=f"generated 6x6 blocks, {n_agents} agents", rule_section=base.rule_section)


def run_loop(app, ms: int) -> None:
    from PySide6 import QtCore

    loop = QtCore.QEventLoop()
    QtCore.QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(app, pred, timeout: float = 120.0) -> None:
    end = time.time() + timeout
    while not pred():
        if time.time() > end:
            raise TimeoutError("benchmark step timed out")
        run_loop(app, 5)


def headless_rate(config, seconds: float = 2.0) -> float:
    from core.sim.simulation import Simulation

    sim = Simulation(config, seed=0)
    sim.run(3)
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds:
        sim.step()
        n += 1
    return n / (time.perf_counter() - t0)


def traced_kib() -> float:
    gc.collect()
    return tracemalloc.get_traced_memory()[0] / 1024


def headless_memory_per_step(config, warmup: int, steps: int) -> float:
    """KiB of Python allocations per recorded step of the headless simulator (recording on)."""
    from core.sim.simulation import Simulation

    tracemalloc.start()
    try:
        sim = Simulation(config, seed=0, record=True)
        sim.run(warmup)
        m0 = traced_kib()
        sim.run(steps)
        return (traced_kib() - m0) / steps
    finally:
        tracemalloc.stop()


def bench_case(app, title: str, project, args) -> dict:
    from PySide6 import QtCore

    from app.main_window import MainWindow
    from app.settings import make_settings

    win = MainWindow(make_settings(Path(tempfile.mkdtemp()) / "s.ini"))
    win.resize(1440, 900)
    win.show()
    win._install_project(project, None)
    wait_until(app, lambda: win.history is not None)
    # record an episode as fast as possible
    win.set_speed(0)
    warmup = max(10, args.record // 6)
    win.play()
    wait_until(app, lambda: win.num_steps >= warmup)
    win.pause()
    run_loop(app, 100)
    tracemalloc.start()   # memory per recorded step (both threads are traced); slows recording, not timed
    m0, s0 = traced_kib(), win.num_steps
    win.play()
    wait_until(app, lambda: win.num_steps >= args.record)
    win.pause()
    run_loop(app, 100)
    studio_kib = (traced_kib() - m0) / max(1, win.num_steps - s0)
    tracemalloc.stop()
    t = win.num_steps
    rng = np.random.default_rng(0)
    ks = rng.integers(0, t + 1, size=args.samples)
    out: dict = {"title": title, "agents": len(win.history.agents), "recorded": t, "studio KiB/step": studio_kib,
                 "headless KiB/step": headless_memory_per_step(project.config, warmup, t - warmup)}
    for label, sel in (("none", None), ("selected", 0)):
        win.select_agent(sel)
        run_loop(app, 50)
        for what in ("map", "window"):
            lat, cpu = [], []
            for k in ks:
                t0 = time.perf_counter()
                c0 = time.thread_time()
                win.set_cursor(int(k))
                if what == "map":
                    win.flush_redraw("later")
                    win.map.viewport().repaint()
                else:
                    win.flush_redraw("now")
                    win.repaint()
                lat.append(time.perf_counter() - t0)
                cpu.append(time.thread_time() - c0)
                run_loop(app, 2)   # let deferred work settle between samples (not timed)
            lat_ms = np.asarray(lat) * 1000
            out[(what, label)] = (float(np.median(lat_ms)), float(np.percentile(lat_ms, 95)),
                                  float(np.median(np.asarray(cpu) * 1000)))
    # playback while drawing (agent selected: the heaviest GUI load)
    win.set_cursor(win.num_steps)
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QtCore.QTimer()
    timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
    timer.timeout.connect(tick)
    win.play()
    run_loop(app, 300)
    s0, t0 = win.num_steps, time.perf_counter()
    last[0] = time.perf_counter()
    timer.start(5)
    run_loop(app, int(args.play_seconds * 1000))
    timer.stop()
    out["studio steps/s"] = (win.num_steps - s0) / (time.perf_counter() - t0)
    win.pause()
    out["worst gap ms"] = max(gaps) * 1000 if gaps else float("nan")
    out["headless steps/s"] = headless_rate(project.config)
    # seek: branch back to random past steps, newest first (each branch discards the steps after it)
    seeks = []
    branched: list[int] = []
    win.controller.worker.branched.connect(lambda _g, k: branched.append(k))
    for k in sorted(rng.choice(np.arange(1, t), size=min(args.seeks, t - 1), replace=False).tolist(), reverse=True):
        n = len(branched)
        t0 = time.perf_counter()
        win.branch_at(int(k))
        wait_until(app, lambda: len(branched) > n, timeout=60)
        seeks.append((time.perf_counter() - t0) * 1000)
    out["seek ms"] = (float(np.median(seeks)), float(np.max(seeks))) if seeks else (float("nan"), float("nan"))
    win.dirty = False
    win.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=200, help="timeline steps to time per case")
    ap.add_argument("--record", type=int, default=300, help="steps to record before timing")
    ap.add_argument("--play-seconds", type=float, default=4.0)
    ap.add_argument("--seeks", type=int, default=20, help="branches back to random past steps to time")
    ap.add_argument("--every-step-checkpoints", action="store_true",
                    help="the worker's former policy (a checkpoint after every step), for comparison")
    ap.add_argument("--quick", action="store_true", help="smoke run (fewer samples and steps)")
    args = ap.parse_args()
    if args.quick:
        args.samples, args.record, args.play_seconds, args.seeks = 40, 60, 1.5, 8
    from PySide6 import QtWidgets

    from core.project import new_project
    from core.sim.config import load_mode

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    if args.every_step_checkpoints:
        import app.worker as worker

        worker.CHECKPOINT_EVERY, worker.REPLAY_AGENT_STEPS = 1, None
    cases = [("default city (18 agents)", new_project(load_mode(ROOT / "configs" / "modes" / "default.yaml"))),
             ("generated city (100 agents)", new_project(generated_config(100)))]
    results = [bench_case(app, title, proj, args) for title, proj in cases]
    print(f"\nTimeline step -> frame drawn (ms), {args.samples} random steps; target: map frame median < "
          f"{TARGET_MEDIAN_MS:g} ms")
    print("(wall clock; 'cpu' = GUI-thread CPU time, which other processes on a busy machine do not inflate)")
    print(f"{'scenario':<30}{'selection':>10}{'map median':>12}{'p95':>8}{'cpu':>7}{'window median':>15}"
          f"{'p95':>8}{'cpu':>7}")
    ok = True
    for r in results:
        for sel in ("none", "selected"):
            (m1, p1, c1), (m2, p2, c2) = r[("map", sel)], r[("window", sel)]
            ok &= m1 < TARGET_MEDIAN_MS
            print(f"{r['title']:<30}{sel:>10}{m1:>12.2f}{p1:>8.2f}{c1:>7.2f}{m2:>15.2f}{p2:>8.2f}{c2:>7.2f}")
    print("\nPlayback, as fast as possible, studio drawing with an agent selected")
    print(f"{'scenario':<30}{'studio steps/s':>15}{'headless steps/s':>18}{'ratio':>8}{'worst GUI gap ms':>18}")
    for r in results:
        ratio = r["studio steps/s"] / r["headless steps/s"] if r["headless steps/s"] else float("nan")
        print(f"{r['title']:<30}{r['studio steps/s']:>15.1f}{r['headless steps/s']:>18.1f}{ratio:>8.2f}"
              f"{r['worst gap ms']:>18.1f}")
    print("\nMemory per recorded step (KiB, tracemalloc) and seek (branch back to a random past step, ms)")
    print(f"{'scenario':<30}{'studio KiB/step':>16}{'headless KiB/step':>19}{'seek median':>13}{'seek worst':>12}")
    for r in results:
        print(f"{r['title']:<30}{r['studio KiB/step']:>16.2f}{r['headless KiB/step']:>19.2f}{r['seek ms'][0]:>13.2f}"
              f"{r['seek ms'][1]:>12.2f}")
    print(f"\nmap-frame median target {'met' if ok else 'MISSED'} (load average during the run: "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
