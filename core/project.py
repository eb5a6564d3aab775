"""Studio projects: a folder holding a city, agents, ontology, rules, recorded episodes and view settings.

Format (documented for users in docs/projects.md)::

    my-city/                      any folder name
      project.yaml                the manifest (format tag, version, seed, episodes, studio view state)
      mode.yaml                   an ordinary mode file (docs/formats.md) naming the four data files below
      map.yaml  agents.yaml  ontology.yaml  rules.rules
      episodes/main.npz           recorded episodes (docs/formats.md, "Episode files")

Why a folder of ordinary files: every part stays readable by the headless tools (``python main.py simulate
--mode my-city/mode.yaml`` works on a project), diffs well, and episodes stay memory-mappable.

Crash safety (atomic saves): a file other than ``project.yaml`` is never overwritten in place. A part whose
content changed is written under a fresh name (``map-2.yaml``, ``episodes/main-3.npz``), every file is written
to a temporary file and renamed, and ``project.yaml`` is replaced last, atomically; that rename is the commit.
Files the old manifest used and the new one does not are deleted only after the commit. A crash at any
moment therefore leaves either the old project or the new one, never a mixture.

File-system safety (core/project_files.py): every name is checked before anything is written, every file must
stay inside the folder with symbolic links followed (a project that breaks this is refused, never written into or
deleted from), deletion never follows a link, and a journal lets the next save or open remove what a killed save
left behind.
"""
from __future__ import annotations

import hashlib
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .errors import ConfigError, EpisodeFileError, LogiCityError
from .fileio import atomic_writer, atomic_write_bytes
from .project_files import (EPISODE_DIR, MANIFEST, MODE_FILE_KEYS, begin_save, clean_leftovers, end_save,
                            entry_problem, file_problem, normalise, unlink_inside, used_files)
from .yamlio import expect, load_yaml, reject_unknown_keys, yaml_type_name

FORMAT_NAME = "logicity-project"
FORMAT_VERSION = 1

#: Default file names of the parts (role -> name); a changed part gets a numbered variant of its name.
PART_NAMES = {"mode": "mode.yaml", "map": "map.yaml", "agents": "agents.yaml", "ontology": "ontology.yaml",
              "rules": "rules.rules", "agents_train": "agents-train.yaml", "agents_val": "agents-val.yaml",
              "agents_test": "agents-test.yaml"}
#: the per-split agent sets of SPF/VAP modes (mode keys agents_train/val/test; core/studio/agent_sets.py)
SPLIT_ROLES = ("agents_train", "agents_val", "agents_test")


def _split_roles(config: Any) -> list[str]:
    """The split agent-set parts a config has: read from files (``extra["agent_files"]``) or edited in the studio
    (``extra["agent_sets"]``)."""
    extra = getattr(config, "extra", None) or {}
    have = set(extra.get("agent_files") or {}) | set(extra.get("agent_sets") or {})
    return [role for role in SPLIT_ROLES if role.split("_", 1)[1] in have]


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Atomic text write through this module's ``atomic_write_bytes`` (one place to fail for every project file)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_digest(path: Path) -> str | None:
    try:
        return _digest(path.read_bytes())
    except OSError:
        return None


def _fresh_name(folder: Path, name: str, taken: set[str]) -> str:
    """``name`` if free in ``folder`` and not taken, else ``stem-2.ext``, ``stem-3.ext``, ..."""
    stem, dot, ext = name.partition(".")
    stem = re.sub(r"-\d+$", "", stem)
    candidate = name
    n = 1
    while candidate in taken or (folder / candidate).exists():
        n += 1
        candidate = f"{stem}-{n}{dot}{ext}"
    return candidate


