"""``python main.py spf ...``: Safe Path Following — evaluate policies, collect demonstrations, make episode sets.

* ``spf eval --policy oracle|random|PATH --mode MODE|all --split test`` — TSR / DSR / Score (paper Table 2 layout)
* ``spf collect --mode MODE --n 100`` — oracle demonstrations (Minari-style arrays, docs/spf.md)
* ``spf make-episodes --mode MODE|all --split val|test|both`` — regenerate the shipped episode sets
  (deterministic: same seed → byte-identical arrays)
* ``spf info --mode MODE`` — settings, observation layout, episode set summary
* ``spf train --algo ALGO --mode MODE --out DIR`` / ``spf table --runs DIR...`` — learning (core/cli/spf_train.py)

``main.py`` imports every command module to build its parser, so the task modules (the simulator, its rule engine
and the environment behind them) are imported by the command that runs, not here.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from core.base.errors import LogiCityError
from core.cli.simulate import count_problem, fail, output_problem, seed_problem
from core.cli.spf_train import register_train, run_policy_for
from core.io.fileio import atomic_write_text

MODES = ("easy", "medium", "hard", "expert")


def _modes(value: str) -> list[str]:
    return list(MODES) if value == "all" else [value]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("spf", help="Safe Path Following: eval, collect, make-episodes, info",
                       description="Safe Path Following task tools (docs/spf.md).")
    s = p.add_subparsers(dest="spf_command", metavar="SUBCOMMAND")

    e = s.add_parser("eval", help="evaluate a policy on an episode set (TSR, DSR, Score)")
    e.add_argument("--policy", default="oracle",
                   help="oracle, random, a trained run folder (spf train --out DIR; --mode all = its mode), or a "
                        "policy file: .npz or .safetensors MLP weights (recommended: only numbers are read), a "
                        "TorchScript .pt (torch.jit.load, never pickle), or a .py file defining policy(obs[, env]) — "
                        "a .py policy RUNS YOUR CODE: only load files you trust")
    e.add_argument("--mode", default="all", help="easy, medium, hard, expert, all, or an SPF mode file")
    e.add_argument("--split", choices=("val", "test"), default="test")
    e.add_argument("--episodes", type=int, default=None, help="evaluate only the first N episodes")
    e.add_argument("--episode-file", type=Path, default=None, help="episode set file (default: the shipped one)")
    e.add_argument("--seed", type=int, default=0, help="seed of the random policy")
    e.add_argument("--json", type=Path, default=None, help="also write the figures as JSON")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=run_eval)

    c = s.add_parser("collect", help="collect oracle demonstrations")
    c.add_argument("--mode", required=True)
    c.add_argument("--n", type=int, default=100, help="number of trajectories")
    c.add_argument("--split", choices=("train", "val", "test"), default="train")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--out", type=Path, default=None,
                   help="output .npz (default: demos/spf_<mode>_oracle_<n>.npz, a folder git ignores)")
    c.add_argument("--quiet", action="store_true")
    c.set_defaults(func=run_collect)

    m = s.add_parser("make-episodes", help="(re)generate the evaluation episode sets deterministically")
    m.add_argument("--mode", default="all")
    m.add_argument("--split", choices=("val", "test", "both"), default="both")
    m.add_argument("--n", type=int, default=None, help="episodes (default: 40 val, 100 test)")
    m.add_argument("--seed", type=int, default=0, help="base seed (try k uses seed*1000000 + k)")
    m.add_argument("--out", type=Path, default=None, help="output file (one mode and split only)")
    m.add_argument("--quiet", action="store_true")
    m.set_defaults(func=run_make_episodes)

    register_train(s)

    i = s.add_parser("info", help="settings, observation layout and episode sets of a mode")
    i.add_argument("--mode", default="easy")
    i.set_defaults(func=run_info)

    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _check_output(flag: str, path: Path, example: str) -> int:
    """0 when ``path`` can be written, else print why (before any long computation) and return 2."""
    problem = output_problem(path, example)
    return fail(f"{flag} {path}: {problem}") if problem else 0


def _bar(total: int, desc: str, quiet: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="ep", disable=quiet, file=sys.stderr, dynamic_ncols=True)


def _advance(bar: Any, result: Any) -> None:
    """One finished episode (an EpisodeResult) on the progress ``bar``."""
    bar.update(1)
    bar.set_postfix(success=int(result.success))


def run_eval(args: argparse.Namespace) -> int:
    from core.tasks.spf.episodes import load_episode_set
    from core.tasks.spf.evaluate import evaluate, format_table
    from core.tasks.spf.learning.run import read_config
    from core.tasks.spf.policy_files import PY_POLICY_NOTICE
    from core.tasks.spf.settings import load_spf_mode

    problem = seed_problem(args.seed) or count_problem(args.episodes, "--episodes")
    if problem:
        return fail(problem)
    if args.episode_file is not None and args.mode == "all":
        return fail("--episode-file holds the episodes of one mode and split; give that mode with --mode "
                     "(e.g. --mode easy), not --mode all")
    if args.json is not None and _check_output("--json", args.json, "results.json"):
        return 2
    if args.policy.lower().endswith(".py") and Path(args.policy).is_file():
        print(PY_POLICY_NOTICE.format(path=args.policy), file=sys.stderr)
    run_dir = Path(args.policy).is_dir()
    modes = _modes(args.mode)
    if run_dir and args.mode == "all":  # a trained run drives only its own mode
        try:
            modes = [read_config(args.policy)["mode"]]
        except LogiCityError as exc:
            return fail(str(exc))
    reports = []
    for mode in modes:
        if run_dir:  # a trained run (spf train --out DIR): refused for another mode or layout
            try:
                policy = run_policy_for(args.policy, mode, args.split)
            except LogiCityError as exc:
                return fail(str(exc))
        else:
            policy = args.policy
        spf = load_spf_mode(mode, args.split)
        n = len(load_episode_set(spf, args.episode_file))
        ks = list(range(n if args.episodes is None else min(n, args.episodes)))
        bar = _bar(len(ks), f"{args.policy} {spf.name}/{args.split}", args.quiet)
        try:
            rep = evaluate(mode, policy, args.split, seed=args.seed, episodes=ks,
                           episode_file=str(args.episode_file) if args.episode_file else None,
                           progress=functools.partial(_advance, bar))
        finally:
            bar.close()
        reports.append(rep)
    print(f"SPF evaluation, split {args.split}, policy {args.policy}")
    print(format_table(reports))
    if args.json:
        try:
            atomic_write_text(args.json, json.dumps([r.to_dict() for r in reports], indent=1))
        except OSError as exc:
            return fail(f"could not write --json {args.json}: {exc.strerror or exc}", 1)
        print(f"figures written to {args.json}")
    return 0


def run_collect(args: argparse.Namespace) -> int:
    from core.tasks.spf.demos import collect_oracle, save_demonstrations
    from core.tasks.spf.settings import load_spf_mode

    problem = count_problem(args.n, "--n") or seed_problem(args.seed)
    if problem:
        return fail(problem)
    name = load_spf_mode(args.mode, args.split).name
    out = args.out or Path("demos") / f"spf_{name}_oracle_{args.n}.npz"
    if _check_output("--out", out, "demos.npz"):
        return 2
    bar = _bar(args.n, f"oracle {name}/{args.split}", args.quiet)
    try:
        trajs, meta = collect_oracle(args.mode, args.n, args.split, args.seed, progress=lambda t: bar.update(1))
    finally:
        bar.close()
    try:
        save_demonstrations(out, trajs, meta)
    except OSError as exc:
        return fail(f"could not write {out}: {exc.strerror or exc}", 1)
    steps = sum(len(t) for t in trajs)
    succ = sum(t.meta["success"] for t in trajs)
    print(f"{len(trajs)} trajectories, {steps} steps, {succ} reached the goal; written to {out}")
    return 0


def run_make_episodes(args: argparse.Namespace) -> int:
    from core.tasks.spf.episodes import DEFAULT_COUNTS, SEED_STRIDE, default_episode_path, save_episode_set
    from core.tasks.spf.make_episodes import make_episode_set
    from core.tasks.spf.settings import load_spf_mode

    splits = ["val", "test"] if args.split == "both" else [args.split]
    modes = _modes(args.mode)
    if args.out and (len(splits) > 1 or len(modes) > 1):
        return fail("--out needs one --mode and one --split")
    # try k uses seed * SEED_STRIDE + k, stored as a 64-bit integer
    problem = count_problem(args.n, "--n") or seed_problem(args.seed, limit=(2**63 - 1) // SEED_STRIDE - 1)
    if problem:
        return fail(problem)
    if args.out and _check_output("--out", args.out, f"{args.split}.npz"):
        return 2
    for mode in modes:
        for split in splits:
            spf = load_spf_mode(mode, split)
            total = args.n if args.n is not None else DEFAULT_COUNTS[split]
            bar = _bar(total, f"episodes {spf.name}/{split}", args.quiet)

            def progress(acc: int, tot: int, tries: int, bar=bar) -> None:
                bar.n = acc
                bar.set_postfix(tries=tries)
                bar.refresh()

            try:
                es = make_episode_set(mode, split, total, args.seed, progress=progress)
            finally:
                bar.close()
            out = args.out or default_episode_path(spf)
            try:
                save_episode_set(out, es)
            except OSError as exc:
                return fail(f"could not write {out}: {exc.strerror or exc}", 1)
            print(f"{spf.name}/{split}: {len(es)} episodes from {es.meta['tries']} tries "
                  f"(quotas {es.meta['quotas']}) -> {out}")
    return 0


def run_info(args: argparse.Namespace) -> int:
    from core.tasks.spf.env import SPFEnv

    env = SPFEnv(args.mode, "test")
    st = env.settings
    print(f"SPF {env.spf.name}: ego {st.ego}, {env.fov} entities, observation {env.layout.size} values, "
          f"action cost {list(st.action_cost)} (Slow, Normal, Fast, Stop), overtime {st.overtime_cost}")
    for name, ss in st.splits.items():
        print(f"  {name}: region {ss.agent_region}, priority 1..{ss.max_priority - 1}, horizon {ss.max_horizon}"
              + (f" (eval {ss.eval_horizon})" if ss.eval_horizon else "")
              + f", reset concepts {dict(ss.reset_dist)}")
    print("observation layout (predicate: first..last index):")
    for pred, a, b in env.layout.describe():
        print(f"  {pred:<16}{a:>4}..{b}")
    for split in ("val", "test"):
        try:
            es = SPFEnv(args.mode, split).episodes
        except Exception as exc:  # noqa: BLE001 - a missing set is reported, not fatal
            print(f"  {split} episodes: {exc}")
            continue
        print(f"  {split} episodes: {len(es)} ({dict(Counter(es.concepts()))}), oracle steps "
              f"{int(es.oracle_steps().min())}..{int(es.oracle_steps().max())}")
    return 0
