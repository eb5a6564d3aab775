"""Opening an episode file written by the tools (``python main.py simulate … --out ep.npz``, the studio's saved
episodes) on its own, as a read-only replay.

Why read-only: an episode embeds the map, agents, ontology and rules it was recorded with (``meta["config_texts"]``,
core/sim/replay.py) and every recorded array, so it can be shown, scrubbed and inspected exactly; but it is not a
project (no folder, no mode file), and continuing it would mean re-simulating under the current code, which is what
a project does. The studio therefore shows it read-only; Save As turns it into a project that can be continued.

Every problem (not an episode, damaged archive, embedded configuration missing or invalid, agents or cells that do
not fit that configuration) raises :class:`~core.base.errors.EpisodeFileError` naming the file.
"""
from __future__ import annotations

from pathlib import Path

from core.base.errors import EpisodeFileError
from core.export.logicity_pkl import imported_episode_path
from core.project.model import Project, new_project
from core.sim.episode import load_episode
from core.sim.replay import config_from_episode

#: File suffixes opened as episodes (``.pkl``: a reference LogiCity run, converted by core/export/logicity_pkl.py).
EPISODE_SUFFIXES = (".npz", ".pkl")


def is_episode_file(path: str | Path) -> bool:
    p = Path(path)
    return p.suffix.lower() in EPISODE_SUFFIXES and not p.is_dir()


def load_episode_file(path: str | Path):
    """``(project, episode)`` for an episode file: an unsaved project built from the configuration embedded in
    the episode (named after the file, with the recorded seed) and the memory-mapped :class:`Episode`."""
    p = Path(path)
    if not p.is_file():
        raise EpisodeFileError("file not found", p)
    source = p
    if p.suffix.lower() == ".pkl":   # a reference run: read without executing pickle code, converted once
        source = imported_episode_path(p)
    episode = load_episode(source)
    config = config_from_episode(episode.meta, source)
    names = tuple(config.agents.table().names)
    if tuple(episode.agents.names) != names:
        raise EpisodeFileError(f"the recorded agents ({', '.join(episode.agents.names[:6])}…) do not match the "
                               f"agent set embedded in the file ({', '.join(names[:6])}…)", p)
    episode.check_map(config.city.height, config.city.width)
    seed = episode.meta.get("seed")
    project: Project = new_project(config, name=p.stem, seed=int(seed) if isinstance(seed, int) else 0)
    return project, episode