# ---- data model ---------------------------------------------------------------------------------------------

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

    ``config`` is the :class:`~core.sim.config.SimConfig`; ``episodes`` the manifest entries and ``loaded`` the
    opened episode files by index (lazily filled by :func:`open_episode`). ``studio`` is free-form view state
    (colour-by, selected agent, step, breakpoints) the studio restores.
    """

    config: Any
    root: Path | None = None
    name: str = "untitled"
    seed: int = 0
    episodes: list[EpisodeEntry] = field(default_factory=list)
    current_episode: int | None = None
    studio: dict[str, Any] = field(default_factory=dict)
    parts: dict[str, str] = field(default_factory=dict)   # role -> file name inside root (after load/save)

    @property
    def manifest_path(self) -> Path | None:
        return self.root / MANIFEST if self.root is not None else None

    def episode_path(self, index: int) -> Path:
        if self.root is None:
            raise ValueError("project has no folder yet")
        return self.root / self.episodes[index].file


def new_project(config: Any, name: str | None = None, seed: int = 0) -> Project:
    """An unsaved project around a loaded configuration (e.g. a mode file)."""
    return Project(config=config, name=name or getattr(config, "name", "untitled"), seed=int(seed))


# ---- loading ------------------------------------------------------------------------------------------------

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
    :class:`~core.errors.ConfigError`, so the replacing save refuses before it writes or deletes anything."""
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
    if not isinstance(m, dict):
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
    """Open a project folder (or its project.yaml). Raises :class:`~core.errors.LogiCityError` subclasses that
    name the faulty file and line. Nothing of the project is changed on disk; only leftovers of interrupted saves
    that the studio's naming proves are its own are removed (:func:`core.project_files.clean_leftovers`).

    Every file the project uses must be inside its folder, links followed: a project whose manifest or mode file
    names a file elsewhere (absolute, ``..``, through a symbolic link) or one of the studio's own files
    (``project.yaml``) is refused."""
    from .sim.config import load_mode

    manifest = find_manifest(path)
    root = manifest.parent
    clean_leftovers(root)   # what interrupted saves left (only files proven to be the studio's own leftovers)
    d = load_yaml(manifest)
    if not isinstance(d, dict):
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
        if not isinstance(item, dict):
            raise eps.error(f"episode #{i + 1} must be a mapping", i) if hasattr(eps, "error") else \
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
    elif not isinstance(studio, dict):
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
                   studio=_plain(studio), parts=parts)


#: Keys of an ``episodes:`` item and of the ``studio:`` mapping (docs/projects.md).
EPISODE_KEYS = ("file", "name", "seed", "steps", "provenance", "branched_at")
PROVENANCE_KEYS = ("city", "agents")


def _entry_provenance(item: Any) -> dict | None:
    """An episode item's ``provenance: {city: <sha256>, agents: <sha256>}`` (optional), checked."""
    prov = item.get("provenance")
    if prov is None:
        return None
    if not isinstance(prov, dict):
        raise item.error("provenance must be a mapping {city: <sha256>, agents: <sha256>}", "provenance")
    reject_unknown_keys(prov, PROVENANCE_KEYS, "provenance", listed="known")
    out = {}
    for key in PROVENANCE_KEYS:
        value = prov.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise prov.error(f"provenance {key} must be a SHA-256 hex digest (64 characters 0-9a-f), got "
                             f"{value!r:.80}", key) if hasattr(prov, "error") else \
                item.error(f"provenance {key} must be a SHA-256 hex digest", "provenance")
        out[key] = value
    return out or None


def _episode_item(e: EpisodeEntry) -> dict:
    """The manifest item of ``e`` (provenance and branch step only when known)."""
    d: dict[str, Any] = {"file": e.file, "name": e.name, "seed": e.seed, "steps": e.steps}
    if e.provenance:
        d["provenance"] = {k: e.provenance[k] for k in PROVENANCE_KEYS if k in e.provenance}
    if e.branched_at is not None:
        d["branched_at"] = int(e.branched_at)
    return d


def episode_entry_for(file: str, name: str, episode: Any, seed: int) -> EpisodeEntry:
    """The manifest entry of a recording saved as ``file``: seed, steps, provenance and branch step from its meta."""
    meta = episode.meta
    prov = meta.get("provenance")
    prov = {k: str(prov[k]) for k in PROVENANCE_KEYS if isinstance(prov, dict) and isinstance(prov.get(k), str)}
    parent = meta.get("branched_from")
    step = parent.get("step") if isinstance(parent, dict) else None
    return EpisodeEntry(file, name, int(meta.get("seed", seed)), int(episode.num_steps), prov or None,
                        int(step) if isinstance(step, int) and not isinstance(step, bool) else None)
