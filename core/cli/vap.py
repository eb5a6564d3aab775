"""``python main.py vap``: Visual Action Prediction datasets, training and evaluation (docs/vap.md)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("vap", help="Visual Action Prediction: make datasets, train and evaluate models",
                       description="Visual Action Prediction (docs/vap.md).")
    vs = p.add_subparsers(dest="vap_command", metavar="ACTION")
    m = vs.add_parser("make", help="generate a dataset (resumable: finished worlds are kept)")
    m.add_argument("--mode", default="easy", help="easy, hard or a mode file (default: easy)")
    m.add_argument("--agents", choices=("fixed", "random"), default="fixed",
                   help="the mode's agent files per stage, or a seeded random composition per world")
    m.add_argument("--worlds", default="100/20/20", help="TRAIN/VAL/TEST world counts (default 100/20/20)")
    m.add_argument("--steps", type=int, default=100, help="steps per world; frames 1..steps-1 (default 100)")
    m.add_argument("--direction", choices=("next", "own"), default="next",
                   help="direction label/orientation: next = move to the next state (reference, leaks the "
                        "next motion); own = the agent's current heading (leak-free)")
    m.add_argument("--seed", type=int, default=0, help="offset added to every world seed (default 0)")
    m.add_argument("--icons", choices=("default", "library"), default="default",
                   help="shipped icon art (reproducible) or your accepted library icons")
    m.add_argument("--workers", type=int, default=2, help="threads encoding PNG frames (default 2)")
    m.add_argument("--out", type=Path, required=True, help="dataset folder (created; resumed when it exists)")
    m.add_argument("--quiet", action="store_true", help="no progress bar")
    m.set_defaults(func=run_make)
    for name, fn in (("train", "run_train"), ("eval", "run_eval")):
        try:
            from core.cli import vap_models
        except ImportError:  # pragma: no cover - models not installed
            break
        getattr(vap_models, f"register_{name}")(vs)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def run_make(args: argparse.Namespace) -> int:
    import threading

    from core.tasks.vap import VapDataConfig, generate, parse_worlds

    cfg = VapDataConfig(mode=args.mode, agents=args.agents, worlds=parse_worlds(args.worlds), steps=args.steps,
                        direction=args.direction, seed=args.seed, icons=args.icons, workers=args.workers)
    stop = threading.Event()
    bar = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(total=1, unit="frame", file=sys.stderr, dynamic_ncols=True)

    def progress(done: int, total: int, text: str = "") -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.set_description(text, refresh=False)
            bar.refresh()

    try:
        res = generate(cfg, args.out, progress=progress, cancel=stop)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print(f"interrupted: complete worlds are kept in {args.out}; run the same command to resume",
              file=sys.stderr)
        return 130
    if bar is not None:
        bar.close()
    m = res.manifest
    print(f"{args.out}: {res.made} world(s) made, {res.skipped} already there; {res.frames} frames in "
          f"{res.seconds:.1f} s ({res.frames_per_second:.1f} frames/s); status {m['status']}")
    for stage, s in m["splits"].items():
        acts = ", ".join(f"{k} {v}" for k, v in s["num_actions"].items())
        print(f"  {stage}: {s['worlds_done']}/{s['worlds_expected']} worlds, {s['frames']} frames "
              f"({s['dropped_frames']} dropped); car actions (steps > 10): {acts}")
    return 0
