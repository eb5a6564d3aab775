"""Convert the reference's rule / ontology YAML into our formats, and check the conversions.

    .venv/bin/python tools/import_reference_rules.py RULES.yaml --ontology configs/ontologies/full.yaml [-o OUT.rules]
    .venv/bin/python tools/import_reference_rules.py --reference-ontology ontology_full.yaml [-o OUT.yaml]
    .venv/bin/python tools/import_reference_rules.py --check-all [--reference DIR] [--cases 2000]

Nothing in the input is evaluated (see core/logic/lang/reference.py). ``--check-all`` converts every rule file under
``<reference>/{master,vis}/config/rules/**`` and, for the files our bundled rule sets were written from, compares
the decisions of the converted and the bundled programs (and the task-rule verdicts for all four actions) on
random truth tables; it exits 1 on any failure. The test suite runs the same comparison.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.base.errors import LogiCityError  # noqa: E402
from core.logic.engines.compiled import CompiledEngine, TaskChecker  # noqa: E402
from core.logic.grounding.grounder import TableInterpretation  # noqa: E402
from core.logic.lang.ontology import Ontology, load_ontology  # noqa: E402
from core.logic.lang.program import load_rules  # noqa: E402
from core.logic.lang.reference import import_reference_ontology, import_reference_rules  # noqa: E402

DEFAULT_REFERENCE = ROOT / "tests" / "data" / "reference" / "logicity-configs"
ONTOLOGIES = ROOT / "configs" / "ontologies"
RULES = ROOT / "configs" / "rules"
CREDIT = "LogiCity (github.com/Jaraxxus-Me/LogiCity), MIT License, Copyright (c) 2023 Bowen Li"

#: reference rule file → (bundled rule file, ontology, sections compared)
BUNDLED = {
    "master/config/rules/sim/easy/easy_rule.yaml": ("sim_easy", "easy", ("main",)),
    "vis/config/rules/sim/easy/easy_rule.yaml": ("sim_easy", "easy", ("main",)),
    "master/config/rules/sim/expert/expert_rule.yaml": ("sim_expert", "full", ("main",)),
    "vis/config/rules/sim/expert/expert_rule.yaml": ("sim_expert", "full", ("main",)),
    "master/config/rules/Nav/easy/expert.yaml": ("spf_easy", "easy", ("sim", "task", "expert")),
    "vis/config/rules/Nav/easy/expert.yaml": ("spf_easy", "easy", ("sim", "task", "expert")),
    "master/config/rules/Nav/medium/expert.yaml": ("spf_medium", "medium", ("sim", "task", "expert")),
    "vis/config/rules/Nav/medium/expert.yaml": ("spf_medium", "medium", ("sim", "task", "expert")),
    "master/config/rules/Nav/hard/expert.yaml": ("spf_hard", "full", ("sim", "task", "expert")),
    "vis/config/rules/Nav/hard/expert.yaml": ("spf_hard", "full", ("task", "expert")),  # vis sim lacks Normal
    "master/config/rules/Nav/expert/expert.yaml": ("spf_expert", "full", ("sim", "task", "expert")),
    "vis/config/rules/Nav/expert/expert.yaml": ("spf_expert", "full", ("sim", "task", "expert")),
    "vis/config/rules/Vis/very_easy/rule.yaml": ("vap_easy", "vap", ("main",)),
    "vis/config/rules/Vis/hard/rule.yaml": ("vap_hard", "vap", ("main",)),
}


def ontology_for(rel: str) -> str:
    """Which bundled ontology a reference rule file is written against (by its folder)."""
    if "/Vis/" in rel:
        return "vap"
    if "/easy/" in rel:
        return "easy"
    if "/medium/" in rel:
        return "medium"
    return "full"


def random_tables(onto: Ontology, rng: np.random.Generator, egos: int, kmax: int, density: float
                  ) -> TableInterpretation:
    sizes = rng.integers(1, kmax + 1, size=egos)
    valid = np.arange(kmax)[None, :] < sizes[:, None]
    return TableInterpretation(onto, valid, {p.name: rng.random((egos, kmax)) < density for p in onto.unary},
                               {p.name: rng.random((egos, kmax, kmax)) < density * 0.6 for p in onto.binary})


def compare(ref_file: Path, bundled: str, onto: Ontology, sections: tuple[str, ...], cases: int,
            seed: int) -> list[str]:
    """Differences between the converted reference file and the bundled one (empty = identical)."""
    conv = import_reference_rules(ref_file, onto)
    mine = load_rules(RULES / f"{bundled}.rules", onto)
    rng = np.random.default_rng(seed)
    problems = []
    for sec in sections:
        batches = max(1, -(-cases // 250))
        if sec == "task":
            a, b = TaskChecker(conv.task()), TaskChecker(mine.task())
        else:
            a, b = CompiledEngine(conv.program(sec)), CompiledEngine(mine.program(sec))
        for it in range(batches):
            interp = random_tables(onto, rng, 250, 1 + it % 6, 0.25 + 0.5 * (it % 10) / 10)
            if sec == "task":
                for act in range(4):
                    ra, fa = a.check_all(interp, np.full(250, act))
                    rb, fb = b.check_all(interp, np.full(250, act))
                    if not (np.array_equal(ra, rb) and np.array_equal(fa, fb)):
                        problems.append(f"{sec}: task verdicts differ (action {act}, batch {it})")
            else:
                da, db = a.decide(interp), b.decide(interp)
                if not (np.array_equal(da.holds, db.holds) and np.array_equal(da.unsat, db.unsat)):
                    problems.append(f"{sec}: decisions differ (batch {it})")
    return problems


def check_all(reference: Path, cases: int) -> int:
    files = sorted(p for p in reference.glob("*/config/rules/**/*.yaml") if "ontology" not in p.name)
    onts = {n: load_ontology(ONTOLOGIES / f"{n}.yaml") for n in ("easy", "medium", "full", "vap")}
    failures = 0
    for i, f in enumerate(files):
        rel = f.relative_to(reference).as_posix()
        try:
            rf = import_reference_rules(f, onts[ontology_for(rel)])
        except LogiCityError as exc:
            print(f"FAIL  {rel}: {exc}")
            failures += 1
            continue
        sizes = ", ".join(f"{k} {len(v.clauses)}" for k, v in rf.sections.items())
        line = f"ok    {rel} ({sizes})"
        if rel in BUNDLED:
            name, onto, secs = BUNDLED[rel]
            problems = compare(f, name, onts[onto], secs, cases, seed=i)
            if problems:
                failures += 1
                line = f"FAIL  {rel} vs {name}.rules: " + "; ".join(problems[:3])
            else:
                line += f" = {name}.rules on {cases}+ random cases per section"
        print(line)
    for p in sorted(reference.glob("*/config/rules/**/ontology*.yaml")):
        try:
            o = import_reference_ontology(p)
            print(f"ok    {p.relative_to(reference).as_posix()} (ontology, {len(o.predicates)} predicates)")
        except LogiCityError as exc:
            print(f"FAIL  {p}: {exc}")
            failures += 1
    print(f"\n{len(files)} rule files, {failures} failure(s)")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rules", nargs="?", type=Path, help="a reference rule YAML to convert")
    ap.add_argument("--ontology", type=Path, help="our ontology YAML the rules are checked against")
    ap.add_argument("--reference-ontology", type=Path, help="convert a reference ontology YAML instead")
    ap.add_argument("--branch", choices=("master", "vis"), help="reference branch (CollidingClose ranges)")
    ap.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    ap.add_argument("--check-all", action="store_true", help="convert and check every reference rule file")
    ap.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    ap.add_argument("--cases", type=int, default=2000)
    args = ap.parse_args(argv)
    if args.check_all:
        return check_all(args.reference, args.cases)
    try:
        if args.reference_ontology:
            o = import_reference_ontology(args.reference_ontology, args.branch)
            text = (f"# Converted from {args.reference_ontology.name} by tools/import_reference_rules.py\n"
                    f"# Predicates of {CREDIT}.\n" + o.to_yaml())
        elif args.rules:
            if not args.ontology:
                ap.error("--ontology is required to convert rules")
            rf = import_reference_rules(args.rules, load_ontology(args.ontology))
            text = (f"% Converted from {args.rules.name} by tools/import_reference_rules.py\n"
                    f"% Rules of {CREDIT}.\n" + rf.to_text())
        else:
            ap.error("give a rule file, --reference-ontology or --check-all")
    except LogiCityError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
