#!/usr/bin/env python3
"""Rule editor / rules CLI speed: diagnostics latency after a keystroke, and analysis time per bundled rule set.

* *diagnostics*: :func:`core.analysis.diagnostics.diagnose` on the largest bundled rule file after a one-character
  edit (each sample changes one character of a clause, as typing does; half the edits make an error), median
  and p95 over ``--samples`` runs; target: < 100 ms, printed with the ratio median / target.
* *analysis*, per bundled rule file: the solver findings (strata, conflicts with cores, dead clauses) per rule
  section, witness scenes for real conflicts, and the deadlock search (k = 2, default intersection), each
  timed separately on the bundled default city.

Usage: python bench/rules.py [--samples 200] [--no-deadlocks] [--skip-analysis] [--files sim_expert.rules ...]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_MS = 100.0


def ontology_for(text: str):
    from core.cli.rules import resolve_ontology

    return resolve_ontology(None, text)


def bench_diagnostics(samples: int) -> None:
    from core.analysis.diagnostics import diagnose

    files = sorted((ROOT / "configs" / "rules").glob("*.rules"), key=lambda p: p.stat().st_size)
    path = files[-1]
    text = path.read_text(encoding="utf-8")
    onto = ontology_for(text)
    rng = random.Random(0)
    body = [i for i, ch in enumerate(text) if ch.isalpha() and not text.startswith("%", text.rfind("\n", 0, i) + 1)]
    diagnose(text, onto, str(path))  # warm-up (imports, caches)
    times, errors = [], 0
    for _ in range(samples):
        i = rng.choice(body)
        edited = text[:i] + rng.choice("XYZabcQ") + text[i + 1:]
        t0 = time.perf_counter()
        d = diagnose(edited, onto, str(path))
        times.append((time.perf_counter() - t0) * 1000)
        errors += any(x.severity == "error" for x in d)
    t = np.asarray(times)
    med = float(np.median(t))
    print(f"diagnostics after a keystroke, {path.name} ({len(text)} characters, {text.count(chr(10))} lines), "
          f"{samples} edits ({errors} with errors):")
    print(f"  median {med:.2f} ms, p95 {np.percentile(t, 95):.2f} ms, max {t.max():.2f} ms; target < {TARGET_MS:.0f} ms "
          f"-> ratio median/target {med / TARGET_MS:.3f} ({'OK' if med < TARGET_MS else 'OVER'})")


def bench_analysis(names: list[str] | None, deadlocks: bool) -> None:
    from core.analysis.deadlock import find_deadlocks
    from core.analysis.static import conflicts, dead_clauses
    from core.analysis.witness import witness_scene
    from core.logic.lang.program import Program, parse_rules
    from core.sim.config import load_mode

    base = load_mode(ROOT / "configs" / "modes" / "default.yaml")
    files = sorted((ROOT / "configs" / "rules").glob("*.rules"))
    if names:
        files = [f for f in files if f.name in names]
    print("analysis per bundled rule set (seconds; default city, first 4-way intersection):")
    print(f"  {'file':<20}{'section':<9}{'conflicts':>10}{'dead':>8}{'scenes':>8}{'deadlock':>10}  findings")
    for path in files:
        text = path.read_text(encoding="utf-8")
        onto = ontology_for(text)
        rules = parse_rules(text, onto, str(path))
        cfg = replace(base, ontology=onto, rules=rules)
        for name, prog in rules.sections.items():
            if not isinstance(prog, Program):
                continue
            t0 = time.perf_counter()
            cs = conflicts(prog)
            t1 = time.perf_counter()
            dead = dead_clauses(prog)
            t2 = time.perf_counter()
            found = [witness_scene(cfg, prog, c.heads, c.witness) for c in cs if c.conflict]
            t3 = time.perf_counter()
            dl_s, n_dl = float("nan"), 0
            if deadlocks:
                dl = find_deadlocks(cfg, prog, max_agents=2)
                n_dl = len(dl.deadlocks)
                dl_s = time.perf_counter() - t3
            n_conf = sum(c.conflict for c in cs)
            print(f"  {path.name:<20}{name:<9}{t1 - t0:>10.2f}{t2 - t1:>8.2f}{t3 - t2:>8.2f}{dl_s:>10.2f}  "
                  f"{n_conf} conflicts ({sum(s is not None and s.verified for s in found)} verified scenes), "
                  f"{len(dead)} dead, {n_dl} deadlock patterns")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--no-deadlocks", action="store_true")
    ap.add_argument("--files", nargs="*", default=None)
    ap.add_argument("--skip-analysis", action="store_true")
    args = ap.parse_args()
    bench_diagnostics(args.samples)
    if not args.skip_analysis:
        bench_analysis(args.files, not args.no_deadlocks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
