#!/usr/bin/env python3
"""Seconds per simulation step: the expert config and generated cities with 50 / 200 / 1000 agents.

Prints median and mean step time (mean includes goal re-sampling and re-planning) for the compiled engine and
the z3 engine side by side. Targets (issue "Simulation core", 2-core machine, compiled engine): expert config
median < 2 ms and mean < 5 ms (the reference takes ~2 s per step, docs/reference.md#reference-performance);
1000 agents < 100 ms per step.

Usage: python bench/sim.py [--steps 300] [--z3-steps 60] [--quick]
"""
from __future__ import annotations

import argparse
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


def time_steps(cfg: SimConfig, engine: str, steps: int, seed: int = 0, warmup: int = 3) -> dict:
    t0 = time.perf_counter()
    sim = Simulation(cfg, seed=seed, engine=engine)
    setup = time.perf_counter() - t0
    sim.run(warmup)
    sim.step_seconds.clear()
    sim.run(steps)
    s = np.asarray(sim.step_seconds)
    return {"median": float(np.median(s)), "mean": float(s.mean()), "p95": float(np.percentile(s, 95)),
            "setup": setup, "steps": steps}


def generated(n_agents: int, blocks: tuple[int, int], base: SimConfig) -> SimConfig:
    city = generate_city(42, blocks=blocks)
    return SimConfig(city=city, agents=random_agent_set(n_agents, seed=42), ontology=base.ontology,
                     rules=base.rules, name=f"generated {blocks[0]}x{blocks[1]}, {n_agents} agents")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--z3-steps", type=int, default=60)
    ap.add_argument("--quick", action="store_true", help="fewer steps (smoke run)")
    args = ap.parse_args()
    steps, z3_steps = (40, 10) if args.quick else (args.steps, args.z3_steps)
    base = load_mode(ROOT / "configs" / "modes" / "sim_expert.yaml")
    cases = [("sim expert (18 agents, 241²)", base, steps)]
    for n, blocks in ((50, (5, 5)), (200, (8, 8)), (1000, (16, 16))):
        cases.append((None, generated(n, blocks, base), max(10, steps // (1 if n < 1000 else 5))))
    print(f"{'scenario':<40}{'engine':<10}{'median ms':>10}{'mean ms':>10}{'p95 ms':>10}{'setup s':>9}")
    results = {}
    for label, cfg, n_steps in cases:
        label = label or f"{cfg.name} ({cfg.city.height}²)"
        for engine, k in (("compiled", n_steps), ("z3", max(5, min(z3_steps, n_steps)))):
            if engine == "z3" and len(cfg.agents) >= 1000 and not args.quick:
                k = 5
            r = time_steps(cfg, engine, k)
            results[(label, engine)] = r
            print(f"{label:<40}{engine:<10}{r['median'] * 1e3:>10.2f}{r['mean'] * 1e3:>10.2f}"
                  f"{r['p95'] * 1e3:>10.2f}{r['setup']:>9.2f}", flush=True)
    e = results[("sim expert (18 agents, 241²)", "compiled")]
    z = results[("sim expert (18 agents, 241²)", "z3")]
    print()
    print(f"expert config, compiled: median {e['median'] * 1e3:.2f} ms (target < 2), "
          f"mean {e['mean'] * 1e3:.2f} ms (target < 5)")
    print(f"speed-up vs the reference's ~{REFERENCE_EXPERT_STEP_S:.0f} s/step: compiled "
          f"{REFERENCE_EXPERT_STEP_S / e['mean']:.0f}x, z3 engine {REFERENCE_EXPERT_STEP_S / z['mean']:.0f}x "
          f"(z3 / compiled = {z['mean'] / e['mean']:.1f}x slower)")
    big = [v for (lbl, eng), v in results.items() if "1000 agents" in lbl and eng == "compiled"]
    if big:
        print(f"1000 agents, compiled: median {big[0]['median'] * 1e3:.1f} ms (target < 100)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
