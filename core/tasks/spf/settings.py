"""SPF task settings: the ``spf:`` block of an SPF mode file, validated, plus a cache of loaded modes.

Why a separate module: the environment, the episode tools, the evaluator, the multi-agent wrapper and the studio
all need the same numbers (ego, action costs, horizons, per-split priority/concept draws) and the same loaded
:class:`~core.sim.config.SimConfig`; loading a mode (map layers, lane graph, rules) takes about a second, so
loaded modes are cached per (file, split) and shared read-only.

Mode block (``configs/modes/spf_<mode>.yaml``, documented in docs/spf.md)::

    spf:
      ego: Car_1                       # the controlled agent (must be a car, first in the agent file)
      fov_entities: 5                  # entities in the observation, ego included
      action_cost: [-2, 0, -2, -5]     # Slow, Normal, Fast, Stop
      overtime_cost: -3                # added when the horizon is reached
      eval_actions: [Stop]             # actions whose decisions DSR scores
      splits:
        train: {agent_region: 100, max_priority: 7, max_horizon: 400, reset_dist: {ambulance: 0.25, ...}}
        val:   {...}
        test:  {..., eval_horizon: 2000}
"""
from __future__ import annotations

import dataclasses
import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from core.agents.io import MAX_PRIORITY
from core.base.codes import ACTION_INDEX, ACTION_NAMES, Kind
from core.base.errors import ConfigError
from core.base.paths import ROOT
from core.base.world import KNOWN_CONCEPTS
from core.io.yamlio import LocatedDict, LocatedList, expect, is_mapping
from core.sim.config import SimConfig, load_mode

__all__ = ["SplitSettings", "SPFSettings", "MODES", "SPLITS", "mode_path", "load_spf_mode", "SPFMode"]

MODES: tuple[str, ...] = ("easy", "medium", "hard", "expert")
SPLITS: tuple[str, ...] = ("train", "val", "test")
#: the concept label of an ego without any concept flag (reference ``reset_dist`` entry "normal")
NORMAL = "normal"


@dataclass(frozen=True)
class SplitSettings:
    """Per-split values (reference task configs: ``algo/dqn.yaml`` for train, ``expert_episode_*`` for val/test)."""

    agent_region: int | None
    max_priority: int          # reset priority is uniform over 1 .. max_priority-1
    max_horizon: int           # steps before truncation (overtime cost)
    eval_horizon: int | None   # horizon used when evaluating on the episode set (reference expert_test.yaml)
    reset_dist: tuple[tuple[str, float], ...]  # (concept, probability) in file order; empty = keep the ego's

    @property
    def concepts(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.reset_dist)


@dataclass(frozen=True)
class SPFSettings:
    ego: str
    fov_entities: int
    action_cost: tuple[float, float, float, float]
    overtime_cost: float
    eval_actions: tuple[int, ...]
    splits: Mapping[str, SplitSettings] = field(default_factory=dict)

    def split(self, name: str) -> SplitSettings:
        try:
            return self.splits[name]
        except KeyError:
            raise ConfigError(f"the SPF mode has no split {name!r} (splits: {', '.join(self.splits)})") from None


def _number(d: LocatedDict, key: str, required: bool = True, default=None):
    value = expect(d, key, (int, float), required=required, default=default)
    if value is not None and not math.isfinite(value):
        raise d.error(f"{key} must be a finite number, got {value}", key)
    return value


