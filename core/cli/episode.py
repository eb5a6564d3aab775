"""``python main.py episode ACTION``: questions about a recorded episode file (written by ``simulate`` or the studio).

``episode gridlock EP.npz`` lists the gridlocks of the episode: agents that stood still for K steps while waiting
on one another through their recorded Stop explanations (core/sim/gridlock.py, docs/gridlock.md).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# The simulator's episode and gridlock modules are imported in the command's body: `python main.py --help` imports every
# command module (core/cli/__init__.py).


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("episode", help="inspect a recorded episode file (gridlocks)",
                       description="Questions about a recorded episode (.npz written by simulate or the studio).")
    esub = p.add_subparsers(dest="episode_command", metavar="ACTION")
    g = esub.add_parser("gridlock", help="list the gridlocks: agents standing still while waiting on one another",
                        description="List the gridlocks of an episode: sets of agents that stood still for K "
                                    "steps while their recorded Stop explanations wait on one another in a cycle "
                                    "(docs/gridlock.md).")
    g.add_argument("episode", type=Path, help="episode file (.npz)")
    g.add_argument("--still-steps", type=int, default=None, metavar="K",
                   help="steps every agent of a gridlock must have stood still (default: "
                        "core.sim.gridlock.DEFAULT_STILL_STEPS)")
    g.add_argument("--json", action="store_true", help="machine-readable output (a JSON list on stdout)")
    g.set_defaults(func=run_gridlock)
    p.set_defaults(func=lambda args: _usage(p))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def gridlock_lines(gridlocks, names, clauses, num_steps: int, still_steps: int) -> list[str]:
    """The summary lines ``simulate`` and ``episode gridlock`` print (one per gridlock, or one saying none)."""
    from core.sim.gridlock import summary

    if not gridlocks:
        return [f"gridlocks: none (no agents stood still for {still_steps} steps waiting on one another)"]
    out = []
    for g in gridlocks:
        until = f"until step {g.end}" if g.end is not None else f"still locked at step {num_steps}"
        out.append(f"gridlock at step {g.step} ({until}): {summary(g, names, clauses, state=num_steps)}")
    return out


def run_gridlock(args: argparse.Namespace) -> int:
    from core.sim.episode import load_episode
    from core.sim.gridlock import DEFAULT_STILL_STEPS, GridlockDetector

    k = DEFAULT_STILL_STEPS if args.still_steps is None else args.still_steps
    if k < 1:
        print(f"error: --still-steps must be >= 1, got {k}", file=sys.stderr)
        return 2
    ep = load_episode(args.episode)   # a bad file is an EpisodeFileError naming it (run_cli prints it)
    det = GridlockDetector(k)
    det.update(ep)
    names = tuple(ep.agents.names)
    clauses = ep.meta.get("clauses")
    if args.json:
        data = {"episode": str(args.episode), "steps": ep.num_steps, "still_steps": k,
                "gridlocks": [g.to_dict(names, clauses) for g in det.gridlocks]}
        print(json.dumps(data, indent=1))
        return 0
    print(f"{args.episode}: {ep.num_steps} steps, {len(names)} agents, K = {k} steps")
    for line in gridlock_lines(det.gridlocks, names, clauses, ep.num_steps, k):
        print(line)
    return 0
