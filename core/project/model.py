"""Studio projects: a folder holding a city, agents, ontology, rules, recorded episodes and view settings.

Format (documented for users in docs/projects.md)::

    my-city/                      any folder name
      project.yaml                the manifest (format tag, version, seed, episodes, studio view state)
      mode.yaml                   an ordinary mode file (docs/formats.md) naming the four data files below
      map.yaml  agents.yaml  ontology.yaml  rules.rules
      episodes/main.npz           recorded episodes (docs/formats.md, "Episode files")

Why a folder of ordinary files: every part stays readable by the headless tools (``python main.py simulate
--mode my-city/mode.yaml`` works on a project), diffs well, and episodes stay memory-mappable.

This module holds the data model and the format's names; reading a folder into it is :mod:`core.project.load`,
writing it back atomically :mod:`core.project.save`, and the file-system rules both apply :mod:`core.project.files`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.project.files import MANIFEST

FORMAT_NAME = "logicity-project"
FORMAT_VERSION = 1

#: Default file names of the parts (role -> name); a changed part gets a numbered variant of its name.
PART_NAMES = {"mode": "mode.yaml", "map": "map.yaml", "agents": "agents.yaml", "ontology": "ontology.yaml",
              "rules": "rules.rules", "agents_train": "agents-train.yaml", "agents_val": "agents-val.yaml",
              "agents_test": "agents-test.yaml"}
#: the per-split agent sets of SPF/VAP modes (mode keys agents_train/val/test; core/studio/agent_sets.py)
SPLIT_ROLES = ("agents_train", "agents_val", "agents_test")

#: Keys of an ``episodes:`` item and of the ``studio:`` mapping (docs/projects.md).
EPISODE_KEYS = ("file", "name", "seed", "steps", "provenance", "branched_at")
PROVENANCE_KEYS = ("city", "agents")
STUDIO_KEYS = ("colour_by", "selected", "step", "breakpoints")
#: the same as core.sim.breakpoints.KEYS (tests/core/sim/test_breakpoint_conditions.py checks it)
BREAKPOINT_KEYS = ("kind", "step", "agent", "type", "concept", "action", "clause", "mode", "enabled")


@dataclass
class EpisodeEntry:
    """An episode listed in the manifest. ``file`` is relative to the project folder. ``provenance``: the
    content hashes of the city and agents that produced it (``{"city": sha256, "agents": sha256}``, from the
    episode's meta; core/sim/provenance.py), so the manifest alone says which inputs made each recording; None
    for an entry written before it was recorded. ``branched_at``: the step a branch continued from, if any."""

    file: str
    name: str = "main"
    seed: int = 0
    steps: int = 0
    provenance: dict | None = None
    branched_at: int | None = None


@dataclass
class Project:
    """A loaded (or new, unsaved) project.

    ``config`` is the :class:`~core.sim.config.SimConfig`; ``episodes`` the manifest entries (a recording is opened
    on demand by :func:`core.project.load.open_episode`). ``studio`` is free-form view state (colour-by, selected
    agent, step, breakpoints) the studio restores.
    """

    config: Any
    root: Path | None = None
    name: str = "untitled"
    seed: int = 0
    episodes: list[EpisodeEntry] = field(default_factory=list)
    current_episode: int | None = None
    studio: dict[str, Any] = field(default_factory=dict)
    parts: dict[str, str] = field(default_factory=dict)   # role -> file name inside root (after load/save)
    # messages for the user about how the project was opened (not saved; shown once the simulation is ready)
    notes: list[str] = field(default_factory=list, compare=False, repr=False)

    @property
    def manifest_path(self) -> Path | None:
        return self.root / MANIFEST if self.root is not None else None

    def episode_path(self, index: int) -> Path:
        if self.root is None:
            raise ValueError("project has no folder yet")
        return self.root / self.episodes[index].file


def new_project(config: Any, name: str | None = None, seed: int = 0) -> Project:
    """An unsaved project around a loaded configuration (e.g. a mode file)."""
    if not name:
        name = getattr(config, "name", "untitled")
    return Project(config=config, name=name, seed=int(seed))


def episode_entry_for(file: str, name: str, episode: Any, seed: int) -> EpisodeEntry:
    """The manifest entry of a recording saved as ``file``: seed, steps, provenance and branch step from its meta."""
    meta = episode.meta
    prov = meta.get("provenance")
    prov = {k: str(prov[k]) for k in PROVENANCE_KEYS if isinstance(prov, dict) and isinstance(prov.get(k), str)}
    parent = meta.get("branched_from")
    step = parent.get("step") if isinstance(parent, dict) else None
    return EpisodeEntry(file, name, int(meta.get("seed", seed)), int(episode.num_steps), prov or None,
                        int(step) if isinstance(step, int) and not isinstance(step, bool) else None)


def plain_data(x: Any) -> Any:
    """``x`` with the YAML loader's located mappings and lists turned into plain ones (keys as strings), so what a
    project keeps and writes back carries no source positions."""
    if isinstance(x, dict):
        return {str(k): plain_data(v) for k, v in x.items()}
    if isinstance(x, list):
        return [plain_data(v) for v in x]
    return x
