"""The paper's Table 2 from trained runs: TSR / DSR / Score per mode, mean ± std over seeds (runs of the same
algorithm and mode), on the test split.

Score appears twice: ``Score`` is the raw mean episode score (sum of the fixed test rewards, −3 more when the step
budget is used up), and ``ΔRand`` is that score relative to the random policy on the same episodes
(``Score − Score_random``; 0 = as good as random, positive = better). The paper's exact normalisation is not in the
reference material, so both are printed and the definition is stated under the table.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.tasks.spf.evaluate import evaluate
from core.tasks.spf.learning.monitor import validate
from core.tasks.spf.learning.run import CONFIG_FILE, MODEL_FILE, load_run, read_config, write_config

__all__ = ["RunResult", "collect_results", "format_results", "random_scores"]

ALGO_ORDER = ("random", "mlp-bc", "gnn-bc", "nlm-bc", "dqn", "ppo", "a2c", "nlm-dqn", "oracle")


@dataclass
class RunResult:
    path: str
    algo: str
    mode: str
    seed: int
    tsr: float
    dsr: float
    score: float
    wall_seconds: float | None
    steps: int | None


def collect_results(runs: list[str | Path], evaluate_missing: bool = True, progress=None) -> list[RunResult]:
    """Test figures of each run (from its config; a run without them is evaluated once and the figures stored)."""
    out = []
    for r in runs:
        cfg = read_config(r)
        test = cfg.get("metrics", {}).get("test")
        if not test and evaluate_missing:
            if progress:
                progress(f"evaluating {r} on the test split")
            before = _run_state(r)
            test = validate(load_run(r), cfg["mode"], 0, split="test")
            if _run_state(r) == before:
                cfg.setdefault("metrics", {})["test"] = test
                write_config(r, cfg)
            else:
                # the run changed meanwhile (it is still training): its own config wins, and a test figure it now
                # holds is of its final checkpoint; ours is of the checkpoint read and is not stored
                cfg = read_config(r)
                test = cfg.get("metrics", {}).get("test") or test
                if progress:
                    progress(f"{r} changed while it was evaluated (still training?): its config is left as it is")
        if not test:
            continue
        tr = cfg.get("training", {})
        out.append(RunResult(str(r), cfg["algo"], cfg["mode"], int(tr.get("seed", 0)), float(test["TSR"]),
                             float(test["DSR"]), float(test["Score"]), tr.get("wall_seconds"), tr.get("steps")))
    return out


def _run_state(run: str | Path) -> tuple:
    """What a training process rewrites in a run folder (its config, its weights): compared before and after a
    test evaluation, so the table never overwrites the config of a run that is still training (which lost the
    run's last validation and its wall-clock time)."""
    state: list[tuple[int, int] | None] = []
    for name in (CONFIG_FILE, MODEL_FILE):
        try:
            st = (Path(run) / name).stat()
            state.append((st.st_mtime_ns, st.st_size))
        except OSError:
            state.append(None)
    return tuple(state)


def random_scores(modes: list[str]) -> dict[str, tuple[float, float, float]]:
    """(TSR, DSR, Score) of the random policy (seed 0) on each mode's test set."""
    res = {}
    for m in modes:
        rep = evaluate(m, "random", "test", seed=0)
        res[m] = (rep.tsr, rep.dsr, rep.score)
    return res


def _ms(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{np.mean(values):.2f}±{np.std(values):.2f}"


def format_results(results: list[RunResult], random: dict[str, tuple[float, float, float]] | None = None) -> str:
    """Rows = algorithms, column groups = modes (TSR, DSR, Score, ΔRand), plus seeds and wall time per model."""
    modes = [m for m in ("easy", "medium", "hard", "expert") if any(r.mode == m for r in results)]
    modes += sorted({r.mode for r in results} - set(modes))
    algos = [a for a in ALGO_ORDER if any(r.algo == a for r in results)]
    w = 13
    head1 = f"{'':<9}" + "".join(f"| {m.capitalize():^{4 * w + 3}}" for m in modes)
    head2 = f"{'Method':<9}" + "".join(f"| {'TSR':>{w}}{'DSR':>{w}}{'Score':>{w}}{'ΔRand':>{w}}   " for _ in modes)
    lines = [head1, head2, "-" * len(head2)]
    if random:
        row = f"{'random':<9}"
        for m in modes:
            t, d, s = random.get(m, (float("nan"),) * 3)
            row += f"| {t:>{w}.2f}{d:>{w}.2f}{s:>{w}.2f}{0.0:>{w}.2f}   "
        lines.append(row)
    for a in algos:
        row = f"{a:<9}"
        for m in modes:
            rs = [r for r in results if r.algo == a and r.mode == m]
            if not rs:
                row += f"| {'-':>{w}}{'-':>{w}}{'-':>{w}}{'-':>{w}}   "
                continue
            rel = [r.score - random[m][2] for r in rs] if random and m in random else None
            row += (f"| {_ms([r.tsr for r in rs]):>{w}}{_ms([r.dsr for r in rs]):>{w}}"
                    f"{_ms([r.score for r in rs]):>{w}}{(_ms(rel) if rel else '-'):>{w}}   ")
        lines.append(row)
    lines.append("")
    lines.append("mean±std over seeds (population std); test split; Score = mean episode score (raw sum of the test "
                 "rewards, −3 at the step budget); ΔRand = Score − random's Score on the same episodes.")
    lines.append("runs (algo mode seed: steps, wall-clock training time):")
    for r in sorted(results, key=lambda r: (ALGO_ORDER.index(r.algo) if r.algo in ALGO_ORDER else 99, r.mode,
                                            r.seed)):
        wall = f"{r.wall_seconds:.0f} s" if r.wall_seconds is not None else "?"
        lines.append(f"  {r.algo} {r.mode} seed {r.seed}: {r.steps} steps, {wall}  ({r.path})")
    return "\n".join(lines)
