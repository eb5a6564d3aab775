"""VAP dataset generation speed. Run at normal priority (it prints the load average):

    .venv/bin/python bench/vap.py [--worlds 3/0/0] [--workers 1] [--png-encoder isal|zlib]

Prints frames/s of ``generate`` (simulation, grounding, labels, rendering, PNG encoding and the Parquet/JSONL
tables, everything a dataset needs) over whole worlds, with set-up (config loading, static map) apart, and the
ratio to the 50 frames/s target; the process CPU time per frame (all threads), which says what one free core
would give on a shared box; then the CPU cost of each stage of one world in a single thread (thread CPU time, so
other jobs on the machine do not inflate it), to show where the time goes. ``--png-encoder zlib`` measures the
zlib path (band cache) instead of ISA-L.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_FPS = 50.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mode", default="easy")
    ap.add_argument("--worlds", default="3/0/0")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--workers", type=int, default=1, help="processes making worlds (1 = in this process)")
    ap.add_argument("--png-encoder", choices=("isal", "zlib"), default="isal")
    args = ap.parse_args()
    import os
    import resource

    from core.tasks.vap import VapDataConfig, generate, parse_worlds, png

    if args.png_encoder == "zlib":
        png._isal = None

    cfg = VapDataConfig(mode=args.mode, worlds=parse_worlds(args.worlds), steps=args.steps, workers=args.workers)
    # set-up once (config files, icon art, static map), so the figure below is the steady state
    with tempfile.TemporaryDirectory() as warm:
        generate(VapDataConfig(mode=args.mode, worlds={"train": 1}, steps=3, workers=1), warm)
    marks: list[float] = []
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        c0 = time.process_time() + _children_cpu(resource)
        res = generate(cfg, out, progress=lambda done, total, text="": marks.append(time.perf_counter()))
        total = time.perf_counter() - t0
        cpu = time.process_time() + _children_cpu(resource) - c0
    frames = res.frames
    first = marks[0] if marks else t0
    steady = frames / max(1e-9, marks[-1] - first) if len(marks) > 1 else 0.0
    fps = frames / total
    print(f"machine: {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.1f}; worker processes "
          f"{args.workers}")
    print(f"generate {args.worlds} worlds x {args.steps} steps ({args.mode}): {frames} frames in {total:.2f} s")
    print(f"  frames/s incl. per-run set-up: {fps:.1f}  (target {TARGET_FPS:.0f}: ratio {fps / TARGET_FPS:.2f})")
    print(f"  frames/s steady (first to last frame): {steady:.1f}  (ratio {steady / TARGET_FPS:.2f})")
    print(f"  CPU {cpu / max(frames, 1) * 1000:.1f} ms per frame, all threads and worker processes ({frames / max(cpu, 1e-9):.1f} frames "
          f"per CPU-second); PNG encoder: {png.encoder_name(cfg.png_level)}")
    _stages(args.mode)
    return 0


def _children_cpu(resource) -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)   # worker processes, counted once they have ended
    return r.ru_utime + r.ru_stime


def _stages(mode: str) -> None:
    """Per-frame cost of each stage, one thread, 99 frames of one world."""
    from core.render.renderer import Renderer
    from core.sim.simulation import Simulation
    from core.tasks.vap import VapDataConfig
    from core.tasks.vap.dataset import _icon_set, load_stage_configs
    from core.tasks.vap.labels import ground_truth, next_directions
    from core.tasks.vap.png import BandCache, encode_png

    cfg = load_stage_configs(VapDataConfig(mode=mode))
    sim = Simulation(cfg["train"], seed=0, record=False)
    r = Renderer(sim.city, icons=_icon_set(VapDataConfig()), seed=0)
    bands = BandCache(r.background((0, 0, 128, 128)))
    t = {"simulate+decide": 0.0, "labels": 0.0, "render": 0.0, "png": 0.0}
    n = 99
    clock = time.thread_time
    for _ in range(n):
        a = clock()
        snap = sim.snapshot()
        g, d = sim.decide(snap)
        sim.step(prepared=(g, d))
        b = clock()
        ground_truth(g)
        next_directions(snap.positions, sim.positions)
        c = clock()
        f = r.render(snap, crop=(0, 0, 128, 128))
        e = clock()
        encode_png(f.image, 1, bands)
        t["simulate+decide"] += b - a
        t["labels"] += c - b
        t["render"] += e - c
        t["png"] += clock() - e
    print("CPU per frame, one thread: " + ", ".join(f"{k} {v / n * 1000:.1f} ms" for k, v in t.items())
          + f"; sum {sum(t.values()) / n * 1000:.1f} ms ({n / sum(t.values()):.1f} frames per CPU-second)")


if __name__ == "__main__":
    raise SystemExit(main())
