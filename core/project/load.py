"""Reading a project folder (or its ``project.yaml``) into a :class:`~core.project.model.Project`.

Every problem is a :class:`~core.base.errors.LogiCityError` that names the faulty file and line, so the studio's
error dialog and ``python main.py`` can point at what to fix. A project that names a file outside its folder
(absolute, ``..``, through a symbolic link) is refused here rather than loaded and silently copied in by the next
save (the rules: :mod:`core.project.files`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.base.errors import ConfigError, EpisodeFileError, LogiCityError
from core.base.world import KNOWN_CONCEPTS
from core.io.yamlio import (
    LocatedDict,
    LocatedList,
    expect,
    is_list,
    is_mapping,
    load_yaml,
    reject_unknown_keys,
    yaml_type_name,
)
from core.project.files import (
    MANIFEST,
    MODE_FILE_KEYS,
    clean_leftovers,
    entry_problem,
    file_problem,
    normalise,
    used_files,
)
from core.project.model import (
    BREAKPOINT_KEYS,
    EPISODE_KEYS,
    FORMAT_NAME,
    FORMAT_VERSION,
    PROVENANCE_KEYS,
    STUDIO_KEYS,
    EpisodeEntry,
    Project,
    plain_data,
)
from core.sim.breakpoints import MODES, TYPES, Breakpoint
from core.sim.config import load_mode
from core.sim.episode import Episode, load_episode
from core.view.colouring import scheme_problem


def find_manifest(path: str | Path) -> Path:
    """The manifest for a project folder or a path to its ``project.yaml``."""
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST
    if not p.exists():
        raise ConfigError("no project here: project.yaml not found", p)
    return p


def is_project(path: str | Path) -> bool:
    p = Path(path)
    return (p.is_dir() and (p / MANIFEST).exists()) or (p.is_file() and p.name == MANIFEST)


def manifest_files(root: str | Path) -> set[str]:
    """The files the project in ``root`` uses according to its manifest: the mode file, the data files that
    mode file names and the episode files (relative to ``root``; only valid names that stay inside it, links
    followed). Lenient: whatever cannot be read is left out (a damaged project still yields what can be known)."""
    return used_files(root)[0]


def replaced_files(root: str | Path) -> set[str]:
    """:func:`manifest_files` of a project about to be replaced, strictly: a name that is invalid, reserved for the
    studio's own files or leads outside the folder (also through a symbolic link) raises a located
    :class:`~core.base.errors.ConfigError`, so the replacing save refuses before it writes or deletes anything."""
    def refuse(container: Any, key: Any, message: str) -> None:
        raise container.error(f"{message}; this project cannot be replaced safely (fix its files or choose "
                              f"another folder)", key)

    return used_files(root, on_problem=refuse)[0]


def manifest_name(root: str | Path) -> str:
    """The ``name`` of the project in ``root`` (its folder name when the manifest gives none or is unreadable)."""
    root = Path(root)
    try:
        d = load_yaml(root / MANIFEST)
    except LogiCityError:
        return root.name
    name = d.get("name") if isinstance(d, dict) else None
    return name if isinstance(name, str) and name else root.name


def _check_relative(d: Any, key: Any, value: str, root: Path, what: str | None = None) -> Path:
    """``root / value`` when ``value`` is a valid name of a file inside the project folder (links followed)."""
    problem = file_problem(root, value)
    if problem is not None:
        raise d.error(f"{what or key} must name a file inside the project folder: {value!r} {problem}", key)
    return root / normalise(value)


def _check_mode_files(root: Path, mode_rel: str) -> None:
    """The data files a project's mode file names must be inside the project folder (docs/projects.md): a mode
    naming ``../elsewhere/map.yaml`` is refused instead of being loaded and silently copied in by the next save."""
    m = load_yaml(root / mode_rel)
    if not is_mapping(m):
        return   # load_mode reports it
    for key in MODE_FILE_KEYS:
        value = m.get(key)
        if not isinstance(value, str):
            continue
        _, problem = entry_problem(root, value, mode_rel)
        if problem is not None:
            raise m.error(f"{key}: {value!r} {problem}. A project's files must be inside its folder: copy the "
                          f"file into the folder and name it relative to {mode_rel}, or open the mode file itself "
                          f"(File ▸ Open) to start a new project from it; the next save copies its files in", key)


def load_project(path: str | Path) -> Project:
    """Open a project folder (or its project.yaml). Raises :class:`~core.base.errors.LogiCityError` subclasses that
    name the faulty file and line. Nothing of the project is changed on disk; only leftovers of interrupted saves
    that the studio's naming proves are its own are removed (:func:`core.project.files.clean_leftovers`).

    Every file the project uses must be inside its folder, links followed: a project whose manifest or mode file
    names a file elsewhere (absolute, ``..``, through a symbolic link) or one of the studio's own files
    (``project.yaml``) is refused."""
    manifest = find_manifest(path)
    root = manifest.parent
    clean_leftovers(root)   # what interrupted saves left (only files proven to be the studio's own leftovers)
    d = load_yaml(manifest)
    if not is_mapping(d):
        raise ConfigError("project.yaml must be a mapping", manifest, 1)
    fmt = d.get("format")
    if fmt != FORMAT_NAME:
        raise d.error(f"not a LogiCity project (format must be {FORMAT_NAME!r}, got {fmt!r})",
                      "format" if "format" in d else None)
    version = expect(d, "version", int)
    if version > FORMAT_VERSION:
        raise d.error(f"project format version {version} is newer than this studio supports ({FORMAT_VERSION})",
                      "version")
    known = {"format", "version", "name", "mode", "seed", "episodes", "current_episode", "studio"}
    reject_unknown_keys(d, sorted(known), listed="known")
    mode_rel = expect(d, "mode", str)
    mode_path = _check_relative(d, "mode", mode_rel, root)
    if not mode_path.exists():
        raise d.error(f"mode file not found: {mode_rel}", "mode")
    mode_rel = normalise(mode_rel)
    _check_mode_files(root, mode_rel)
    seed = expect(d, "seed", int, required=False, default=0)
    name = expect(d, "name", str, required=False, default=root.name)
    episodes: list[EpisodeEntry] = []
    eps = d.get("episodes") or []
    if not isinstance(eps, list):
        raise d.error("episodes must be a list", "episodes")
    for i, item in enumerate(eps):
        if not is_mapping(item):
            raise eps.error(f"episode #{i + 1} must be a mapping", i) if isinstance(eps, LocatedList) else \
                d.error("episodes must hold mappings", "episodes")
        reject_unknown_keys(item, EPISODE_KEYS, f"episode #{i + 1}", listed="known")
        file = expect(item, "file", str)
        ep_path = _check_relative(item, "file", file, root, f"episode #{i + 1} file")
        file = normalise(file)
        if not ep_path.exists():
            raise item.error(f"episode file not found: {file}", "file")
        episodes.append(EpisodeEntry(file, expect(item, "name", str, required=False, default=Path(file).stem),
                                     expect(item, "seed", int, required=False, default=seed),
                                     expect(item, "steps", int, required=False, default=0),
                                     _entry_provenance(item),
                                     expect(item, "branched_at", int, required=False, default=None)))
    current = d.get("current_episode")
    if current is not None and (not isinstance(current, int) or isinstance(current, bool)
                                or not 0 <= current < len(episodes)):
        raise d.error(f"current_episode must be an index into episodes (0..{len(episodes) - 1}) or null",
                      "current_episode")
    studio = d.get("studio")
    if studio is None:
        studio = {}
    elif not is_mapping(studio):
        raise d.error(f"studio must be a mapping, got {yaml_type_name(studio)}", "studio")
    config = load_mode(mode_path)
    _check_studio(studio, config)
    parts = {"mode": mode_rel}
    split_files = {f"agents_{k}": v for k, v in ((config.extra or {}).get("agent_files") or {}).items()}
    for role, file in {**config.files, **split_files}.items():
        try:
            parts[role] = str(Path(file).resolve().relative_to(root.resolve()))
        except ValueError:
            pass  # cannot happen after _check_mode_files; then the next save would write the part in
    return Project(config=config, root=root, name=name, seed=seed, episodes=episodes, current_episode=current,
                   studio=plain_data(studio), parts=parts)


def _entry_provenance(item: Any) -> dict | None:
    """An episode item's ``provenance: {city: <sha256>, agents: <sha256>}`` (optional), checked."""
    prov = item.get("provenance")
    if prov is None:
        return None
    if not is_mapping(prov):
        raise item.error("provenance must be a mapping {city: <sha256>, agents: <sha256>}", "provenance")
    reject_unknown_keys(prov, PROVENANCE_KEYS, "provenance", listed="known")
    out = {}
    for key in PROVENANCE_KEYS:
        value = prov.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise prov.error(f"provenance {key} must be a SHA-256 hex digest (64 characters 0-9a-f), got "
                             f"{value!r:.80}", key) if isinstance(prov, LocatedDict) else \
                item.error(f"provenance {key} must be a SHA-256 hex digest", "provenance")
        out[key] = value
    return out or None


