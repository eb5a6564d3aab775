"""``python main.py rules check|analyze``: rule diagnostics and solver analysis for rule authors and CI.

* ``rules check FILE [--ontology O] [--json] [--strict]`` — every syntax error, unknown or wrongly-aritied
  predicate, unused variable and unsafe negation at ``file:line:col`` (core.analysis.diagnostics). Exit 1 when
  there is an error (or, with ``--strict``, a warning), 0 when clean.
* ``rules analyze FILE [--ontology O] [--deadlock-agents K] [--episode EP.npz] [--json] [--scenes DIR]`` —
  strata and negation cycles, conflicts (unsat cores at clause lines, witness scenes), dead clauses, the
  bounded deadlock search and clause coverage (core.analysis.report). Exit 1 when the file does not load
  (or, with ``--strict``, when there is any finding), 0 otherwise.

The ontology is ``--ontology`` (a file, or the name of a bundled one: easy, medium, full, vap), else the file's
``#ontology NAME.`` directive, else ``full``. Errors in the inputs are printed as ``error: file:line:col: ...``
(exit 1), like every other sub-command.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

from core.base.errors import ConfigError, RuleError, read_text_file
from core.base.paths import ROOT

# The rule language, its analysis (z3) and the simulator are imported in the command bodies: `python main.py --help`
# imports every command module (core/cli/__init__.py).

ONTOLOGIES = ROOT / "configs" / "ontologies"
DEFAULT_MODE = ROOT / "configs" / "modes" / "default.yaml"
_HINT = re.compile(r"^\s*#\s*ontology\s+([A-Za-z_][A-Za-z0-9_]*)\s*\.", re.MULTILINE)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="check or analyse a rule file (diagnostics, conflicts, deadlocks, coverage)",
                       description="Rule file tools for rule authors and CI pipelines (docs/rules.md).")
    s = p.add_subparsers(dest="rules_command", metavar="SUBCOMMAND")

    c = s.add_parser("check", help="diagnostics: syntax, unknown/wrongly-aritied predicates, unused variables, "
                                   "unsafe negation (exit 1 on errors)")
    c.add_argument("file", type=Path, help="a .rules file")
    c.add_argument("--ontology", default=None, help="ontology file or bundled name (default: the file's "
                                                    "#ontology directive, else full)")
    c.add_argument("--json", action="store_true", help="print the diagnostics as JSON")
    c.add_argument("--strict", action="store_true", help="warnings also fail (exit 1)")
    c.set_defaults(func=run_check)

    a = s.add_parser("analyze", help="strata, conflicts, dead clauses, deadlocks, coverage")
    a.add_argument("file", type=Path, help="a .rules file")
    a.add_argument("--ontology", default=None, help="ontology file or bundled name")
    a.add_argument("--section", action="append", default=None, help="analyse only this rule section (repeatable)")
    a.add_argument("--mode", type=Path, default=DEFAULT_MODE,
                   help="mode file whose map is used for witness scenes and the deadlock search "
                        "(default: the bundled default city)")
    a.add_argument("--deadlock-agents", type=int, default=2, metavar="K",
                   help="search deadlocks of up to K agents (2 or 3; 0 skips the search; default 2)")
    a.add_argument("--junction", type=int, default=None,
                   help="index of the intersection (city.junctions) to search around (default: the first 4-way)")
    a.add_argument("--episode", type=Path, default=None, help="episode file (.npz): add clause coverage")
    a.add_argument("--scenes", type=Path, default=None, metavar="DIR",
                   help="write each witness and deadlock scene as a scene file (docs/scene-api.md) into DIR")
    a.add_argument("--no-scenes", action="store_true", help="skip witness scenes and the deadlock search "
                                                            "(solver findings only)")
    a.add_argument("--json", action="store_true", help="print the analysis as JSON")
    a.add_argument("--strict", action="store_true", help="exit 1 when there is any finding")
    a.set_defaults(func=run_analyze)
    p.set_defaults(func=lambda args: _usage(p))


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return 2


def read_rule_text(path: Path) -> str:
    """The text of a rule file, refused like :func:`core.logic.load_rules` refuses it (located RuleError)."""
    from core.logic.lang.parser import MAX_RULE_CHARS

    return read_text_file(path, MAX_RULE_CHARS, RuleError, "rule file", "rule file")


def resolve_ontology(option: str | None, text: str):
    """The ontology named by ``--ontology``, the text's ``#ontology`` directive, or the bundled full one."""
    from core.logic.lang.ontology import load_ontology

    name = option
    if name is None:
        m = _HINT.search(text)
        name = m.group(1) if m else "full"
        bundled = ONTOLOGIES / f"{name}.yaml"
        if not bundled.is_file():
            raise ConfigError(f"the rule file names ontology {name!r}, which is not bundled "
                              f"({', '.join(p.stem for p in sorted(ONTOLOGIES.glob('*.yaml')))}); pass --ontology FILE")
        return load_ontology(bundled)
    path = Path(name)
    if not path.exists() and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and (ONTOLOGIES / f"{name}.yaml").is_file():
        path = ONTOLOGIES / f"{name}.yaml"
    if not path.exists():
        raise ConfigError(f"--ontology {name}: no such file, and no bundled ontology of that name "
                          f"({', '.join(p.stem for p in sorted(ONTOLOGIES.glob('*.yaml')))})")
    return load_ontology(path)


