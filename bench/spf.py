#!/usr/bin/env python3
"""SPF environment steps per second with the oracle policy, per mode.

Each figure is a full Gymnasium loop: ``a = env.oracle_action(); env.step(a)``, ``env.reset()`` when an
episode ends (its cost is included), ``record=False`` as in training. One step = simulate the city (8-18
agents), ground the new state once, build the ego's observation, evaluate the oracle and the task rules.
Two agent sets per mode: ``train`` (what RL trains on) and ``test`` (the larger evaluation populations).
Target: >= 1200 steps/s for every mode and split on this machine; the reference trains at about 9 steps/s.

Usage: python bench/spf.py [--steps 3000] [--quick] [--split train|test|both]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.tasks.spf.env import SPFEnv  # noqa: E402

REFERENCE_STEPS_PER_S = 9.0
TARGET_STEPS_PER_S = 1200.0
MODES = ("easy", "medium", "hard", "expert")


def steps_per_second(mode: str, split: str, steps: int, seed: int = 0, repeats: int = 3) -> dict:
    env = SPFEnv(mode, split)
    env.reset(seed=seed)
    for _ in range(50):  # warm caches (planner masks, compiled tables)
        _, _, term, trunc, _ = env.step(env.oracle_action())
        if term or trunc:
            env.reset()
    rates = []
    episodes = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            _, _, term, trunc, _ = env.step(env.oracle_action())
            if term or trunc:
                env.reset()
                episodes += 1
        rates.append(steps / (time.perf_counter() - t0))
    return {"best": max(rates), "median": float(np.median(rates)), "agents": len(env.sim.agents),
            "episodes": episodes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=3000, help="steps per timed repeat (3 repeats)")
    ap.add_argument("--split", choices=("train", "test", "both"), default="both")
    ap.add_argument("--quick", action="store_true", help="300 steps per repeat (smoke run)")
    args = ap.parse_args()
    steps = 300 if args.quick else args.steps
    splits = ("train", "test") if args.split == "both" else (args.split,)
    print(f"{'mode':<8}{'split':<7}{'agents':>7}{'steps/s (median)':>18}{'best':>8}{'x reference':>13}"
          f"{'vs target':>11}")
    worst = float("inf")
    for mode in MODES:
        for split in splits:
            r = steps_per_second(mode, split, steps)
            worst = min(worst, r["median"])
            print(f"{mode:<8}{split:<7}{r['agents']:>7}{r['median']:>18.0f}{r['best']:>8.0f}"
                  f"{r['median'] / REFERENCE_STEPS_PER_S:>12.0f}x{r['median'] / TARGET_STEPS_PER_S:>10.2f}x",
                  flush=True)
    print()
    print(f"slowest mode/split: {worst:.0f} steps/s (target >= {TARGET_STEPS_PER_S:.0f}; "
          f"reference ~{REFERENCE_STEPS_PER_S:.0f} steps/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
