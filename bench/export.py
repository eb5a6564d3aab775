#!/usr/bin/env python3
"""Dataset export throughput: episodes/s (episodes exporter) and VAP frames/s (vap exporter) for one process
(``--backend inline``), the local process pool and a local Ray cluster on this machine, and the projected scaling.

Every run exports into a fresh folder and the outputs of all backends are checked to be byte-identical (the same
seeds give the same files). Wall time includes starting the pool workers or the Ray cluster (they import the studio
once per worker), so figures for short exports are dominated by start-up; the "per shard" column is the steady-state
cost measured in one process. The projection assumes what the design gives: shards are independent, the driver
only records a finished shard (a JSON file) and finalizes once, so N workers approach N times the one-process rate
until the driver's per-shard bookkeeping (measured here) or the shared file system limits it. It is a projection,
not a measurement on a cluster.

Usage: python bench/export.py [--episodes 16] [--steps 100] [--worlds 4] [--vap-steps 8] [--workers 2] [--no-ray]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.export.runner import run_export  # noqa: E402
from tests.support.export import folder_bytes  # noqa: E402


def timed(kind: str, opts: dict, backend: str, workers: int | None, root: Path) -> tuple[float, object, Path]:
    out = root / f"{kind}-{backend}"
    t0 = time.perf_counter()
    report = run_export(kind, opts, out, backend=backend, workers=workers)
    return time.perf_counter() - t0, report, out


def bench(kind: str, opts: dict, unit: str, count_key: str, backends: list[tuple[str, int | None]], root: Path
          ) -> dict[str, float]:
    print(f"\n== {kind}: {opts}")
    print(f"{'backend':<14}{'workers':>8}{'wall s':>10}{unit + '/s':>14}{'identical':>11}")
    ref = None
    rates = {}
    for backend, workers in backends:
        wall, report, out = timed(kind, opts, backend, workers, root)
        n = report.manifest["counts"][count_key]
        files = folder_bytes(out)
        same = "ref" if ref is None else ("yes" if files == ref else "NO")
        ref = ref or files
        rates[backend] = n / wall
        print(f"{backend:<14}{report.workers:>8}{wall:>10.2f}{n / wall:>14.2f}{same:>11}")
    return rates


def driver_cost(root: Path) -> float:
    """Seconds the driver spends per shard when every shard is already done (plan, check, record, manifest)."""
    out = root / "episodes-inline"
    t0 = time.perf_counter()
    rep = run_export("episodes", _last_opts["episodes"], out, backend="inline")
    return (time.perf_counter() - t0) / max(1, len(rep.skipped))


_last_opts: dict[str, dict] = {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--worlds", type=int, default=4, help="VAP worlds (train stage)")
    ap.add_argument("--vap-steps", type=int, default=8)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    backends: list[tuple[str, int | None]] = [("inline", None), ("local", args.workers)]
    if not args.no_ray:
        backends.append(("ray", args.workers))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        root = Path(tmp)
        ep = {"episodes": args.episodes, "steps": args.steps, "per_shard": 1}
        _last_opts["episodes"] = ep
        rates = bench("episodes", ep, "episodes", "episodes", backends, root)
        vap = {"train_worlds": args.worlds, "val_worlds": 0, "test_worlds": 0, "steps": args.vap_steps}
        vrates = bench("vap", vap, "frames", "frames", backends, root)
        d = driver_cost(root)
        print()
        print(f"episodes/s: 1 process {rates['inline']:.2f}, local pool {rates['local']:.2f}"
              + (f", ray {rates['ray']:.2f}" if "ray" in rates else ""))
        print(f"VAP frames/s: 1 process {vrates['inline']:.2f}, local pool {vrates['local']:.2f}"
              + (f", ray {vrates['ray']:.2f}" if "ray" in vrates else ""))
        cap = 1.0 / d if d > 0 else float("inf")
        print(f"driver bookkeeping: {d * 1000:.1f} ms per shard -> at most {cap:.0f} shards/s through one driver")
        print("projected throughput with W workers = min(W x one-process rate, driver cap x items per shard):")
        for w in (1, 2, 8, 32, 128, 512):
            e = min(w * rates["inline"], cap * 1)
            v = min(w * vrates["inline"], cap * (args.vap_steps - 1))
            print(f"  {w:>4} workers: {e:>9.1f} episodes/s   {v:>9.1f} VAP frames/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