def run_check(args: argparse.Namespace) -> int:
    from core.analysis.diagnostics import ERROR, diagnose

    text = read_rule_text(args.file)
    onto = resolve_ontology(args.ontology, text)
    diags = diagnose(text, onto, str(args.file))
    errors = sum(d.severity == ERROR for d in diags)
    warnings = len(diags) - errors
    if args.json:
        print(json.dumps({"file": str(args.file), "ontology": onto.name, "errors": errors, "warnings": warnings,
                          "diagnostics": [d.to_dict() for d in diags]}, indent=2))
    else:
        for d in diags:
            print(d)
        print(f"{args.file}: {errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}",
              file=sys.stderr)
    return 1 if errors or (args.strict and warnings) else 0


def run_analyze(args: argparse.Namespace) -> int:
    from core.analysis.report import analyze_rules
    from core.logic.lang.program import parse_rules

    if args.deadlock_agents not in (0, 2, 3):
        print(f"error: --deadlock-agents must be 0, 2 or 3, got {args.deadlock_agents}", file=sys.stderr)
        return 2
    text = read_rule_text(args.file)
    onto = resolve_ontology(args.ontology, text)
    rules = parse_rules(text, onto, str(args.file), strict=False)
    unknown = [s for s in args.section or () if s not in rules.sections]
    if unknown:
        print(f"error: {args.file} has no section {unknown[0]!r} (sections: {', '.join(rules.sections)})",
              file=sys.stderr)
        return 2
    config = None
    if not args.no_scenes:
        from core.sim.config import load_mode

        config = replace(load_mode(args.mode), ontology=onto, rules=rules)
        if args.junction is not None:
            junctions = config.city.junctions
            if not (0 <= args.junction < len(junctions)) or not junctions[args.junction].is_intersection:
                ok = [i for i, j in enumerate(junctions) if j.is_intersection]
                print(f"error: --junction {args.junction} is not an intersection of {args.mode} (try {ok[0]}.."
                      f"{ok[-1]})", file=sys.stderr)
                return 2
    episode = None
    if args.episode is not None:
        from core.sim.episode import load_episode

        episode = load_episode(args.episode)
    report = analyze_rules(rules, config=config, sections=tuple(args.section) if args.section else None,
                           deadlock_agents=0 if args.no_scenes else args.deadlock_agents, junction=args.junction,
                           episode=episode, scenes=not args.no_scenes)
    written = _write_scenes(report, args.scenes) if args.scenes is not None else []
    if args.json:
        data = report.to_dict()
        data["scene_files"] = [str(p) for p in written]
        print(json.dumps(data, indent=2))
    else:
        print(report)
        for p in written:
            print(f"scene written to {p}")
    return 1 if args.strict and report.problems else 0


def _write_scenes(report, folder: Path) -> list[Path]:
    from core.sim.scene_io import save_scene

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create folder: {exc.strerror or exc}", folder) from None
    out = []
    for s in report.sections:
        for c in s.conflicts:
            if c.scene is not None:
                out.append(save_scene(c.scene.scene, folder / f"{s.section}-conflict-{'-'.join(c.result.heads)}.yaml"))
        for i, d in enumerate(s.deadlocks.deadlocks if s.deadlocks else (), 1):
            out.append(save_scene(d.scene, folder / f"{s.section}-deadlock-{i}.yaml"))
    return out
