"""``python main.py simulate``: run the simulator headless, save the episode, print a summary."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from core.base.codes import ACTION_NAMES
from core.base.paths import DEFAULT_MODE
from core.cli.episode import gridlock_lines

# The simulator and tqdm are imported in the command's body: `python main.py --help` imports every command module
# (core/cli/__init__.py).


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="run a headless simulation and save the episode",
                       description="Run the rule-governed simulation of a mode file and save the episode.")
    p.add_argument("--config", type=Path, default=DEFAULT_MODE,
                   help="mode file (configs/modes/*.yaml); default: the bundled default city")
    p.add_argument("--steps", type=int, default=None, help="number of steps (default: the mode's 'steps')")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed → identical episode)")
    p.add_argument("--out", type=Path, default=None, help="episode file to write (.npz)")
    p.add_argument("--engine", choices=("compiled", "z3"), default=None, help="rule engine (default: mode's)")
    p.add_argument("--split", choices=("train", "val", "test"), default=None,
                   help="agent set split for modes that have several (SPF modes)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--still-steps", type=int, default=None, metavar="K",
                   help="gridlock report: steps the agents of a gridlock must have stood still (default: "
                        "core.sim.gridlock.DEFAULT_STILL_STEPS; docs/gridlock.md)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from core.sim.config import load_mode
    from core.sim.simulation import Simulation

    problem = seed_problem(args.seed)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if args.out is not None:
        problem = output_problem(args.out)
        if problem:  # found before simulating: a long run must not be lost to a typo in the output path
            print(f"error: --out {args.out}: {problem}", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    cfg = load_mode(args.config, agents_split=args.split, engine=args.engine)
    steps = args.steps if args.steps is not None else cfg.steps
    if steps < 0:
        print("error: --steps must be >= 0", file=sys.stderr)
        return 2
    if args.still_steps is not None and args.still_steps < 1:
        print(f"error: --still-steps must be >= 1, got {args.still_steps}", file=sys.stderr)
        return 2
    sim = Simulation(cfg, seed=args.seed, record=True)
    setup = time.perf_counter() - t0
    bar = tqdm(total=steps, unit="step", disable=args.quiet, file=sys.stderr, dynamic_ncols=True)
    try:
        sim.run(steps, progress=lambda done, total: bar.update(1))
    finally:
        bar.close()
    buf = sim.buffer
    assert buf is not None
    decided = buf.array("decided")
    realised = buf.array("realised")
    n = len(sim.agents)
    print(f"mode {cfg.name}: {n} agents, {steps} steps, seed {args.seed}, engine {sim.engine_name}")
    print(f"{'action':<8}{'decided':>10}{'realised':>10}")
    for a, name in enumerate(ACTION_NAMES):
        print(f"{name:<8}{int((decided == a).sum()):>10}{int((realised == a).sum()):>10}")
    print(f"goals reached: {int(sim.goals_reached.sum())} "
          f"(by {int((sim.goals_reached > 0).sum())} of {n} agents)")
    from core.sim.gridlock import DEFAULT_STILL_STEPS, find_gridlocks

    still = DEFAULT_STILL_STEPS if args.still_steps is None else args.still_steps
    for line in gridlock_lines(find_gridlocks(buf, still), tuple(sim.agents.names), buf.meta.get("clauses"),
                               buf.num_steps, still):
        print(line)
    if sim.step_seconds:
        s = np.asarray(sim.step_seconds) * 1000
        print(f"seconds per step: median {np.median(s):.2f} ms, mean {s.mean():.2f} ms, max {s.max():.2f} ms "
              f"(set-up {setup:.2f} s)")
    if args.out:
        try:
            buf.save(args.out, extra_meta={"mode_file": cfg.source})
        except OSError as exc:
            print(f"error: could not write {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"episode written to {args.out}")
    return 0


def output_problem(path: Path, example: str = "ep.npz") -> str | None:
    """Why ``path`` cannot be written as a file (None when it can): checked before any long computation.

    Creates the missing parent folders (they would be created when saving anyway) and tries to create a file in
    the folder (``os.access`` is no answer for root or special file systems such as /proc). Shared by every
    sub-command that writes a file; ``example`` is the file name suggested when ``path`` is a folder.
    """
    if path.is_dir():
        return f"is a folder; give a file name such as {path / example}"
    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        return f"cannot create folder {parent}: it (or a folder above it) is a file"
    except OSError as exc:
        return f"cannot create folder {parent}: {exc.strerror or exc}"
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".logicity-write-test-"):
            pass
    except OSError as exc:
        return f"cannot create files in folder {parent}: {exc.strerror or exc}"
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is read-only"
    return None


def fail(message: str, code: int = 2) -> int:
    """Print ``error: message`` to stderr; ``code`` for the sub-command to return."""
    print(f"error: {message}", file=sys.stderr)
    return code


def count_problem(value: int | None, flag: str) -> str | None:
    """Why ``value``, given with ``flag``, is not a count of at least 1 (None when it is or was not given)."""
    if value is not None and value < 1:
        return f"{flag} must be >= 1, got {value}"
    return None


def seed_problem(seed: int, flag: str = "--seed", limit: int | None = None) -> str | None:
    """Why ``seed`` is not a usable seed (None when it is): numpy generators refuse negative seeds; ``limit``
    bounds seeds that are stored in 64-bit arrays."""
    if seed < 0:
        return f"{flag} must be >= 0, got {seed}"
    if limit is not None and seed > limit:
        return f"{flag} must be at most {limit}, got {seed}"
    return None
