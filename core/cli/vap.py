"""``python main.py vap``: Visual Action Prediction datasets, training and evaluation (docs/vap.md)."""
from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from core.io.fileio import atomic_write_text

# The VAP task (torch for train and eval) and tqdm are imported in the command bodies: `python main.py --help` imports
# every command module (core/cli/__init__.py).


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
    m.add_argument("--ppc", type=int, default=None,
                   help="pixels per cell (default: the mode's, 8 = 1024² frames of 128×128 cells)")
    m.add_argument("--workers", type=int, default=1,
                   help="processes making worlds in parallel (default 1 = this process; give the number of free "
                        "cores on a big machine); the files are the same either way")
    m.add_argument("--png-level", type=int, default=1,
                   help="deflate level of the frames, 0-9 (default 1: ISA-L, fastest and smallest here; 2-9: zlib; "
                        "0 = uncompressed, ~3 MB a frame)")
    m.add_argument("--out", type=Path, required=True, help="dataset folder (created; resumed when it exists)")
    m.add_argument("--quiet", action="store_true", help="no progress bar")
    m.set_defaults(func=run_make)
    t = vs.add_parser("train", help="train a grounding + reasoning model (best-on-validation checkpoint)")
    t.add_argument("--model", choices=("gnn", "nlm"), default="gnn", help="reasoning network")
    t.add_argument("--setting", choices=("modular", "e2e"), default="modular")
    t.add_argument("--data", type=Path, required=True, help="dataset folder made by 'vap make'")
    t.add_argument("--out", type=Path, required=True, help="run folder: model.safetensors, config.yaml, tb/")
    t.add_argument("--preset", choices=("cpu", "paper"), default="cpu",
                   help="cpu: ResNet-18 + FPN at 256 px from scratch; paper: ResNet-50 + FPN at 1024 px, frozen "
                        "backbone (give --weights)")
    t.add_argument("--epochs", type=int, default=10,
                   help="grounding (modular) or whole-model (e2e) epochs; 0 = reasoning network only")
    t.add_argument("--reasoning-epochs", type=int, default=30, help="modular: reasoning epochs on GT groundings")
    t.add_argument("--batch-size", type=int, default=2)
    t.add_argument("--image-side", type=int, default=None, help="input side in pixels (preset: 256 / 1024)")
    t.add_argument("--backbone", choices=("resnet18", "resnet34", "resnet50"), default=None)
    t.add_argument("--weights", type=Path, default=None, help="local .safetensors ResNet weights (no download)")
    t.add_argument("--fraction", type=float, default=1.0, help="share of training frames used (data_rate)")
    t.add_argument("--max-minutes", type=float, default=None, help="stop after this long, keeping the best")
    t.add_argument("--max-steps", type=int, default=None,
                   help="stop after this many optimisation steps, keeping the best (a smoke run)")
    t.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:1, …")
    t.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: half the cores)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=run_train)
    e = vs.add_parser("eval", help="evaluate a checkpoint: Table 3 (recall per action, aAcc, wAcc), Table D")
    e.add_argument("--run", type=Path, required=True, help="checkpoint folder written by 'vap train'")
    e.add_argument("--data", type=Path, required=True)
    e.add_argument("--split", default="test", help="train, val or test (default test)")
    e.add_argument("--groundings", choices=("auto", "predicted", "gt"), default="auto",
                   help="predicted (the grounding network's) or gt (ground truth: the reasoning network alone)")
    e.add_argument("--device", default="auto")
    e.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    e.set_defaults(func=run_eval)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def run_make(args: argparse.Namespace) -> int:
    from core.tasks.vap import VapDataConfig, generate, parse_worlds

    cfg = VapDataConfig(mode=args.mode, agents=args.agents, worlds=parse_worlds(args.worlds), steps=args.steps,
                        direction=args.direction, seed=args.seed, icons=args.icons, workers=args.workers,
                        px_per_cell=args.ppc, png_level=args.png_level)
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


def _bar(quiet: bool):
    if quiet:
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=1, unit="batch", file=sys.stderr, dynamic_ncols=True, leave=False)

    def progress(done: int, total: int, text: str = "") -> None:
        bar.total = total
        bar.n = done
        bar.set_description(text, refresh=False)
        bar.refresh()

    return bar, progress


def run_train(args: argparse.Namespace) -> int:
    from core.tasks.vap.train import TrainSettings, train

    overrides = {k: v for k, v in (("image_side", args.image_side), ("backbone", args.backbone),
                                   ("weights", str(args.weights) if args.weights else None)) if v is not None}
    s = TrainSettings(data=str(args.data), out=str(args.out), reasoning=args.model, setting=args.setting,
                      preset=args.preset, model=overrides, epochs=args.epochs,
                      reasoning_epochs=args.reasoning_epochs, batch_size=args.batch_size, fraction=args.fraction,
                      max_minutes=args.max_minutes, max_steps=args.max_steps, device=args.device,
                      threads=args.threads,
                      seed=args.seed)
    bar, progress = _bar(args.quiet)

    def log(text: str) -> None:
        if bar is not None:
            bar.write(text)
        else:
            print(text, flush=True)   # visible at once when the output goes to a log file

    summary = train(s, progress=progress, log=log)
    if bar is not None:
        bar.close()
    b = summary["best"]
    print(f"best on validation: {b['phase']} epoch {b['epoch']}, aAcc {b['val_aAcc']:.4f}; "
          f"checkpoint {args.out / 'model.safetensors'} ({summary['training']['seconds']} s on "
          f"{summary['training']['device']})")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from core.tasks.vap.evaluate import evaluate
    from core.tasks.vap.metrics import format_concepts, format_table3

    bar, progress = _bar(False)
    res = evaluate(args.run, args.data, stage=args.split, groundings=args.groundings, device=args.device,
                   progress=progress)
    if bar is not None:
        bar.close()
    print(format_table3(res.actions, f"{args.run} on {args.data} [{res.stage}], {res.frames} images, "
                                     f"{res.groundings} groundings (cars)"))
    if res.unary is not None and res.binary is not None:
        print(format_concepts(res.unary, res.binary))
    if args.json:
        atomic_write_text(args.json, json.dumps(res.to_dict(), indent=1))
    return 0
