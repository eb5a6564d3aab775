"""Rebuild the configuration an episode was recorded with, from the texts embedded in the episode file.

Episodes embed their map, agents, ontology and rules (``meta["config_texts"]``) so a saved episode stays
readable and re-groundable after the original files change or move — a researcher can send one file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from core.agents.io import dumps_agent_set, loads_agent_set
from core.base.errors import EpisodeFileError, LogiCityError
from core.logic.lang.ontology import loads_ontology
from core.logic.lang.program import parse_rules
from core.map.io import dumps_map, loads_map
from core.map.sampling import Variant
from core.sim.config import EngineName, SimConfig

ROLES = ("map", "agents", "ontology", "rules")


def config_texts(cfg: SimConfig) -> dict[str, str]:
    """The four config texts of ``cfg``: the files' own text when loaded from files, else serialised."""
    out: dict[str, str] = {}
    for role in ROLES:
        path = cfg.files.get(role)
        if path:
            try:
                out[role] = Path(path).read_text(encoding="utf-8-sig")
                continue
            except OSError:
                pass
        if role == "map":
            out[role] = dumps_map(cfg.city)
        elif role == "agents":
            out[role] = dumps_agent_set(cfg.agents)
        elif role == "ontology":
            out[role] = cfg.ontology.to_yaml()
        else:
            out[role] = cfg.rules.to_text()
    return out


def config_from_episode(meta: dict[str, Any], source: str | Path | None = None) -> SimConfig:
    """Parse the embedded texts of an episode's metadata back into a :class:`SimConfig`."""
    texts = meta.get("config_texts") or {}
    missing = [r for r in ROLES if not isinstance(texts.get(r), str)]
    if missing:
        raise EpisodeFileError(f"episode does not embed its {', '.join(missing)} configuration", source)
    where = f"{source}#" if source else "episode#"
    try:
        city = loads_map(texts["map"], where + "map")
        agents = loads_agent_set(texts["agents"], where + "agents")
        ontology = loads_ontology(texts["ontology"], where + "ontology")
        rules = parse_rules(texts["rules"], ontology, where + "rules")
    except LogiCityError as exc:
        raise EpisodeFileError(f"embedded configuration is invalid: {exc}", source) from None
    return SimConfig(city=city, agents=agents, ontology=ontology, rules=rules, name=str(meta.get("mode", "episode")),
                     rule_section=meta.get("rule_section"), agent_region=meta.get("agent_region"),
                     # names other than the known ones are refused where the sampler and the engine are made
                     sampling=cast(Variant, str(meta.get("sampling", "master"))),
                     engine=cast(EngineName, str(meta.get("engine", "compiled"))),
                     source=str(source) if source else None)
