"""Rendering and icon-generation figures. Run: .venv/bin/python bench/render.py [--model PATH ...]

Prints:
* static map composition time (once per map / icon set / scale);
* frames per second for 1024×1024 frames (8 px per cell, top-left 128×128 cells, as the reference's VAP
  frames; target >= 50 on a CPU) and for the full map, with VAP-sized agent counts moving every frame;
* seconds per icon for each ``--model`` (diffusers folder or .safetensors), at the model's suggested steps
  (SD-Turbo: 2 steps, SDXL: 30 steps), after one warm-up image; "n/a" when no GPU and no model is given.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.base.codes import Kind  # noqa: E402
from core.base.world import AgentTable, WorldSnapshot  # noqa: E402
from core.render.icons import IconSet  # noqa: E402
from core.render.renderer import Renderer  # noqa: E402

TARGET_FPS = 50.0
DEFAULT_MAP = ROOT / "configs" / "maps" / "default.yaml"
REFERENCE_MAP = ROOT / "tests" / "data" / "reference" / "logicity-configs" / "master" / "config" / "maps" / \
    "square_5x5.yaml"


def load_city(path: Path | None):
    from core.map.io import load_map
    from core.map.reference import import_reference_map

    if path is not None:
        return (import_reference_map(path) if "logicity-configs" in str(path) else load_map(path)), str(path)
    if DEFAULT_MAP.is_file():
        return load_map(DEFAULT_MAP), str(DEFAULT_MAP.relative_to(ROOT))
    return import_reference_map(REFERENCE_MAP), str(REFERENCE_MAP)


def agent_walk(city, n_agents: int, frames: int, region: int, seed: int) -> list[WorldSnapshot]:
    """VAP-like agents (12–15, 3–6 pedestrians, concepts as in the reference's random VAP worlds,
    docs/reference.md#vap-dataset-generation) walking one cell per frame inside the top-left ``region`` cells; a
    blocked agent turns. Stands in for simulator output (same sizes and motion)."""
    rng = np.random.default_rng(seed)
    n_ped = max(1, n_agents // 4)
    kinds = [Kind.PEDESTRIAN] * n_ped + [Kind.CAR] * (n_agents - n_ped)
    ped_concepts = [["old"], ["young"], ["young"]] + [[c] if c else [] for c in
                                                      rng.choice(["old", "young", ""], n_ped)]
    car_concepts = [[c] if c else [] for c in rng.choice(["ambulance", "bus", "police", "reckless", "tiro", ""],
                                                          n_agents - n_ped)]
    concepts = ped_concepts[:n_ped] + car_concepts
    table = AgentTable.build([f"A_{i}" for i in range(n_agents)], [int(k) for k in kinds],
                             [0] * n_ped + list(rng.permutation(n_agents - n_ped) + 1), concepts)
    ok = {Kind.PEDESTRIAN: city.walkable[:region, :region], Kind.CAR: city.drivable[:region, :region]}
    pos = np.zeros((n_agents, 2), np.int32)
    for i, k in enumerate(kinds):
        cells = np.argwhere(ok[k])
        pos[i] = cells[rng.integers(len(cells))]
    head = rng.integers(0, 4, n_agents).astype(np.int8)
    vec = np.array([[0, -1], [0, 1], [-1, 0], [1, 0]])
    snaps = []
    for step in range(frames):
        snaps.append(WorldSnapshot(step, table, pos.copy(), head.copy()))
        for i, k in enumerate(kinds):
            nxt = pos[i] + vec[head[i]]
            if 0 <= nxt[0] < region and 0 <= nxt[1] < region and ok[k][nxt[0], nxt[1]] and rng.random() > 0.05:
                pos[i] = nxt
            else:
                head[i] = rng.integers(0, 4)
    return snaps


def time_frames(renderer: Renderer, snaps, crop) -> list[float]:
    out, prev = [], None
    for s in snaps:
        t = time.perf_counter()
        prev = renderer.render(s, previous=prev, crop=crop)
        out.append(time.perf_counter() - t)
    return out


def report(label: str, secs: list[float]) -> float:
    ms = np.asarray(secs) * 1000
    fps = 1000.0 / float(np.mean(ms))
    print(f"  {label:<34} mean {ms.mean():6.2f} ms  median {np.median(ms):6.2f} ms  p95 "
          f"{np.percentile(ms, 95):6.2f} ms  -> {fps:7.1f} fps")
    return fps


def bench_models(models: list[str], n: int, device: str) -> None:
    print("icon generation (seconds per icon, model's suggested steps, after one warm-up image):")
    try:
        import torch

        cuda = torch.cuda.is_available()
    except ImportError:  # pragma: no cover
        cuda = False
    if not models:
        reason = "no weights configured" if cuda else "no GPU / no weights configured"
        print(f"  SD-Turbo: n/a ({reason})")
        print(f"  SDXL:     n/a ({reason})")
        print("  (pass --model PATH for each diffusers folder or .safetensors file to time it)")
        return
    from core.icongen.generator import GenerationRequest, IconGenerator, clear_pipeline_cache
    from core.icongen.models import resolve_model, suggested_settings

    for m in models:
        src = resolve_model(m)
        sug = suggested_settings(src)
        gen = IconGenerator(src.path, device=device)
        t = time.perf_counter()
        gen.load()
        load_s = time.perf_counter() - t
        req = GenerationRequest("car", ("a blue car, top-down view, game sprite, white background",), n=1,
                                steps=sug.steps, guidance=sug.guidance, seed=0, post="alpha")
        gen.generate(req)  # warm-up (kernels, caches)
        if gen.choice and gen.choice.device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        res = gen.generate(GenerationRequest(**{**req.__dict__, "n": n, "seed": 1}))
        if gen.choice and gen.choice.device == "cuda":
            torch.cuda.synchronize()
        per = (time.perf_counter() - t) / len(res.icons)
        w, h = res.icons[0].raw.size
        print(f"  {src.name} ({src.pipeline_class}, {gen.choice.device} {gen.choice.dtype}, {sug.steps} steps, "
              f"{w}x{h}): {per:.2f} s per icon (incl. background removal); load {load_s:.1f} s")
        clear_pipeline_cache()
        del gen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--map", type=Path, default=None)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--agents", type=int, default=15)
    ap.add_argument("--ppc", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", type=Path, default=None, help="also write the last 1024² frame here")
    ap.add_argument("--save-full", type=Path, default=None,
                    help="also write a full-map frame with 40 agents at 4 px per cell here")
    ap.add_argument("--model", action="append", default=[], help="time icon generation with this model")
    ap.add_argument("--n", type=int, default=4, help="icons per model timing")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args(argv)

    city, source = load_city(args.map)
    print(f"map {source}: {city.height}x{city.width} cells, {len(city.buildings)} buildings; "
          f"{args.ppc} px per cell")
    t = time.perf_counter()
    icons = IconSet.load()
    load_icons = time.perf_counter() - t
    renderer = Renderer(city, icons, args.ppc, seed=args.seed)
    t = time.perf_counter()
    renderer.background()
    static = time.perf_counter() - t
    print(f"  load icon set {load_icons * 1000:.0f} ms; compose static map {static * 1000:.0f} ms "
          f"({renderer.image_size[1]}x{renderer.image_size[0]} px, cached afterwards)")
    cells = 1024 // args.ppc
    snaps = agent_walk(city, args.agents, args.frames, region=cells, seed=args.seed)
    crop = (0, 0, cells, cells)
    time_frames(renderer, snaps[:10], crop)  # sprite cache warm-up
    fps_crop = report(f"1024x1024 frame, {args.agents} agents", time_frames(renderer, snaps, crop))
    fps_full = report(f"full map {renderer.image_size[1]}x{renderer.image_size[0]}, {args.agents} agents",
                      time_frames(renderer, snaps[: max(30, args.frames // 5)], None))
    many = agent_walk(city, 100, 60, region=min(city.height, city.width), seed=args.seed + 1)
    time_frames(renderer, many[:5], None)
    report("full map, 100 agents", time_frames(renderer, many, None))
    print(f"  1024x1024 fps / target {TARGET_FPS:.0f}: {fps_crop / TARGET_FPS:.1f}x  "
          f"(full map {fps_full:.0f} fps)")
    if args.save:
        renderer.render(snaps[-1], crop=crop).save(args.save)
        print(f"  wrote {args.save}")
    if args.save_full:
        full = agent_walk(city, 40, 2, region=min(city.height, city.width), seed=args.seed + 2)
        Renderer(city, icons, 4, seed=args.seed).render(full[-1]).save(args.save_full)
        print(f"  wrote {args.save_full}")
    bench_models(args.model, args.n, args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
