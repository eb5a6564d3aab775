"""The loader families the fuzzer feeds: for each, real seed files and the loader call(s) an input goes through.

Families: rules, maps, agent sets, ontologies, mode files, projects, episodes, policies. Each target writes the
input where the loader expects it and calls the public loader the studio and the CLI use, then touches what a
caller would touch next (an opened project's episode, a policy's first decision, every array of an episode), so
a damaged input must be refused by the loader with a :class:`~core.base.errors.LogiCityError`, not fail later.

The seeds are built once per work folder (:func:`prepare`): small generated cities keep map, mode and project
loads fast (the 241x241 default city is far slower to load), so 10,000 inputs per family take minutes.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"


@dataclass(frozen=True)
class Family:
    """A loader family: ``kind`` picks the mutator ("text" or "npz"); ``seeds(work)`` gives (extension, bytes)
    pairs; ``target(data, ext, work)`` runs the loader on one input."""

    name: str
    kind: str
    seeds: Callable[[Path], list[tuple[str, bytes]]]
    target: Callable[[bytes, str, Path], None]


# ---- the work folder: small, valid seed files ----------------------------------------------------------------

def _small_city_text(seed: int, blocks: tuple[int, int]) -> str:
    from core.map.generate import generate_city
    from core.map.io import dumps_map

    return dumps_map(generate_city(seed, blocks=blocks, name=f"fuzz{seed}"))


def prepare(work: Path) -> None:
    """Write the seed files into ``work`` (idempotent: a ``.ready`` marker is left when done)."""
    if (work / ".ready").exists():
        return
    from core.project.model import new_project
    from core.project.save import save_project
    from core.sim.config import load_mode
    from core.sim.simulation import Simulation

    data = work / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "map.yaml").write_text(_small_city_text(1, (1, 1)))
    shutil.copy(CONFIGS / "agents" / "easy" / "train.yaml", data / "agents.yaml")
    shutil.copy(CONFIGS / "ontologies" / "easy.yaml", data / "ontology.yaml")
    shutil.copy(CONFIGS / "rules" / "sim_easy.rules", data / "rules.rules")
    modes = work / "modes"
    modes.mkdir(exist_ok=True)
    (modes / "seed.yaml").write_text("# fuzz seed mode\nname: fuzz\ndescription: a small city\n"
                                     "map: ../data/map.yaml\nagents: ../data/agents.yaml\n"
                                     "ontology: ../data/ontology.yaml\nrules: ../data/rules.rules\n"
                                     "engine: compiled\nsteps: 20\nsampling: master\n")
    (modes / "seed_spf.yaml").write_text("name: fuzz spf\nmap: ../data/map.yaml\nagents_train: ../data/agents.yaml\n"
                                         "agents_val: ../data/agents.yaml\nontology: ../data/ontology.yaml\n"
                                         "rules: ../data/rules.rules\nrule_section: null\nengine: z3\nsteps: 0\n")
    cfg = load_mode(modes / "seed.yaml")
    sim = Simulation(cfg, seed=1, record=True)
    for _ in range(4):
        sim.step()
    project = work / "project"
    if project.exists():
        shutil.rmtree(project)
    p = new_project(cfg, name="fuzz", seed=1)
    p.studio = {"colour_by": "Type", "step": 2, "breakpoints": [{"kind": "step", "step": 3}]}
    save_project(p, project, episode=sim.buffer)
    (work / "episode.npz").write_bytes((project / p.episodes[0].file).read_bytes())
    sim.step()
    sim.buffer.save(work / "episode5.npz", extra_meta={"interventions": [{"step": 1, "agent": 0, "action": 3}]})
    rng = np.random.default_rng(0)
    obs = 12
    weights = {"W0": rng.normal(size=(obs, 8)).astype(np.float32), "b0": np.zeros(8, np.float32),
               "W1": rng.normal(size=(8, 4)).astype(np.float32), "b1": np.zeros(4, np.float32)}
    np.savez(work / "policy.npz", **weights)
    try:
        from safetensors.numpy import save_file

        save_file(weights, str(work / "policy.safetensors"))
    except ImportError:   # pragma: no cover - safetensors is pinned in requirements.txt
        pass
    (work / "fuzz").mkdir(exist_ok=True)
    (work / ".ready").write_text("ok")


def _files(pattern: str) -> list[tuple[str, bytes]]:
    return [(p.suffix, p.read_bytes()) for p in sorted(CONFIGS.glob(pattern))]


# ---- targets -------------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _ontology():
    from core.logic.lang.ontology import load_ontology

    return load_ontology(CONFIGS / "ontologies" / "full.yaml")


def _write(work: Path, name: str, data: bytes) -> Path:
    p = work / "fuzz" / name
    p.write_bytes(data)
    return p


def _rules(data: bytes, ext: str, work: Path) -> None:
    from core.logic.lang.program import load_rules

    load_rules(_write(work, "input.rules", data), _ontology())


def _maps(data: bytes, ext: str, work: Path) -> None:
    from core.map.io import load_map

    load_map(_write(work, "map.yaml", data))


def _agents(data: bytes, ext: str, work: Path) -> None:
    from core.agents.io import load_agent_set

    load_agent_set(_write(work, "agents.yaml", data))


def _ontologies(data: bytes, ext: str, work: Path) -> None:
    from core.logic.lang.ontology import load_ontology

    load_ontology(_write(work, "ontology.yaml", data))


def _modes(data: bytes, ext: str, work: Path) -> None:
    from core.sim.config import load_mode

    p = work / "modes" / "input.yaml"
    p.write_bytes(data)
    load_mode(p)


def _projects(data: bytes, ext: str, work: Path) -> None:
    from core.project.load import load_project, open_episode

    (work / "project" / "project.yaml").write_bytes(data)
    p = load_project(work / "project")
    open_episode(p)


def _episodes(data: bytes, ext: str, work: Path) -> None:
    from core.sim.episode import STATE_FIELDS, STEP_FIELDS, load_episode

    ep = load_episode(_write(work, "episode.npz", data))
    names = list(ep.agents.names)
    for f in STATE_FIELDS + STEP_FIELDS:
        np.asarray(ep.array(f)).sum()
    last = ep.num_states - 1
    for k in {0, max(last, 0)}:
        if 0 <= k < ep.num_states:
            ep.snapshot(k)
            for i in range(len(names)):
                ep.plan(k, i)
    if ep.num_steps:
        ep.step_record(0)
    ep.check_map(*_city_shape(work))


@lru_cache(maxsize=4)
def _city_shape(work: Path) -> tuple[int, int]:
    from core.map.io import load_map

    return load_map(work / "data" / "map.yaml").shape


def _policies(data: bytes, ext: str, work: Path) -> None:
    from core.tasks.spf.policy import call_policy
    from core.tasks.spf.policy_files import load_policy

    pol = load_policy(_write(work, "policy" + ext, data))
    layers = getattr(pol, "layers", None)
    if layers:
        obs = np.zeros(int(np.shape(layers[0][0])[0]), np.float32)
        call_policy(pol, obs, None, "in the fuzzer")


FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("rules", "text", lambda w: _files("rules/*.rules"), _rules),
    Family("maps", "text", lambda w: [(".yaml", _small_city_text(s, (1, 1)).encode()) for s in (1, 2, 3)], _maps),
    Family("agents", "text", lambda w: _files("agents/*/*.yaml") + _files("agents/vap/*/*.yaml"), _agents),
    Family("ontologies", "text", lambda w: _files("ontologies/*.yaml"), _ontologies),
    Family("modes", "text", lambda w: [(".yaml", (w / "modes" / n).read_bytes()) for n in ("seed.yaml",
                                                                                            "seed_spf.yaml")],
           _modes),
    Family("projects", "text", lambda w: [(".yaml", (w / "project" / "project.yaml").read_bytes())], _projects),
    Family("episodes", "npz", lambda w: [(".npz", (w / n).read_bytes()) for n in ("episode.npz", "episode5.npz")],
           _episodes),
    Family("policies", "npz", lambda w: [(p.suffix, p.read_bytes()) for p in sorted(w.glob("policy.*"))],
           _policies),
]}
