#!/usr/bin/env python3
"""Cost of gridlock detection (core/sim/gridlock.py) as the studio and the CLI use it.

* whole recording: ``find_gridlocks`` over the default city, seed 0 (simulated here; it locks up), and over a
  synthetic 200-agent, 10,000-step recording in which most agents stand still and wait on others (cycles form and
  break all the time: a worst case for the graph search);
* while recording: ``update`` after every new step, as the studio's timeline does while playing (median and
  worst per step);
* after a branch: ``rewind`` to a random earlier step and scan to the end again (worst).

Target (2-core machine): while recording, 99% of the updates at 200 agents under 1 ms (a frame at 60 Hz has 16 ms
for everything); a whole 10,000-step file under 2 s. Wall and CPU time of the measuring thread are printed (on a
shared machine the difference is time spent waiting for a core); the targets are checked on CPU time. Prints each
figure's ratio to its target (< 1 = met).

Usage: python bench/gridlock.py [--steps 3000] [--quick]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.base.codes import ACTION_INDEX  # noqa: E402
from core.sim.config import load_mode  # noqa: E402
from core.sim.gridlock import GridlockDetector, find_gridlocks  # noqa: E402
from core.sim.simulation import Simulation  # noqa: E402

TARGET_UPDATE_S = 0.001
TARGET_WHOLE_10K_S = 2.0


class Arrays:
    """An episode-like view of the first ``n`` steps of plain arrays (what the detector reads)."""

    def __init__(self, arrays: dict, n: int | None = None) -> None:
        self.a = arrays
        self.n = len(arrays["decided"]) if n is None else n
        self.agents = SimpleNamespace(names=tuple(f"A{i}" for i in range(arrays["decided"].shape[1])))
        self.meta = {}

    @property
    def num_steps(self) -> int:
        return self.n

    def array(self, name: str) -> np.ndarray:
        return self.a[name][: self.n + 1 if name == "positions" else self.n]


def synthetic(t: int, n: int, seed: int = 0) -> dict:
    """Agents on a ring of cells that stand still most of the time (each moves in 1% of the steps) and, while
    still, decide Stop waiting on a neighbour within two places (changing now and then): two neighbours waiting on
    each other lock up until one of them moves, and queues form behind them."""
    rng = np.random.default_rng(seed)
    stop, normal = ACTION_INDEX["Stop"], ACTION_INDEX["Normal"]
    steps = rng.random((t, n)) < 0.01
    pos = np.zeros((t + 1, n, 2), np.int16)
    pos[:, :, 0] = np.arange(n)
    pos[1:, :, 1] = np.cumsum(steps, axis=0) % 200
    dec = np.where(steps, normal, stop).astype(np.int8)
    fired = np.where(dec == stop, 6, -1).astype(np.int32)
    offsets = np.array([-2, -1, 1, 2])
    choice = rng.integers(0, 4, (t, n))
    for k in range(1, t):   # a wait lasts: keep the previous neighbour 95% of the time
        keep = rng.random(n) < 0.95
        choice[k, keep] = choice[k - 1, keep]
    wit = np.full((t, n, 2), -1, np.int32)
    wit[:, :, 0] = np.where(dec == stop, (np.arange(n)[None, :] + offsets[choice]) % n, -1)
    return {"positions": pos, "decided": dec, "fired": fired, "witness": wit}


def measure(arrays: dict, label: str, k: int | None = None) -> dict:
    ep = Arrays(arrays)
    t0, c0 = time.perf_counter(), time.thread_time()
    found = find_gridlocks(ep) if k is None else find_gridlocks(ep, k)
    whole, whole_cpu = time.perf_counter() - t0, time.thread_time() - c0
    det = GridlockDetector() if k is None else GridlockDetector(k)
    per, per_cpu = [], []
    for n in range(1, ep.num_steps + 1):
        view = Arrays(arrays, n)
        w0, c0 = time.perf_counter(), time.thread_time()
        det.update(view)
        per.append(time.perf_counter() - w0)
        per_cpu.append(time.thread_time() - c0)
    assert [g.to_dict() for g in det.gridlocks] == [g.to_dict() for g in found]
    rng = np.random.default_rng(1)
    rewinds = []
    for k_back in rng.integers(0, ep.num_steps, 10):
        w0 = time.perf_counter()
        det.rewind(ep, int(k_back))
        det.update(ep)
        rewinds.append(time.perf_counter() - w0)
    p, pc = np.asarray(per), np.asarray(per_cpu)
    out = {"label": label, "steps": ep.num_steps, "agents": len(ep.agents.names), "gridlocks": len(found),
           "whole": whole, "whole_cpu": whole_cpu, "update_median": float(np.median(p)),
           "update_p99": float(np.percentile(p, 99)), "update_worst": float(p.max()),
           "update_cpu_median": float(np.median(pc)), "update_cpu_p99": float(np.percentile(pc, 99)),
           "update_cpu_worst": float(pc.max()), "rewind_worst": max(rewinds)}
    print(f"{label}: {out['steps']} steps, {out['agents']} agents, {out['gridlocks']} gridlocks | whole file "
          f"{whole * 1000:.0f} ms ({whole / ep.num_steps * 1e6:.1f} µs/step) | update per step median "
          f"{out['update_median'] * 1e6:.0f} µs, p99 {out['update_p99'] * 1e6:.0f} µs, worst "
          f"{out['update_worst'] * 1e3:.2f} ms | rewind + rescan worst {out['rewind_worst'] * 1e3:.0f} ms")
    print(f"    CPU time of this thread (what the wall time is on an idle machine): whole file "
          f"{whole_cpu * 1000:.0f} ms | update median {out['update_cpu_median'] * 1e6:.0f} µs, p99 "
          f"{out['update_cpu_p99'] * 1e6:.0f} µs, worst {out['update_cpu_worst'] * 1e3:.2f} ms")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=3000, help="default-city steps to simulate")
    ap.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    args = ap.parse_args()
    steps = 500 if args.quick else args.steps
    big_t = 1000 if args.quick else 10_000

    sim = Simulation(load_mode(ROOT / "configs" / "modes" / "default.yaml"), seed=0)
    sim.run(steps)
    buf = sim.buffer
    city = measure({name: np.asarray(buf.array(name)) for name in ("positions", "decided", "fired", "witness")},
                   "default city, seed 0")
    big = measure(synthetic(big_t, 200), "synthetic 200 agents")
    print()
    print(f"update while recording, 200 agents, p99 (CPU): {big['update_cpu_p99'] * 1e3:.2f} ms "
          f"(target < {TARGET_UPDATE_S * 1e3:.0f} ms, ratio {big['update_cpu_p99'] / TARGET_UPDATE_S:.2f}); "
          f"worst {big['update_cpu_worst'] * 1e3:.2f} ms")
    scale = 10_000 / big["steps"]
    print(f"whole 10,000-step file, 200 agents (CPU): {big['whole_cpu'] * scale:.2f} s "
          f"(target < {TARGET_WHOLE_10K_S:.0f} s, ratio {big['whole_cpu'] * scale / TARGET_WHOLE_10K_S:.2f})")
    print(f"default city: {city['gridlocks']} gridlock(s) in {city['steps']} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