def _check_studio(studio: Any, config: Any) -> None:
    """Validate the ``studio:`` view state against the project's agents; errors name file, line and problem."""
    if not is_mapping(studio) or not studio:
        return
    reject_unknown_keys(studio, STUDIO_KEYS, "studio", listed="known")
    table = config.agents.table()
    names = tuple(table.names)

    def agent(container: Any, key: str, where: str) -> None:
        name = expect(container, key, str)
        if name not in names:
            same = [n for n in names if n.lower() == name.lower()]
            hint = f" (did you mean {same[0]!r}?)" if same else ""
            raise container.error(f"{where}: no agent {name!r} in this city{hint}; agents: "
                                  f"{', '.join(names[:6])}{', …' if len(names) > 6 else ''}", key)

    if "colour_by" in studio:
        value = expect(studio, "colour_by", str)
        problem = scheme_problem(value, list(table.concepts))
        if problem is not None:
            raise studio.error(f"colour_by: {problem}", "colour_by")
    if "selected" in studio and studio["selected"] is not None:
        agent(studio, "selected", "selected")
    if "step" in studio:
        step = expect(studio, "step", int)
        if step < 0:
            raise studio.error(f"step must be 0 or more, got {step}", "step")
    bps = studio.get("breakpoints")
    if bps is None:
        return
    if not is_list(bps):
        raise studio.error(f"breakpoints must be a list, got {yaml_type_name(bps)}", "breakpoints")
    for i, b in enumerate(bps):
        where = f"breakpoint #{i + 1}"
        if not is_mapping(b):
            raise bps.error(f"{where} must be a mapping like {{kind: step, step: 10}}, got {yaml_type_name(b)}", i)
        reject_unknown_keys(b, BREAKPOINT_KEYS, where, listed="known")
        expect(b, "kind", str, what=where)
        if "step" in b:
            step = expect(b, "step", int)
            if step < 0:
                raise b.error(f"{where}: step must be 0 or more, got {step}", "step")
        if b.get("agent") is not None:
            agent(b, "agent", where)
        if b.get("action") is not None:
            expect(b, "action", str)
        for key, known in (("type", TYPES), ("concept", tuple(KNOWN_CONCEPTS)), ("mode", MODES)):
            if b.get(key) is not None and expect(b, key, str) not in known:
                raise b.error(f"{where}: {key} must be one of {', '.join(known)}, got {b[key]!r}", key)
        if b.get("clause") is not None:
            expect(b, "clause", (str, int))
        expect(b, "enabled", bool, required=False)
        try:
            Breakpoint.from_dict(b)
        except (ValueError, TypeError) as exc:
            culprit = next((k for k in ("mode", "clause", "action", "step", "type", "concept", "agent")
                            if k in b and str(exc).startswith((f"{k} ", f"a {b.get('kind')} breakpoint takes no {k}"))),
                           "kind" if "kind" in b else None)
            raise b.error(f"{where}: {exc}", culprit) from None


class EpisodeAgentsError(EpisodeFileError):
    """The episode was recorded with other agents than the project's (edited in the agent editor and saved before
    Apply): the project opens without showing it (:func:`core.studio.session.load_target`); the file stays."""


def open_episode(project: Project, index: int | None = None) -> Episode | None:
    """Open (memory-map) one of the project's episodes and check it fits the project's agents."""
    index = project.current_episode if index is None else index
    if index is None:
        return None
    path = project.episode_path(index)
    ep = load_episode(path)
    names = tuple(project.config.agents.table().names)
    if tuple(ep.agents.names) != names:
        raise EpisodeAgentsError(f"episode agents ({', '.join(ep.agents.names)}) do not match the project's agents "
                                 f"({', '.join(names)})", path)
    ep.check_map(project.config.city.height, project.config.city.width)
    return ep


def describe_error(exc: BaseException) -> tuple[str, str]:
    """(file, problem) for an error dialog: user errors name their file; others are shown as internal."""
    if isinstance(exc, LogiCityError):
        return exc.location() or "(unknown file)", exc.message
    return "(internal error)", f"{type(exc).__name__}: {exc}"
