"""Simulation configuration: which city, agents, ontology and rules, and the sampling region.

A *mode file* (``configs/modes/*.yaml``, documented in docs/formats.md "Mode files") names the four data files
(paths relative to the mode file) plus settings; :func:`load_mode` reads it into a :class:`SimConfig`, the
in-memory object the simulator takes. Programs can also build a :class:`SimConfig` directly (e.g. from a
generated city).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from core.agents.io import load_agent_set
from core.agents.spec import AgentSet
from core.base.errors import ConfigError
from core.io.yamlio import LocatedDict, expect, load_yaml, reject_unknown_keys
from core.logic.lang.ontology import load_ontology
from core.logic.lang.program import load_rules
from core.map.io import load_map
from core.map.model import CityMap
from core.map.sampling import Variant

EngineName = Literal["compiled", "z3"]
ENGINES: tuple[EngineName, ...] = ("compiled", "z3")
SAMPLINGS: tuple[Variant, ...] = ("master", "vis")


@dataclass
class SimConfig:
    """Everything a :class:`core.sim.simulation.Simulation` needs.

    ``rules`` is the rule file object of the logic core; ``rule_section`` picks the section that drives the
    agents (``sim`` for SPF files; ``None`` for plain rule sets). ``agent_region`` limits start/goal sampling
    to rows and columns below it (reference ``agent_region``; ``None`` = whole map).
    """

    city: CityMap
    agents: AgentSet
    ontology: Any
    rules: Any
    name: str = "custom"
    rule_section: str | None = None
    agent_region: int | None = None
    sampling: Variant = "master"  # start/goal sampling variant: "master" (SPF/sim) or "vis" (VAP branch);
    # see docs/reference.md#start-and-goal-sampling
    engine: EngineName = "compiled"
    steps: int = 300
    source: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # role -> path of the file it was loaded from
    extra: dict[str, Any] = field(default_factory=dict)  # task-specific blocks of the mode file (e.g. spf)

    @property
    def program(self) -> Any:
        """The rule program that drives the agents."""
        return self.rules.program(self.rule_section)

    def with_agents(self, agents: AgentSet) -> "SimConfig":
        return replace(self, agents=agents)


def _resolve(base: Path, d: LocatedDict, key: str) -> Path:
    rel = expect(d, key, str)
    try:
        p = (base / rel).resolve()
        exists = p.exists()
    except (OSError, ValueError) as exc:  # a name longer than the file system allows, a NUL character, ...
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise d.error(f"{key} names a file that cannot be opened ({why}): {rel!r:.120}", key) from None
    if not exists:
        raise d.error(f"{key} file not found: {rel} (resolved to {p})", key)
    return p


def load_mode(path: str | Path, *, agents_split: str | None = None, engine: str | None = None) -> SimConfig:
    """Read a mode file and the files it names.

    ``agents_split`` selects ``agents_<split>`` (train/val/test) when the mode lists per-split agent sets
    (SPF modes); the plain ``agents`` key is used otherwise.
    """
    path = Path(path)
    d = load_yaml(path)
    if not isinstance(d, LocatedDict):  # what load_yaml builds for every mapping
        raise ConfigError("a mode file must be a mapping", path, 1)
    base = path.parent
    known = {"name", "description", "map", "agents", "agents_train", "agents_val", "agents_test", "ontology",
             "rules", "rule_section", "agent_region", "sampling", "engine", "steps", "spf", "vap"}
    reject_unknown_keys(d, sorted(known), listed="known")
    akey = "agents"
    if agents_split is not None:
        akey = f"agents_{agents_split}"
        if akey not in d:
            raise d.error(f"mode has no {akey!r} entry", None)
    elif "agents" not in d and "agents_train" in d:
        akey = "agents_train"
    files = {"map": _resolve(base, d, "map"), "agents": _resolve(base, d, akey),
             "ontology": _resolve(base, d, "ontology"), "rules": _resolve(base, d, "rules")}
    region = expect(d, "agent_region", int, required=False)
    if region is not None and region <= 0:
        raise d.error("agent_region must be a positive integer", "agent_region")
    eng = engine or expect(d, "engine", str, required=False, default="compiled")
    if eng not in ENGINES:
        raise d.error(f"engine must be one of {', '.join(ENGINES)}, got {eng!r}", "engine")
    steps = expect(d, "steps", int, required=False, default=300)
    if steps < 0:
        raise d.error(f"steps must be 0 or more, got {steps}", "steps")
    sampling = expect(d, "sampling", str, required=False, default="master")
    if sampling not in SAMPLINGS:
        raise d.error(f"sampling must be 'master' or 'vis', got {sampling!r}", "sampling")
    city = load_map(files["map"])
    agents = load_agent_set(files["agents"])
    ontology = load_ontology(files["ontology"])
    rules = load_rules(files["rules"], ontology)
    section = expect(d, "rule_section", str, required=False)
    try:
        rules.program(section)
    except (KeyError, ValueError) as exc:
        raise d.error(f"rule_section {section!r} not in {files['rules'].name}: {exc}", "rule_section") from None
    extra = {k: d[k] for k in ("spf", "vap") if k in d}
    for split in ("train", "val", "test"):
        if f"agents_{split}" in d:
            extra.setdefault("agent_files", {})[split] = str(_resolve(base, d, f"agents_{split}"))
    return SimConfig(city=city, agents=agents, ontology=ontology, rules=rules,
                     name=expect(d, "name", str, required=False, default=path.stem), rule_section=section,
                     agent_region=region, sampling=sampling, engine=eng, steps=steps, source=str(path),
                     files={k: str(v) for k, v in files.items()}, extra=extra)
