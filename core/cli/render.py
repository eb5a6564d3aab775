"""``python main.py render``: render recorded episode steps to PNG files."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("render", help="render an episode step (or range) to PNG",
                       description="Render recorded episode states with the icon renderer.")
    p.add_argument("--episode", type=Path, required=True, help="episode file (.npz) written by simulate")
    p.add_argument("--step", type=int, default=None, help="state to render (default: 0)")
    p.add_argument("--range", nargs=2, type=int, metavar=("FIRST", "LAST"),
                   help="render states FIRST..LAST (inclusive) as an image sequence into --out (a folder)")
    p.add_argument("--out", type=Path, required=True, help="PNG file (or folder with --range)")
    p.add_argument("--ppc", type=int, default=8, help="pixels per cell (reference: 8)")
    p.add_argument("--crop", nargs=4, type=int, metavar=("ROW0", "COL0", "ROWS", "COLS"),
                   help="crop in cells (reference VAP: 0 0 128 128 = 1024² px)")
    p.add_argument("--seed", type=int, default=0, help="icon-variant seed")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from core.render.renderer import Renderer
    from core.sim.episode import load_episode
    from core.sim.replay import config_from_episode

    ep = load_episode(args.episode)
    cfg = config_from_episode(ep.meta, args.episode)
    if args.ppc < 1:
        print("error: --ppc must be >= 1", file=sys.stderr)
        return 2
    renderer = Renderer(cfg.city, px_per_cell=args.ppc, seed=args.seed)
    crop = tuple(args.crop) if args.crop else None
    if args.range:
        first, last = args.range
        if not (0 <= first <= last < ep.num_states):
            print(f"error: range must lie within 0..{ep.num_states - 1}", file=sys.stderr)
            return 2
        args.out.mkdir(parents=True, exist_ok=True)
        prev = renderer.render(ep.snapshot(max(0, first - 1)), crop=crop) if first > 0 else None
        for k in tqdm(range(first, last + 1), unit="frame", file=sys.stderr):
            prev = renderer.render(ep.snapshot(k), previous=prev, crop=crop)
            prev.save(args.out / f"step_{k:05d}.png")
        print(f"wrote {last - first + 1} frames to {args.out}")
        return 0
    k = 0 if args.step is None else args.step
    if not 0 <= k < ep.num_states:
        print(f"error: --step must lie within 0..{ep.num_states - 1}", file=sys.stderr)
        return 2
    prev = renderer.render(ep.snapshot(k - 1), crop=crop) if k > 0 else None
    frame = renderer.render(ep.snapshot(k), previous=prev, crop=crop)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.save(args.out)
    h, w = frame.image.shape[:2]
    print(f"wrote {args.out} ({w}x{h} px, {len(frame.boxes)} agents drawn)")
    return 0