def parse_spf_block(block, source: str | None = None) -> SPFSettings:
    """Validate the ``spf:`` mapping of a mode file (errors name the file and line)."""
    if not is_mapping(block):
        raise ConfigError("the mode file has no 'spf:' block (not an SPF mode)", source)
    known = {"ego", "fov_entities", "action_cost", "overtime_cost", "eval_actions", "splits"}
    for key in block:
        if key not in known:
            raise block.error(f"unknown spf key {key!r} (known: {', '.join(sorted(known))})", key)
    ego = expect(block, "ego", str)
    fov = expect(block, "fov_entities", int, required=False, default=5)
    if fov < 1:
        raise block.error("fov_entities must be at least 1", "fov_entities")
    cost = expect(block, "action_cost", list)
    if len(cost) != 4 or not all(isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c)
                                 for c in cost):
        raise block.error("action_cost must list 4 finite numbers (Slow, Normal, Fast, Stop)", "action_cost")
    overtime = _number(block, "overtime_cost", required=False, default=-3)
    ev = expect(block, "eval_actions", list, required=False, default=["Stop"])
    eval_actions = []
    for i, name in enumerate(ev):
        if not isinstance(name, str) or name not in ACTION_INDEX:  # e.g. [[Stop]]: a list is no action name
            raise ev.error(f"unknown action {name!r} in eval_actions (actions: {', '.join(ACTION_NAMES)})", i) \
                if isinstance(ev, LocatedList) else ConfigError(f"unknown action {name!r}", source)
        eval_actions.append(ACTION_INDEX[name])
    splits_d = expect(block, "splits", dict)
    splits = {}
    for name, sd in splits_d.items():
        if name not in SPLITS:
            raise splits_d.error(f"unknown split {name!r} (splits: {', '.join(SPLITS)})", name)
        if not is_mapping(sd):
            raise splits_d.error(f"split {name!r} must be a mapping", name)
        for key in sd:
            if key not in ("agent_region", "max_priority", "max_horizon", "eval_horizon", "reset_dist"):
                raise sd.error(f"unknown key {key!r} in split {name!r}", key)
        region = expect(sd, "agent_region", int, required=False)
        maxp = expect(sd, "max_priority", int)
        if not 2 <= maxp <= MAX_PRIORITY + 1:
            raise sd.error(f"max_priority must be 2..{MAX_PRIORITY + 1} (priorities are drawn from "
                           f"1..max_priority-1), got {maxp}", "max_priority")
        horizon = expect(sd, "max_horizon", int)
        if horizon < 1:
            raise sd.error("max_horizon must be positive", "max_horizon")
        eval_h = expect(sd, "eval_horizon", int, required=False)
        dist_d = expect(sd, "reset_dist", dict, required=False, default={})
        dist = []
        for concept, p in dist_d.items():
            if concept != NORMAL and KNOWN_CONCEPTS.get(concept) is not Kind.CAR:
                raise dist_d.error(f"reset_dist concept {concept!r} is not a car concept "
                                   f"({', '.join(c for c, k in KNOWN_CONCEPTS.items() if k is Kind.CAR)}, "
                                   f"{NORMAL})", concept)
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0:
                raise dist_d.error(f"reset_dist probability of {concept!r} must be a number >= 0", concept)
            dist.append((str(concept), float(p)))
        if dist and sum(p for _, p in dist) <= 0:
            raise sd.error("reset_dist probabilities sum to 0", "reset_dist")
        splits[name] = SplitSettings(region, maxp, horizon, eval_h, tuple(dist))
    slow, normal, fast, stop = (float(c) for c in cost)
    return SPFSettings(ego, fov, (slow, normal, fast, stop), float(overtime), tuple(eval_actions), splits)


@dataclass(frozen=True)
class SPFMode:
    """A loaded SPF mode for one split: the simulation config (agent set and region of that split), the
    settings, and the rule programs the task needs."""

    name: str           # easy / medium / hard / expert, or the mode file's stem
    path: str
    split: str
    config: SimConfig
    settings: SPFSettings

    @property
    def split_settings(self) -> SplitSettings:
        return self.settings.split(self.split)

    @property
    def ego_index(self) -> int:
        return self.config.agents.table().index(self.settings.ego)


_CACHE: dict[tuple[str, float, str], SPFMode] = {}
_LOCK = threading.Lock()


def mode_path(mode: str | Path) -> Path:
    """``easy`` → ``configs/modes/spf_easy.yaml``; a path is returned as is."""
    if isinstance(mode, str) and mode in MODES:
        return ROOT / "configs" / "modes" / f"spf_{mode}.yaml"
    p = Path(mode)
    try:
        exists = p.exists()
    except (OSError, ValueError) as exc:  # a name longer than the file system allows, a NUL character, ...
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"SPF mode file cannot be opened ({why}): {str(mode)!r:.120}") from None
    if not exists:
        raise ConfigError(f"unknown SPF mode {str(mode)!r:.200} (modes: {', '.join(MODES)}, or a mode file path)")
    return p


def load_spf_mode(mode: str | Path, split: str = "train") -> SPFMode:
    """Load (cached) an SPF mode for ``split``: the split's agent file and agent region applied."""
    if split not in SPLITS:
        raise ConfigError(f"unknown split {split!r} (splits: {', '.join(SPLITS)})")
    path = mode_path(mode).resolve()
    key = (str(path), path.stat().st_mtime, split)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    cfg = load_mode(path, agents_split=split)
    settings = parse_spf_block(cfg.extra.get("spf"), str(path))
    if split not in settings.splits:
        raise cfg.extra["spf"].error(f"the SPF mode has no split {split!r} (splits: "
                                     f"{', '.join(settings.splits) or 'none'})", "splits")
    ss = settings.split(split)
    cfg = dataclasses.replace(cfg, agent_region=ss.agent_region if ss.agent_region is not None else cfg.agent_region)
    table = cfg.agents.table()
    if settings.ego not in table.names:
        raise cfg.extra["spf"].error(f"ego {settings.ego!r} is not in the {split} agent file", "ego")
    ego = table.index(settings.ego)
    if table.kinds[ego] != Kind.CAR:
        raise cfg.extra["spf"].error(f"ego {settings.ego!r} must be a car", "ego")
    if ego != 0:
        # the reference requires the ego to be the first agent (docs/reference.md#spf-observation); we keep that
        # (ego = entity 0 of its own view is guaranteed either way, but episode files and the documentation assume
        # index 0)
        raise cfg.extra["spf"].error(f"ego {settings.ego!r} must be the first agent of the agent file", "ego")
    for name in ("task", "expert"):
        if name not in cfg.rules.sections:
            raise ConfigError(f"SPF rule file has no '{name}' section", cfg.files.get("rules"))
    stem = path.stem[4:] if path.stem.startswith("spf_") else path.stem
    out = SPFMode(stem, str(path), split, cfg, settings)
    with _LOCK:
        _CACHE[key] = out
    return out