STUDIO_KEYS = ("colour_by", "selected", "step", "breakpoints")
#: the same as core.sim.breakpoints.KEYS (tests/core/sim/test_breakpoint_conditions.py checks it)
BREAKPOINT_KEYS = ("kind", "step", "agent", "type", "concept", "action", "clause", "mode", "enabled")


def _check_studio(studio: Any, config: Any) -> None:
    """Validate the ``studio:`` view state against the project's agents; errors name file, line and problem."""
    from .sim.breakpoints import MODES, TYPES, Breakpoint
    from .view.colouring import scheme_problem
    from .world import KNOWN_CONCEPTS

    if not isinstance(studio, dict) or not studio:
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
    if not isinstance(bps, list):
        raise studio.error(f"breakpoints must be a list, got {yaml_type_name(bps)}", "breakpoints")
    for i, b in enumerate(bps):
        where = f"breakpoint #{i + 1}"
        if not isinstance(b, dict):
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


def open_episode(project: Project, index: int | None = None):
    """Open (memory-map) one of the project's episodes and check it fits the project's agents."""
    from .sim.episode import load_episode

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


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


# ---- saving -------------------------------------------------------------------------------------------------

def _part_bytes(config: Any, role: str) -> bytes:
    """The file content of one part: the source file's bytes when it exists, else the object serialised."""
    if role in SPLIT_ROLES:
        split = role.split("_", 1)[1]
        extra = config.extra or {}
        src = (extra.get("agent_files") or {}).get(split)
        if src and Path(src).exists():
            return Path(src).read_bytes()
        return _agent_set_bytes(extra["agent_sets"][split], split)
    src = (config.files or {}).get(role)
    if src and Path(src).exists():
        return Path(src).read_bytes()
    if role == "map":
        from .map.io import dumps_map

        return dumps_map(config.city).encode("utf-8")
    if role == "agents":
        return _agent_set_bytes(config.agents, None)
    if role == "ontology":
        return config.ontology.to_yaml().encode("utf-8")
    if role == "rules":
        return config.rules.to_text().encode("utf-8")
    raise ValueError(role)


def _agent_set_bytes(agents: Any, split: str | None) -> bytes:
    """An edited agent set's file; one the loader would refuse (a pedestrian with a car's concept, two agents with
    one name: the agent editor lets them exist while being fixed) is not saved, so the project always reopens."""
    from .agents.io import dumps_agent_set, loads_agent_set

    text = dumps_agent_set(agents)
    try:
        loads_agent_set(text)
    except LogiCityError as exc:
        which = f"the {split} agent set" if split else "the agent set"
        raise ConfigError(f"cannot save {which}: {exc.message.split(': ', 1)[-1]} (see Problems; fix it in the "
                          f"agent editor first). Nothing was saved") from None
    return text.encode("utf-8")


def _mode_text(config: Any, parts: Mapping[str, str]) -> str:
    data: dict[str, Any] = {"name": config.name, "map": parts["map"], "agents": parts["agents"],
                            "ontology": parts["ontology"], "rules": parts["rules"]}
    for role in SPLIT_ROLES:
        if role in parts:
            data[role] = parts[role]
    if config.rule_section is not None:
        data["rule_section"] = config.rule_section
    if config.agent_region is not None:
        data["agent_region"] = int(config.agent_region)
    if getattr(config, "sampling", "master") != "master":
        data["sampling"] = config.sampling
    data["engine"] = config.engine
    data["steps"] = int(config.steps)
    for key, value in (config.extra or {}).items():
        if key in ("spf", "vap"):
            data[key] = value
    return "# Mode file of a LogiCity Studio project (format: docs/formats.md, \"Mode files\").\n" + dump_yaml(data)


#: A file a save creates: its name (relative to the folder) and how to write it (atomically) to a path.
_Write = tuple[str, Callable[[Path], Any]]


