"""``python main.py export KIND --out DIR ...``: dataset export (docs/export.md).

One sub-command per registered exporter (``core/export/registry.py``); its flags come from the exporter's option
schema. Common flags: ``--out`` (the output folder; rerunning into it resumes), ``--backend local|ray|inline``,
``--workers N``, ``--ray-address ADDR``, ``--retries N``, ``--overwrite``. ``export list`` lists the exporters.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.export.backends import BACKENDS
from core.export.registry import exporters, get_exporter

# tqdm and the runner are imported when an export runs: `python main.py --help` imports every command module
# (core/cli/__init__.py).


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export datasets (episodes, SPF Minari, Parquet, videos, PDDL, ...)",
                       description="Export a dataset into a folder, resumably (rerun to resume), on a local "
                                   "process pool or a Ray cluster. See docs/export.md.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    lst = kinds.add_parser("list", help="list the exporters and their options")
    lst.set_defaults(func=run_list)
    for spec in exporters():
        k = kinds.add_parser(spec.name, help=spec.title, description=spec.description)
        for opt in spec.options:
            kw: dict = {"dest": f"opt_{opt.name}", "default": None, "help": f"{opt.help} (default: {opt.default!r})"}
            if opt.kind == "bool":
                kw["action"] = argparse.BooleanOptionalAction
            elif opt.kind == "choice":
                kw["choices"] = opt.choices
            k.add_argument(opt.flag, **kw)
        k.add_argument("--out", type=Path, required=True, help="output folder (rerunning into it resumes)")
        k.add_argument("--backend", choices=BACKENDS, default="local",
                       help="local: a process pool (default); ray: Ray tasks; inline: this process")
        k.add_argument("--workers", type=int, default=None,
                       help="processes (local) or tasks in flight (ray); default: the CPUs available")
        k.add_argument("--ray-address", default=None,
                       help="Ray cluster to join (auto, or ray://HEAD:10001); default: start a local one")
        k.add_argument("--retries", type=int, default=2, help="retries of a failed shard (default 2)")
        k.add_argument("--overwrite", action="store_true",
                       help="replace another export (or other files) in --out instead of refusing")
        k.add_argument("--quiet", action="store_true", help="no progress bar")
        k.set_defaults(func=run, exporter=spec.name)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_list(args: argparse.Namespace) -> int:
    for spec in exporters():
        print(f"{spec.name:<10} {spec.title}")
        for o in spec.options:
            shown = "|".join(c or "(default)" for c in o.choices)
            choices = f" [{shown}]" if o.choices else ""
            print(f"    {o.flag:<16} {o.kind}{choices}, default {o.default!r}: {o.help}")
    return 0


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from core.export.runner import Cancelled, run_export

    spec = get_exporter(args.exporter)
    options = {o.name: getattr(args, f"opt_{o.name}") for o in spec.options
               if getattr(args, f"opt_{o.name}") is not None}
    bar = None

    def progress(done: int, total: int, text: str) -> None:
        nonlocal bar
        if args.quiet:
            return
        if bar is None:
            bar = tqdm(total=total, unit="shard", file=sys.stderr, dynamic_ncols=True)
        bar.n = done
        bar.set_postfix_str(text[:60])
        bar.refresh()
        if "failed" in text:
            tqdm.write(f"warning: {text}", file=sys.stderr)

    try:
        report = run_export(spec.name, options, args.out, backend=args.backend, workers=args.workers,
                            ray_address=args.ray_address, retries=args.retries, overwrite=args.overwrite,
                            progress=progress)
    except Cancelled as exc:
        print(f"cancelled: {exc}", file=sys.stderr)
        return 130
    finally:
        if bar is not None:
            bar.close()
    c = report.manifest["counts"]
    figures = ", ".join(f"{v} {k}" for k, v in c.items() if k not in ("bytes",))
    print(f"export {spec.name}: {figures}, {c.get('bytes', 0) / 1e6:.2f} MB in {report.out} "
          f"({len(report.ran)} shard(s) run, {len(report.skipped)} already done; backend {report.backend}, "
          f"{report.workers} worker(s), {report.seconds:.1f} s)")
    for f in report.failures:
        print(f"retried: {f.shard} attempt {f.attempt} failed: {f.error}")
    print(f"manifest: {report.out / 'manifest.json'}")
    return 0
