#!/usr/bin/env python3
"""Studio responsiveness (offscreen Qt): timeline-scrub latency and playback speed.

For the bundled default city (18 agents) and a generated city with 100 agents it prints:

* latency from "set timeline step" to "frame drawn", over random steps (median and p95), two ways:
  - *map frame*: ``set_cursor(k)`` + ``flush_redraw("later")`` (scene built; glyphs, paths, goals, field of view,
    legend updated) + a synchronous repaint of the map viewport. This is what scrubbing shows first; the
    inspector and statistics follow in the next event-loop pass. Target: median < 16 ms.
  - *whole window*: ``flush_redraw("now")`` (inspector and statistics recomputed too, and the Agents panel's rows,
    which the studio refreshes in a pass of their own) + a synchronous repaint of the whole main window (map,
    timeline, inspector with its plot, statistics plot, Agents panel, status bar; hidden panels are not drawn).
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
       [--every-step-checkpoints]   (a checkpoint after every step, to compare memory per step and seek)
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


def wait_until(app, pred, timeout: float = 1800.0) -> None:
    """Run the event loop until ``pred()`` (generous timeout: a loaded shared machine records slowly)."""
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

    from tests.support.driver import studio_window

    win = studio_window(Path(tempfile.mkdtemp()) / "s.ini")
    win.window.resize(1440, 900)
    win.window.show()
    win.feature("project").install(project, None)
    wait_until(app, lambda: win.history is not None)
    # record an episode as fast as possible
    win.set_speed(0)
    warmup = max(10, args.record // 6)
    win.play()
    wait_until(app, lambda: win.num_steps >= warmup)
    win.pause()
    run_loop(app, 100)
    if args.memory:
        tracemalloc.start()   # memory per recorded step (both threads are traced); slows recording, not timed
    m0, s0 = traced_kib(), win.num_steps
    win.play()
    wait_until(app, lambda: win.num_steps >= args.record)
    win.pause()
    run_loop(app, 100)
    studio_kib = (traced_kib() - m0) / max(1, win.num_steps - s0) if args.memory else float("nan")
    tracemalloc.stop()
    t = win.num_steps
    rng = np.random.default_rng(0)
    ks = rng.integers(0, t + 1, size=args.samples)
    out: dict = {"title": title, "agents": len(win.history.agents), "recorded": t, "studio KiB/step": studio_kib,
                 "headless KiB/step": headless_memory_per_step(project.config, warmup, t - warmup)
                 if args.memory else float("nan")}
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
                    agents = getattr(win, "agents_ctl", None)   # the Agents panel's rows too (33d0b4c has none)
                    if agents is not None:
                        agents.refresh_rows()
                    win.window.repaint()
                lat.append(time.perf_counter() - t0)
                cpu.append(time.thread_time() - c0)
                settle(app)   # deferred work and its paints finish between samples (not timed)
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
    win.simulation.worker.branched.connect(lambda _g, k: branched.append(k))
    n_seeks = min(args.seeks, t - 1) if hasattr(win, "branch_at") else 0   # 33d0b4c (comparisons) has no branch_at
    for k in sorted(rng.choice(np.arange(1, t), size=n_seeks, replace=False).tolist(), reverse=True):
        n = len(branched)
        t0 = time.perf_counter()
        win.branch_at(int(k))
        wait_until(app, lambda n=n: len(branched) > n, timeout=60)
        seeks.append((time.perf_counter() - t0) * 1000)
    out["seek ms"] = (float(np.median(seeks)), float(np.max(seeks))) if seeks else (float("nan"), float("nan"))
    win.session.mark_saved()
    win.window.close()
    return out


LONG_GAP_TARGET_MS = 50.0       # worst event-loop gap while playing a long recording
LONG_SEEK_TARGET_MS = 16.0      # and full-window seek median, at 10,000 steps and 200 agents


def long_recording(steps: int, agents: int, cache: Path):
    """(project, episode, seconds spent simulating): ``steps`` steps of the generated city with ``agents`` agents,
    simulated headless with seed 0 and kept as an episode file in ``cache`` (the next run reads it)."""
    from core.project.model import new_project
    from core.sim.episode import load_episode
    from core.sim.simulation import Simulation

    config = generated_config(agents)
    path = cache / f"long-{agents}agents-{steps}steps-seed0.npz"
    spent = 0.0
    if not path.exists():
        t0 = time.perf_counter()
        sim = Simulation(config, seed=0, record=True)
        sim.run(steps)
        cache.mkdir(parents=True, exist_ok=True)
        sim.buffer.save(path)
        spent = time.perf_counter() - t0
    project = new_project(config)
    project.seed = 0
    return project, load_episode(path), spent


def until_idle(app, done, timeout: float = 10.0) -> None:
    """Run the real event loop until ``done()`` holds when the loop is about to sleep (every posted event, paints
    included, has been handled by then)."""
    from PySide6 import QtCore

    disp = QtCore.QAbstractEventDispatcher.instance(QtCore.QThread.currentThread())
    loop = QtCore.QEventLoop()

    def check() -> None:
        if done():
            loop.quit()

    disp.aboutToBlock.connect(check)
    guard = QtCore.QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(loop.quit)
    guard.start(int(timeout * 1000))
    loop.exec()
    guard.stop()
    disp.aboutToBlock.disconnect(check)


def settle(app) -> None:
    """Let the event loop finish what the last sample deferred (panels refreshed in a later pass and their
    paints), so none of it is painted inside the next timed sample (a synchronous repaint paints every widget of
    the window that is still dirty)."""
    run_loop(app, 2)
    for _ in range(3):
        until_idle(app, lambda: True, timeout=1.0)


class GapProbe:
    """A 5 ms precise timer on the GUI thread: the longest wait between two of its ticks is the longest time the
    event loop could not answer (wall clock), with the GUI thread's CPU time over that wait beside it (what our code
    spent; the rest is waiting for a core or the GIL)."""

    def __init__(self) -> None:
        from PySide6 import QtCore

        self.gaps: list[tuple[float, float]] = []
        self.timer = QtCore.QTimer()
        self.timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        self.gaps.append((now - self._last[0], cpu - self._last[1]))
        self._last = (now, cpu)

    def start(self) -> None:
        self.gaps.clear()
        self._last = (time.perf_counter(), time.thread_time())
        self.timer.start(5)

    def stop(self) -> dict:
        self.timer.stop()
        if not self.gaps:
            return {"worst": float("nan"), "worst cpu": float("nan"), "p99": float("nan"), "over": 0}
        wall = np.asarray([g[0] for g in self.gaps]) * 1000
        cpu = np.asarray([g[1] for g in self.gaps]) * 1000
        i = int(np.argmax(wall))
        return {"worst": float(wall[i]), "worst cpu": float(cpu[i]), "max cpu": float(cpu.max()),
                "p99": float(np.percentile(wall, 99)), "over": int((wall >= LONG_GAP_TARGET_MS).sum()),
                "ticks": len(wall)}


def long_case(app, args) -> dict:
    """10,000 recorded steps x 200 agents, driven through the real event loop: mouse clicks and a drag on the
    timeline (seek), live playback and replay (event-loop gaps)."""
    from PySide6 import QtCore
    from PySide6.QtTest import QTest

    from tests.support.driver import studio_window

    project, episode, spent = long_recording(args.long_steps, args.long_agents, Path(args.long_cache))
    win = studio_window(Path(tempfile.mkdtemp()) / "s.ini")
    win.window.resize(1440, 900)
    win.window.show()
    t0 = time.perf_counter()
    win.feature("project").install(project, episode)
    wait_until(app, lambda: win.history is not None and not win.syncing, timeout=3600)
    out: dict = {"title": f"{args.long_steps} steps x {args.long_agents} agents", "simulated s": spent,
                 "sync s": time.perf_counter() - t0, "recorded": win.num_steps, "continuable": win.sim_steps}
    win.select_agent(0)
    run_loop(app, 300)
    drawn: list[int] = []
    win.drawing.drawn.connect(drawn.append)
    bar = win.timeline.bar
    y = bar.height() - 12
    rng = np.random.default_rng(1)

    def settled(k: int):
        return lambda: bool(drawn) and drawn[-1] == k and not win.drawing._slow_pending \
            and not win.drawing._timer.isActive()

    def seek(action) -> tuple[float, float]:
        drawn.clear()
        t0, c0 = time.perf_counter(), time.thread_time()
        action()
        until_idle(app, settled(win.cursor))
        return (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000

    # clicks at random places of the timeline bar (each a seek to a random step)
    clicks = []
    for x in rng.integers(bar.MARGIN, bar.width() - bar.MARGIN, size=args.long_samples):
        pt = QtCore.QPoint(int(x), y)
        clicks.append(seek(lambda pt=pt: QTest.mouseClick(bar, QtCore.Qt.MouseButton.LeftButton,
                                                    QtCore.Qt.KeyboardModifier.NoModifier, pt)))
        run_loop(app, 30)
    # a drag along the bar, 3 pixels per move (scrubbing)
    x0 = int(bar.width() * 0.3)
    QTest.mousePress(bar, QtCore.Qt.MouseButton.LeftButton, QtCore.Qt.KeyboardModifier.NoModifier,
                     QtCore.QPoint(x0, y))
    until_idle(app, settled(win.cursor))
    drags = []
    for i in range(1, args.long_samples + 1):
        pt = QtCore.QPoint(x0 + 3 * i, y)
        drags.append(seek(lambda pt=pt: QTest.mouseMove(bar, pt)))
    QTest.mouseRelease(bar, QtCore.Qt.MouseButton.LeftButton, QtCore.Qt.KeyboardModifier.NoModifier,
                       QtCore.QPoint(x0 + 3 * args.long_samples, y))
    run_loop(app, 100)
    for name, vals in (("click seek", clicks), ("drag seek", drags)):
        wall = np.asarray([v[0] for v in vals])
        cpu = np.asarray([v[1] for v in vals])
        out[name] = (float(np.median(wall)), float(np.percentile(wall, 95)), float(np.median(cpu)))
    # playback as fast as possible with the agent selected: live from the newest state, then a replay
    probe = GapProbe()
    win.set_speed(0)
    win.set_cursor(win.num_steps)
    run_loop(app, 100)
    s0 = win.num_steps
    probe.start()
    t0 = time.perf_counter()
    win.play()
    run_loop(app, int(args.play_seconds * 1000))
    out["live steps/s"] = (win.num_steps - s0) / (time.perf_counter() - t0)
    win.pause()
    out["live gaps"] = probe.stop()
    run_loop(app, 200)
    win.set_cursor(max(0, win.num_steps - 3000))
    run_loop(app, 100)
    c0 = win.cursor
    probe.start()
    t0 = time.perf_counter()
    win.play()
    run_loop(app, int(args.play_seconds * 1000))
    out["replay steps/s"] = (win.cursor - c0) / (time.perf_counter() - t0)
    win.pause()
    out["replay gaps"] = probe.stop()
    out["recorded after"] = win.num_steps
    win.session.mark_saved()
    win.window.close()
    return out


def print_long(r: dict) -> None:
    print(f"\nLong recording: {r['title']} (targets: worst event-loop gap < {LONG_GAP_TARGET_MS:g} ms while "
          f"playing, full-window seek median < {LONG_SEEK_TARGET_MS:g} ms), all through the real event loop")
    how = (f"simulated headless in {r['simulated s']:.0f} s and cached" if r["simulated s"] else "read from the cache")
    print(f"recording: {r['recorded']} steps ({how}; the studio re-simulated {r['continuable']} of them in "
          f"{r['sync s']:.0f} s so they can be continued)")
    print(f"{'seek (mouse on the timeline)':<34}{'median ms':>10}{'p95':>8}{'cpu':>7}{'ratio to target':>17}")
    for name in ("click seek", "drag seek"):
        m, p, c = r[name]
        print(f"{name:<34}{m:>10.2f}{p:>8.2f}{c:>7.2f}{m / LONG_SEEK_TARGET_MS:>17.2f}")
    print(f"{'playback (as fast as possible)':<34}{'steps/s':>10}{'worst gap':>10}{'its cpu':>8}{'max cpu':>8}"
          f"{'p99':>8}{'>=50ms':>7}{'ratio to target':>17}")
    for name in ("live", "replay"):
        g = r[f"{name} gaps"]
        print(f"{name:<34}{r[f'{name} steps/s']:>10.1f}{g['worst']:>10.1f}{g['worst cpu']:>8.1f}"
              f"{g.get('max cpu', float('nan')):>8.1f}{g['p99']:>8.1f}{g['over']:>7d}"
              f"{g['worst'] / LONG_GAP_TARGET_MS:>17.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=200, help="timeline steps to time per case")
    ap.add_argument("--record", type=int, default=300, help="steps to record before timing")
    ap.add_argument("--play-seconds", type=float, default=4.0)
    ap.add_argument("--seeks", type=int, default=20, help="branches back to random past steps to time")
    ap.add_argument("--every-step-checkpoints", action="store_true",
                    help="a checkpoint after every step instead of every few, for comparison")
    ap.add_argument("--quick", action="store_true", help="smoke run (fewer samples and steps)")
    ap.add_argument("--cases", default="default,100,long",
                    help="comma list of: default (18 agents), 100 (100 agents), long (--long-steps x --long-agents)")
    ap.add_argument("--no-memory", dest="memory", action="store_false", help="skip the memory-per-step figures")
    ap.add_argument("--long-steps", type=int, default=10000)
    ap.add_argument("--long-agents", type=int, default=200)
    ap.add_argument("--long-samples", type=int, default=60, help="timeline clicks and drag moves to time")
    ap.add_argument("--long-cache", default=str(Path(tempfile.gettempdir()) / "logicity-bench-cache"),
                    help="folder keeping the long case's simulated episode between runs")
    args = ap.parse_args()
    if args.quick:
        args.samples, args.record, args.play_seconds, args.seeks = 40, 60, 1.5, 8
        args.long_steps, args.long_agents, args.long_samples = 2000, 100, 20
    from PySide6 import QtWidgets

    from core.project.model import new_project
    from core.sim.config import load_mode

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([])
    from app.shell import gui_gc

    gui_gc.install()   # as the studio does (main.py): cyclic garbage collected from a GUI-thread timer
    if args.every_step_checkpoints:
        import app.shell.worker as worker

        worker.CHECKPOINT_EVERY, worker.REPLAY_AGENT_STEPS = 1, None
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
    cases = []
    if "default" in chosen:
        cases.append(("default city (18 agents)", new_project(load_mode(ROOT / "configs" / "modes" / "default.yaml"))))
    if "100" in chosen:
        cases.append(("generated city (100 agents)", new_project(generated_config(100))))
    results = [bench_case(app, title, proj, args) for title, proj in cases]
    long = long_case(app, args) if "long" in chosen else None
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
    if long is not None:
        print_long(long)
    verdict = f"map-frame median target {'met' if ok else 'MISSED'}" if results else "done"
    print(f"\n{verdict} (load average during the run: "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
