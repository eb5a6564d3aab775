"""Exporter ``pddl``: the mode's rules as a PDDL domain and one problem per scene (mapping: core/export/pddl.py).

Scene ``s`` is the state after ``at_step`` steps of the simulation with seed ``seed + s``; its problem is the ego's
(``--ego``, default the first car) view of that state. Files: ``pddl/domain.pddl`` and
``pddl/problem_NNNNN.pddl``. Every file is parsed back with the ``pddl`` package before the export is recorded, and
the domain's clauses are compared with the rule program (the round trip); a mismatch fails the export.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from core.base.codes import Kind
from core.export.common import episode_plan, load_config, mode_files, sim_options
from core.export.pddl import (
    domain_text,
    parse_domain_text,
    parse_problem_text,
    pddl_name,
    problem_text,
    program_rules,
    rules_from_domain,
    scene_facts,
)
from core.export.registry import ExportError, ExporterSpec, Finalized, Option, Shard, ShardResult, register
from core.io.fileio import atomic_write_text

# The simulator is imported by the shard that runs it: `python main.py --help` imports every exporter module to list its
# options (core/cli/export.py).


def _program(config):
    return config.program


def scene_problem(sim, ego_name: str, name: str, domain: str, seed: int) -> tuple[str, Any]:
    """(problem text, SceneFacts) of the current state of ``sim`` for the ego named ``ego_name``."""
    names = list(sim.agents.names)
    if ego_name:
        if ego_name not in names:
            raise ExportError(f"export pddl: --ego {ego_name!r} is not an agent of the mode (agents: "
                              f"{', '.join(names[:8])}…)")
        ego = names.index(ego_name)
    else:
        cars = [i for i, k in enumerate(sim.agents.kinds) if int(k) == int(Kind.CAR)]
        ego = cars[0] if cars else 0
    grounding = sim.grounder.ground(sim.snapshot(), np.random.default_rng(seed), view_limits=sim.view_limits or None)
    route = np.asarray(sim.paths[ego])[int(sim.path_index[ego]):]
    if len(route) == 0:
        route = np.asarray([sim.positions[ego]])
    facts = scene_facts(grounding, ego, route)
    return problem_text(facts, domain, name), facts


def run_shard(options: Mapping[str, Any], shard: Shard, out: Path) -> ShardResult:
    from core.sim.simulation import Simulation

    cfg = load_config(options)
    domain = _domain_name(options)
    files, atoms = [], 0
    for e, seed in zip(shard.params["episodes"], shard.params["seeds"]):
        sim = Simulation(cfg, seed=seed, record=False, engine=options.get("engine") or None)
        sim.run(int(options["at_step"]))
        text, facts = scene_problem(sim, options["ego"], f"scene-{e:05d}", domain, seed)
        try:
            problem = parse_problem_text(text)
        except Exception as exc:  # noqa: BLE001 - a bug of the exporter, reported with the scene
            raise ExportError(f"export pddl: the problem of scene {e} does not parse back: {exc}") from None
        rel = f"pddl/problem_{e:05d}.pddl"
        atomic_write_text(out / rel, text)
        files.append(rel)
        atoms += len(problem.init)
    return ShardResult(shard.name, files, {"problems": len(files), "init_atoms": atoms})


def _domain_name(options: Mapping[str, Any]) -> str:
    return pddl_name(f"logicity-{Path(options['mode']).stem}")


def finalize(options: Mapping[str, Any], results: list[ShardResult], out: Path) -> Finalized:
    program = _program(load_config(options))
    text = domain_text(program, _domain_name(options))
    try:
        domain = parse_domain_text(text)
    except Exception as exc:  # noqa: BLE001
        raise ExportError(f"export pddl: the domain does not parse back: {exc}") from None
    back = {k: sorted(v) for k, v in rules_from_domain(domain).items()}
    if back != {k: sorted(v) for k, v in program_rules(program).items()}:
        raise ExportError("export pddl: the domain's clauses differ from the rule program (round trip failed)")
    atomic_write_text(out / "pddl" / "domain.pddl", text)
    return Finalized(["pddl/domain.pddl"], {"clauses": len(program.clauses)},
                     {"pddl": {"domain": "pddl/domain.pddl", "requirements": sorted(str(r) for r in
                                                                                 domain.requirements),
                               "section": program.name}})


SPEC = register(ExporterSpec(
    name="pddl", title="PDDL domain and scene problems",
    description="The rules as a PDDL 2.2 domain (derived predicates, actions) and one problem per scene (the ego's "
                "view, route and goal); parsed back with the pddl package.",
    options=sim_options(episodes=4, steps=0, per_shard=4)[:3] + (
        Option("episodes", "int", 4, "number of scenes (problems)", minimum=1),
        Option("seed", "int", 0, "seed of scene 0 (scene s uses seed + s)", minimum=0, maximum=2**62),
        Option("per_shard", "int", 4, "scenes per shard", minimum=1),
        Option("at_step", "int", 0, "the state after this many steps is the scene", minimum=0),
        Option("ego", "str", "", "the agent whose problem is written (default: the first car)"),
    ),
    plan=episode_plan, run_shard=run_shard, finalize=finalize, config_files=mode_files, packages=("pddl",)))
