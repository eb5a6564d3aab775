"""``spf train`` and ``spf table`` (registered by core/cli/spf.py): train a policy into a run folder, summarise runs.

    python main.py spf train --algo mlp-bc|gnn-bc|nlm-bc|dqn|ppo|a2c|nlm-dqn --mode MODE [--steps N] [--seed S] --out DIR
    python main.py spf table --runs DIR [DIR ...]

The options become a :class:`~core.tasks.spf.learning.config.BCConfig` or
:class:`~core.tasks.spf.learning.config.RLConfig` (:func:`config_from_args`). A run folder holds
``model.safetensors`` + ``config.yaml`` (core/tasks/spf/learning/run.py) and ``tb/`` TensorBoard logs;
``spf eval --policy DIR`` evaluates it. As in core/cli/spf.py, the task modules are imported by the command that
runs.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli.simulate import count_problem, fail, seed_problem

if TYPE_CHECKING:
    from core.tasks.spf.learning.config import BCConfig, RLConfig

ALGO_CHOICES = ("mlp-bc", "gnn-bc", "nlm-bc", "dqn", "ppo", "a2c", "nlm-dqn")


def register_train(s) -> None:
    t = s.add_parser("train", help="train an SPF policy (behaviour cloning or stable-baselines3 RL)",
                     description="Train an SPF policy into a run folder (model.safetensors + config.yaml, TensorBoard "
                                 "logs in DIR/tb). BC steps are gradient steps, RL steps environment steps.")
    t.add_argument("--algo", required=True, choices=ALGO_CHOICES)
    t.add_argument("--mode", required=True, help="easy, medium, hard, expert or an SPF mode file")
    t.add_argument("--steps", type=int, default=None, help="budget (default: BC 3000 gradient steps, RL 200k "
                                                           "environment steps)")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", type=Path, required=True, help="run folder to write")
    t.add_argument("--val-episodes", type=int, default=20, help="validation episodes per check (of 40)")
    t.add_argument("--eval-every", type=int, default=None, help="steps between validations (default: budget/10 "
                                                                "RL, /5 BC)")
    t.add_argument("--demos", type=Path, nargs="+", default=None, help="BC: demonstrations file(s) (spf collect); "
                                                                      "default: collect --n-demos once and cache in "
                                                                      "demos/")
    t.add_argument("--n-demos", type=int, default=200, help="BC: oracle trajectories to collect")
    t.add_argument("--demo-worlds", type=int, default=1, help="BC: split --n-demos over this many worlds (seeds "
                                                              "0, 1, ...; each cached in demos/)")
    t.add_argument("--balance", choices=("full", "sqrt", "none"), default="full",
                   help="BC: class-balanced sampling of the oracle's actions")
    t.add_argument("--augment", choices=("none", "views"), default="none",
                   help="BC: 'views' replaces half of every batch by demonstrated views with the other entities "
                        "shuffled and some hidden, labelled by the oracle (docs/spf.md)")
    t.add_argument("--lr", type=float, default=None, help="learning rate (default: BC 1e-3, NLM-BC 2e-3; RL per "
                                                          "algorithm, see config.yaml)")
    t.add_argument("--batch", type=int, default=128, help="BC: batch size")
    t.add_argument("--lr-schedule", choices=("constant", "cosine"), default="constant",
                   help="BC: learning rate constant, or decayed to 0 over the budget (half a cosine)")
    t.add_argument("--nlm-residual", action="store_true",
                   help="NLM-BC: every NLM layer also reads the predicates of all layers before it (residual)")
    t.add_argument("--nlm-hidden", type=int, default=None,
                   help="NLM-BC: width of one hidden ReLU layer in every NLM layer's per-arity MLPs (default: "
                        "32; 0: none, each MLP one linear layer and a sigmoid)")
    t.add_argument("--n-envs", type=int, default=None, help="RL: vectorised training envs (default: 4, NLM-DQN 8)")
    t.add_argument("--violation-penalty", type=float, default=None, help="RL: training reward of a violation "
                                                                         "(default per method, config.yaml records it)")
    t.add_argument("--overtime-penalty", type=float, default=None, help="RL: training reward at the horizon")
    t.add_argument("--no-test", action="store_true", help="skip the test-split evaluation at the end")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=run_train)

    b = s.add_parser("table", help="Table-2 summary (mean ± std over seeds) of trained runs")
    b.add_argument("--runs", nargs="+", type=Path, required=True, help="run folders")
    b.add_argument("--no-random", action="store_true", help="skip the random baseline (and ΔRand)")
    b.set_defaults(func=run_table)


def run_policy_for(path: str | Path, mode: str, split: str):
    """A trained run as an evaluation policy for ``mode``; refused (PolicyError) for another mode or layout."""
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.run import load_run

    return load_run(path, SPFEnv(mode, split))


def config_from_args(args: argparse.Namespace) -> BCConfig | RLConfig:
    """The config the options of ``spf train`` give (a bad value raises
    :class:`~core.tasks.spf.learning.config.SettingError`)."""
    from core.tasks.spf.learning.config import BCConfig, RLConfig
    from core.tasks.spf.learning.settings import RL_ALGOS, TRAINING_REWARDS, TrainingReward

    common = dict(algo=args.algo, mode=args.mode, steps=args.steps, seed=args.seed, val_episodes=args.val_episodes,
                  eval_every=args.eval_every, test=not args.no_test)
    if args.algo in RL_ALGOS:
        base = TRAINING_REWARDS[args.algo]
        reward = TrainingReward(
            violation=base.violation if args.violation_penalty is None else args.violation_penalty,
            overtime=base.overtime if args.overtime_penalty is None else args.overtime_penalty)
        return RLConfig(**common, n_envs=args.n_envs, reward=reward,
                        hyperparameters=None if args.lr is None else {"learning_rate": args.lr})
    return BCConfig(**common, demos=args.demos, n_demos=args.n_demos, demo_worlds=args.demo_worlds, batch=args.batch,
                    lr=args.lr, balance=args.balance, augment=args.augment, lr_schedule=args.lr_schedule,
                    nlm_residual=args.nlm_residual, nlm_hidden=args.nlm_hidden)


def run_train(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from core.tasks.spf.learning import train_config
    from core.tasks.spf.learning.config import SettingError
    from core.tasks.spf.learning.monitor import Monitor
    from core.tasks.spf.settings import load_spf_mode

    problem = (seed_problem(args.seed) or count_problem(args.steps, "--steps")
               or count_problem(args.n_envs, "--n-envs"))
    if problem:
        return fail(problem)
    if not 1 <= args.demo_worlds <= max(1, args.n_demos):
        return fail(f"--demo-worlds must be in 1..--n-demos ({args.n_demos}), got {args.demo_worlds}")
    if args.nlm_hidden is not None and args.nlm_hidden < 0:
        return fail(f"--nlm-hidden must be >= 0, got {args.nlm_hidden}")
    if args.out.exists() and not args.out.is_dir():
        return fail(f"--out {args.out}: a file is in the way (the run is a folder)")
    load_spf_mode(args.mode, "train")  # a bad mode fails here, before any work
    try:
        config = config_from_args(args)
    except SettingError as exc:
        return fail(str(exc))
    bar = tqdm(total=1, desc=f"{args.algo} {args.mode}", unit="step", disable=args.quiet, file=sys.stderr,
               dynamic_ncols=True)

    class BarMonitor(Monitor):
        def progress(self, done, total):
            bar.total = total
            bar.n = done
            bar.refresh()

        def message(self, text):
            bar.write(text, file=sys.stderr)

    try:
        cfg = train_config(config, args.out, monitor=BarMonitor())
    except KeyboardInterrupt:
        bar.close()
        print(f"interrupted: the best checkpoint so far (if any) is in {args.out}", file=sys.stderr)
        return 130
    finally:
        bar.close()
    tr, met = cfg["training"], cfg["metrics"]
    print(f"{args.algo} {cfg['mode']} seed {args.seed}: {tr['steps']} {tr['unit']} in {tr['wall_seconds']:.0f} s; "
          f"best validation at step {tr.get('best_step')}: TSR {met['val']['TSR']:.2f} DSR {met['val']['DSR']:.2f} "
          f"Score {met['val']['Score']:.2f}")
    if "test" in met:
        t = met["test"]
        print(f"test ({t['episodes']} episodes): TSR {t['TSR']:.2f} DSR {t['DSR']:.2f} Score {t['Score']:.2f}")
    print(f"run written to {args.out} (model.safetensors, config.yaml, tb/)")
    return 0


def run_table(args: argparse.Namespace) -> int:
    from core.tasks.spf.learning.table import collect_results, format_results, random_scores

    for r in args.runs:
        if not (r / "config.yaml").is_file():
            return fail(f"{r}: not a run folder (no config.yaml; spf train --out DIR writes one)")
    results = collect_results(args.runs, progress=lambda t: print(t, file=sys.stderr))
    rnd = None if args.no_random else random_scores(sorted({r.mode for r in results}))
    print(format_results(results, rnd))
    return 0
