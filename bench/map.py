"""Map/planner performance figures next to the reference's (docs/reference.md#reference-performance).
Run: .venv/bin/python bench/map.py

Prints, for the reference 5×5 city and a generated 10×10-block city: layer derivation, lane-graph build,
car route query (median / p95 over random candidate pairs) and pedestrian A* (median / p95).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.base.codes import Kind  # noqa: E402
from core.map.generate import generate_city  # noqa: E402
from core.map.io import load_map  # noqa: E402
from core.map.lanes import LaneGraph  # noqa: E402
from core.map.layers import derive_layers  # noqa: E402
from core.map.sampling import StartGoalSampler  # noqa: E402
from core.map.walking import walk_path  # noqa: E402

#: The reference's figures on a 2-core CPU (docs/reference.md#reference-performance), in milliseconds.
REFERENCE_MS = {"lane graph build": 2700.0, "car route": 10.0, "pedestrian A*": 14.0}


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def p95(xs: list[float]) -> float:
    return float(np.percentile(xs, 95))


def row(label: str, xs: list[float]) -> None:
    med = statistics.median(xs)
    ref = REFERENCE_MS.get(label)
    ratio = f"   reference {ref:8.1f} ms  ({ref / med:7.0f}x faster)" if ref else ""
    print(f"  {label:<18} median {med:8.3f} ms   p95 {p95(xs):8.3f} ms{ratio}")


def bench_city(title: str, city, pairs: int = 300) -> None:
    print(f"{title}: {city.height}x{city.width} cells, {len(city.streets)} streets, {len(city.buildings)} buildings")
    row("derive layers", timed(lambda: derive_layers(city.name, city.height, city.width, city.streets,
                                                     city.buildings), 20))
    row("lane graph build", timed(lambda: LaneGraph.from_map(city), 10))
    lanes = city.lane_graph
    sampler = StartGoalSampler(city)
    rng = np.random.default_rng(0)
    car, ped, cells = [], [], 0
    for _ in range(pairs):
        s = sampler.sample_start(Kind.CAR, rng)
        g = sampler.sample_goal(Kind.CAR, s, rng)
        car += timed(lambda s=s, g=g: lanes.route(s, g), 1)
        s = sampler.sample_start(Kind.PEDESTRIAN, rng)
        g = sampler.sample_goal(Kind.PEDESTRIAN, s, rng)
        t = time.perf_counter()
        cells += len(walk_path(city, s, g))
        ped.append((time.perf_counter() - t) * 1000)
    row("car route", car)
    row("pedestrian A*", ped)
    print(f"  (pedestrian paths average {cells / pairs:.0f} cells; {pairs} random candidate pairs each)")


def main() -> None:
    t = time.perf_counter()
    city = load_map(ROOT / "configs" / "maps" / "default.yaml")
    print(f"load + validate configs/maps/default.yaml: {(time.perf_counter() - t) * 1000:.1f} ms "
          "(YAML parsing dominates)")
    bench_city("reference 5x5 city", city)
    t = time.perf_counter()
    big = generate_city(1, (10, 10))
    print(f"\ngenerate_city(1, (10, 10)) incl. validation: {(time.perf_counter() - t) * 1000:.1f} ms")
    bench_city("generated 10x10 city", big)


if __name__ == "__main__":
    main()
