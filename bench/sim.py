#!/usr/bin/env python3
"""Seconds per simulation step, recording on and off: the expert config and generated cities with 50 / 200 / 1000
agents, including 517² and 747² cities for 1000 agents.

For every scenario it prints, for the compiled engine with recording on and off and the z3 engine (below 1000
agents), the median, p95 and worst step (wall clock) and the median CPU time of the stepping thread (equal to
the wall time on an idle machine; on a shared machine the difference is time spent waiting for a core). Goal re-sampling and re-planning happen inside steps, so they are in these figures; the
episode buffer's growth is too (recording on). Targets (2-core machine, compiled engine): expert config median
< 2 ms and mean < 5 ms (the reference takes ~2 s per step, docs/reference.md#reference-performance); 1000 agents
median < 5 ms and worst step < 50 ms with recording on. The summary prints each figure's ratio to its target
(< 1 = target met).

Above 128 agents the step runs the compiled numba kernels when numba is importable (core/logic/kernels.py; the
first run on a machine compiles them, which the warm-up steps absorb); ``LOGICITY_KERNELS=0`` measures the numpy
path instead. The first line says which.

Usage: python bench/sim.py [--steps 300] [--big-steps 600] [--z3-steps 60] [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.agents.generate import random_agent_set  # noqa: E402
from core.map.generate import generate_city  # noqa: E402
from core.sim.config import SimConfig, load_mode  # noqa: E402
from core.sim.simulation import Simulation  # noqa: E402

#: The reference took 1.2–3.7 s per step for sim expert on a 2-core CPU (docs/reference.md#reference-performance).
REFERENCE_EXPERT_STEP_S = 2.0
TARGET_EXPERT_MEDIAN_S, TARGET_EXPERT_MEAN_S = 0.002, 0.005
TARGET_BIG_MEDIAN_S, TARGET_BIG_WORST_S = 0.005, 0.050


def time_steps(cfg: SimConfig, engine: str, steps: int, record: bool, seed: int = 0, warmup: int = 3) -> dict:
    t0 = time.perf_counter()
    sim = Simulation(cfg, seed=seed, engine=engine, record=record)
    setup = time.perf_counter() - t0
    sim.run(warmup)
    wall, cpu = [], []
    for _ in range(steps):
        c0, w0 = time.thread_time(), time.perf_counter()
        sim.step()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.thread_time() - c0)
    s, c = np.asarray(wall), np.asarray(cpu)
    return {"median": float(np.median(s)), "mean": float(s.mean()), "p95": float(np.percentile(s, 95)),
            "worst": float(s.max()), "cpu_median": float(np.median(c)), "cpu_worst": float(c.max()),
            "setup": setup, "steps": steps}


def buffer_growth(n_agents: int = 1000, steps: int = 8300) -> dict:
    """Wall and CPU time of the recording alone (one append_step + append_state per step) over ``steps`` steps.

    Why: a buffer that doubles its capacity by copying pauses for a whole-history copy when it runs out; the worst
    step shows whether any append copies the history."""
    from core.sim.episode import EpisodeBuffer

    agents = random_agent_set(n_agents, seed=1).table()
    buf = EpisodeBuffer(agents, {}, witness_vars=3)
    n = n_agents
    pos, zero8, zero32 = np.zeros((n, 2), np.int32), np.zeros(n, np.int8), np.zeros(n, np.int32)
    holds, wit, flags = np.zeros((n, 4), bool), np.zeros((n, 3), np.int32), np.zeros(n, bool)
    buf.append_state(pos, zero8, pos, zero32, zero32, agents)
    wall, cpu = [], []
    for _ in range(steps):
        c0, w0 = time.thread_time(), time.perf_counter()
        buf.append_step(holds, zero8, zero8, zero32, wit, flags)
        buf.append_state(pos, zero8, pos, zero32, zero32, agents)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.thread_time() - c0)
    s, c = np.asarray(wall), np.asarray(cpu)
    return {"median": float(np.median(s)), "worst": float(s.max()), "worst_at": int(s.argmax()),
            "cpu_median": float(np.median(c)), "cpu_worst": float(c.max()), "cpu_worst_at": int(c.argmax())}


def generated(n_agents: int, blocks: tuple[int, int], base: SimConfig) -> SimConfig:
    city = generate_city(42, blocks=blocks)
    return SimConfig(city=city, agents=random_agent_set(n_agents, seed=42), ontology=base.ontology,
                     rules=base.rules, name=f"{n_agents} agents, {city.height}²")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300, help="steps per scenario below 1000 agents")
    ap.add_argument("--big-steps", type=int, default=600, help="steps per 1000-agent scenario (crosses the "
                                                                "episode buffer's growth at 512 states)")
    ap.add_argument("--z3-steps", type=int, default=60)
    ap.add_argument("--quick", action="store_true", help="fewer steps (smoke run)")
    ap.add_argument("--only-1000", action="store_true", help="only the 1000-agent scenarios (and the expert "
                                                                "baseline the summary needs)")
    args = ap.parse_args()
    steps, big_steps, z3_steps = (40, 40, 10) if args.quick else (args.steps, args.big_steps, args.z3_steps)
    base = load_mode(ROOT / "configs" / "modes" / "sim_expert.yaml")
    cases = [("sim expert, 18 agents, 241²", base, steps)]
    sizes = ((1000, (11, 11)), (1000, (16, 16))) if args.only_1000 else \
        ((50, (5, 5)), (200, (8, 8)), (1000, (11, 11)), (1000, (16, 16)))
    for n, blocks in sizes:
        cfg = generated(n, blocks, base)
        cases.append((cfg.name, cfg, big_steps if n >= 1000 else steps))
    from core.logic.fast import kernels
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start "
          f"(wall = elapsed per step; cpu = this thread's CPU time per step); compiled kernels above 128 agents: "
          f"{'on (numba)' if kernels() is not None else 'off (numpy)'}")
    print(f"{'scenario':<30}{'engine':<9}{'rec':<5}{'median ms':>10}{'p95 ms':>9}{'worst ms':>10}{'mean ms':>9}"
          f"{'cpu med':>9}{'steps':>7}{'setup s':>9}")
    results = {}
    for label, cfg, n_steps in cases:
        runs = [("compiled", True, n_steps), ("compiled", False, n_steps)]
        if len(cfg.agents) < 1000:  # the z3 engine takes seconds per 1000-agent step
            runs.append(("z3", True, max(5, min(z3_steps, n_steps))))
        for engine, record, k in runs:
            r = time_steps(cfg, engine, k, record)
            results[(label, engine, record)] = r
            print(f"{label:<30}{engine:<9}{'on' if record else 'off':<5}{r['median'] * 1e3:>10.2f}"
                  f"{r['p95'] * 1e3:>9.2f}{r['worst'] * 1e3:>10.1f}{r['mean'] * 1e3:>9.2f}"
                  f"{r['cpu_median'] * 1e3:>9.2f}{k:>7}{r['setup']:>9.1f}", flush=True)
    g = buffer_growth(steps=600 if args.quick else 8300)
    print(f"episode buffer alone, 1000 agents, {600 if args.quick else 8300} steps: median {g['median'] * 1e3:.3f} ms, "
          f"worst {g['worst'] * 1e3:.1f} ms (step {g['worst_at']}); CPU median {g['cpu_median'] * 1e3:.3f} ms, "
          f"CPU worst {g['cpu_worst'] * 1e3:.1f} ms (step {g['cpu_worst_at']})")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    e = results[(cases[0][0], "compiled", True)]
    z = results[(cases[0][0], "z3", True)]
    print()
    print(f"expert config, compiled, recording on: median {e['median'] * 1e3:.2f} ms (target < 2: ratio "
          f"{e['median'] / TARGET_EXPERT_MEDIAN_S:.2f}), mean {e['mean'] * 1e3:.2f} ms (target < 5: ratio "
          f"{e['mean'] / TARGET_EXPERT_MEAN_S:.2f})")
    print(f"speed-up vs the reference's ~{REFERENCE_EXPERT_STEP_S:.0f} s/step: compiled "
          f"{REFERENCE_EXPERT_STEP_S / e['mean']:.0f}x, z3 engine {REFERENCE_EXPERT_STEP_S / z['mean']:.0f}x")
    for label, _cfg, _k in cases:
        if not label.startswith("1000"):
            continue
        for record in (True, False):
            r = results[(label, "compiled", record)]
            print(f"{label}, compiled, recording {'on ' if record else 'off'}: median {r['median'] * 1e3:.2f} ms "
                  f"(target < 5: ratio {r['median'] / TARGET_BIG_MEDIAN_S:.2f}), p95 {r['p95'] * 1e3:.2f} ms, "
                  f"worst {r['worst'] * 1e3:.1f} ms (target < 50: ratio {r['worst'] / TARGET_BIG_WORST_S:.2f}); "
                  f"CPU median {r['cpu_median'] * 1e3:.2f} ms, CPU worst {r['cpu_worst'] * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