def _plan_part(root: Path, role: str, data: bytes, current: str | None, taken: set[str],
               writes: list[_Write]) -> str:
    """Reuse the current file when its content is identical, else pick a fresh name and plan its write."""
    if current and _file_digest(root / current) == _digest(data):
        taken.add(current)
        return current
    default = PART_NAMES.get(role, f"{role}.dat")
    if role == "rules" and current:
        default = "rules" + (Path(current).suffix or ".rules")
    name = default if (default not in taken and _file_digest(root / default) == _digest(data)) else \
        _fresh_name(root, default, taken)
    if _file_digest(root / name) != _digest(data):
        writes.append((name, lambda path, data=data: atomic_write_bytes(path, data)))
    taken.add(name)
    return name


def _copy_file(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` atomically, in chunks (an episode may be large)."""
    with open(src, "rb") as fh, atomic_writer(dst) as out:
        shutil.copyfileobj(fh, out, 1 << 20)


def _refuse_bad_names(root: Path, names: Mapping[str, str], what: str) -> None:
    """Every file a save keeps, writes or deletes must be a valid name inside ``root`` (links followed); checked
    before anything is written so that nothing fails after the commit."""
    for name, where in sorted(names.items()):
        problem = file_problem(root, name)
        if problem is not None:
            raise ConfigError(f"{what}: {where} {name!r} {problem}; nothing was saved", root / MANIFEST)


def save_project(project: Project, root: str | Path | None = None, episode: Any = None,
                 episode_meta: Mapping[str, Any] | None = None, replace: bool = False,
                 kept: Sequence[tuple[str, Any]] = ()) -> Path:
    """Save ``project`` into ``root`` (default: its folder) atomically; returns the manifest path.

    ``episode`` (an :class:`~core.sim.episode.EpisodeBuffer`), when given, becomes the project's current
    episode ("main"), replacing the previous current one. ``kept``: (name, episode) pairs written as further
    episodes of the project, appended to its list (the current one keeps its index): recordings a branch replaced
    on screen, which the studio keeps (core/studio/session.py). Updates ``project`` (root, parts, episodes) in
    place.

    A folder that holds *another* project is refused (:class:`~core.errors.ConfigError`) unless ``replace``:
    then that project is replaced as cleanly as a save of its own: after the commit the files its manifest used
    and the new one does not are deleted (only files inside the folder; anything else in it stays).

    Safety (core/project_files.py): before anything is written every name is checked, and a project (the one
    saved or the one replaced) that names a file outside the folder (absolute, ``..``, through a symbolic link)
    or one of the studio's own files (``project.yaml``) is refused with a :class:`~core.errors.ConfigError`.
    Deleting never follows a link. A failed save removes the files it created; a killed one leaves a journal
    from which the next save or open of the folder removes them.
    """
    root = Path(root) if root is not None else project.root
    if root is None:
        raise ValueError("save_project needs a folder for a new project")
    if root.exists() and not root.is_dir():
        raise ConfigError("this is a file, not a folder", root)
    same_folder = project.root is not None and Path(project.root).resolve() == root.resolve()
    if not same_folder and (root / MANIFEST).exists():
        if not replace:
            raise ConfigError(f"the folder already holds another project ({manifest_name(root)!r}); choose "
                              f"another folder or replace it", root / MANIFEST)
        old_files = replaced_files(root)
    elif same_folder:
        old = {f: f"the project's {role} file" for role, f in project.parts.items()}
        old.update({e.file: f"episode file of {e.name!r}" for e in project.episodes})
        _refuse_bad_names(root, old, "the project names a file it cannot use")
        old_files = {normalise(f) for f in old}
    else:
        old_files = set()
    if not same_folder and project.root is not None:   # "save as": the episodes are read from the old folder
        carried = {e.file: f"episode file of {e.name!r}" for i, e in enumerate(project.episodes)
                   if not (episode is not None and i == project.current_episode)}
        _refuse_bad_names(Path(project.root), carried, "the project names a file it cannot use")
    root.mkdir(parents=True, exist_ok=True)
    clean_leftovers(root)

    # plan: every name is chosen before anything is written
    cfg = project.config
    taken: set[str] = set()
    writes: list[_Write] = []
    parts: dict[str, str] = {}
    for role in ("map", "agents", "ontology", "rules", *_split_roles(cfg)):
        parts[role] = _plan_part(root, role, _part_bytes(cfg, role), project.parts.get(role) if same_folder
                                 else None, taken, writes)
    parts["mode"] = _plan_part(root, "mode", _mode_text(cfg, parts).encode("utf-8"),
                               project.parts.get("mode") if same_folder else None, taken, writes)

    entries = [EpisodeEntry(e.file, e.name, e.seed, e.steps, e.provenance, e.branched_at) for e in project.episodes]
    if not same_folder and project.root is not None:   # "save as": carry the episodes over
        for i, e in enumerate(entries):
            if episode is not None and i == project.current_episode:
                continue  # replaced by the new recording below
            src = Path(project.root) / e.file
            e.file = f"{EPISODE_DIR}/" + _fresh_name(root / EPISODE_DIR, Path(e.file).name,
                                                      {Path(t).name for t in taken})
            writes.append((e.file, lambda path, src=src: _copy_file(src, path)))
            taken.add(e.file)
    current = project.current_episode
    for name, kept_episode in kept:      # before the current one, which keeps its index (or is appended after)
        kname = f"{EPISODE_DIR}/" + _fresh_name(root / EPISODE_DIR, f"{_slug(name)}.npz",
                                                {Path(t).name for t in taken})
        writes.append((kname, lambda path, ep=kept_episode: ep.save(path)))
        taken.add(kname)
        entries.append(episode_entry_for(kname, name, kept_episode, project.seed))
    if episode is not None:
        name = "main" if current is None else entries[current].name
        fname = f"{EPISODE_DIR}/" + _fresh_name(root / EPISODE_DIR, f"{_slug(name)}.npz",
                                                {Path(t).name for t in taken})
        writes.append((fname, lambda path: episode.save(path, extra_meta=episode_meta)))
        entry = episode_entry_for(fname, name, episode, project.seed)
        if current is None:
            entries.append(entry)
            current = len(entries) - 1
        else:
            entries[current] = entry
        taken.add(fname)

    manifest: dict[str, Any] = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "name": project.name,
                                "mode": parts["mode"], "seed": int(project.seed),
                                "episodes": [_episode_item(e) for e in entries],
                                "current_episode": current}
    if project.studio:
        manifest["studio"] = _plain(dict(project.studio))
    header = ("# LogiCity Studio project manifest (format: docs/projects.md). Written by the studio; safe to "
              "edit by hand.\n")
    text = header + dump_yaml(manifest)
    now_used = set(parts.values()) | {e.file for e in entries}
    _refuse_bad_names(root, {**{f: f"the {role} file" for role, f in parts.items()},
                             **{e.file: f"episode file of {e.name!r}" for e in entries}}, "cannot save")
    kept = {normalise(u).casefold() for u in now_used}   # casefolded: on a case-insensitive disk Map.yaml is map.yaml
    obsolete = {f for f in old_files if normalise(f).casefold() not in kept}

    # write: journal, new files, then the manifest (the commit)
    created = [name for name, _ in writes]
    try:
        begin_save(root, created, obsolete, text.encode("utf-8"))
        for name, write in writes:
            write(root / name)
        atomic_write_text(root / MANIFEST, text)   # the commit
    except BaseException:
        if _file_digest(root / MANIFEST) != _digest(text.encode("utf-8")):   # not committed: undo
            for name in created:
                unlink_inside(root, name)
        end_save(root)
        raise
    project.root = root
    project.parts = parts
    project.episodes = entries
    project.current_episode = current

    # after the commit: drop files only the previous manifest used (never through a link; never raises)
    for f in sorted(obsolete):
        unlink_inside(root, f)
    end_save(root)
    return root / MANIFEST


def dump_yaml(data: Any) -> str:
    """Block-style YAML (one key per line), keys in the given order: easy to read and to diff."""
    import yaml

    return yaml.safe_dump(_plain(data), sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")
    return s or "episode"


def describe_error(exc: BaseException) -> tuple[str, str]:
    """(file, problem) for an error dialog: user errors name their file; others are shown as internal."""
    if isinstance(exc, LogiCityError):
        return exc.location() or "(unknown file)", exc.message
    return "(internal error)", f"{type(exc).__name__}: {exc}"
