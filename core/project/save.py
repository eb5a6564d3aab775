"""Saving a studio project atomically (the data model: :mod:`core.project.model`; loading: :mod:`core.project.load`).

Crash safety: a file other than ``project.yaml`` is never overwritten in place. A part whose content changed is
written under a fresh name (``map-2.yaml``, ``episodes/main-3.npz``), every file is written to a temporary file
and renamed, and ``project.yaml`` is replaced last, atomically; that rename is the commit. Files the old manifest
used and the new one does not are deleted only after the commit. A crash at any moment therefore leaves either
the old project or the new one, never a mixture.

File-system safety (core/project/files.py): every name is checked before anything is written, every file must
stay inside the folder with symbolic links followed (a project that breaks this is refused, never written into or
deleted from), deletion never follows a link, and a journal lets the next save or open remove what a killed save
left behind.
"""
from __future__ import annotations

import functools
import hashlib
import re
import shutil
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from core.agents.io import dumps_agent_set, loads_agent_set
from core.base.errors import ConfigError, LogiCityError
from core.io.fileio import atomic_write_bytes, atomic_writer
from core.map.io import dumps_map
from core.project.files import (
    EPISODE_DIR,
    MANIFEST,
    begin_save,
    clean_leftovers,
    end_save,
    file_problem,
    normalise,
    unlink_inside,
)
from core.project.load import manifest_name, replaced_files
from core.project.model import (
    FORMAT_NAME,
    FORMAT_VERSION,
    PART_NAMES,
    PROVENANCE_KEYS,
    SPLIT_ROLES,
    EpisodeEntry,
    Project,
    episode_entry_for,
    plain_data,
)


def split_roles(config: Any) -> list[str]:
    """The split agent-set parts a config has: read from files (``extra["agent_files"]``) or edited in the studio
    (``extra["agent_sets"]``)."""
    extra = getattr(config, "extra", None) or {}
    have = set(extra.get("agent_files") or {}) | set(extra.get("agent_sets") or {})
    return [role for role in SPLIT_ROLES if role.split("_", 1)[1] in have]


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Atomic text write through this module's ``atomic_write_bytes`` (one place to fail for every project file)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str | None:
    try:
        return content_digest(path.read_bytes())
    except OSError:
        return None


def fresh_name(folder: Path, name: str, taken: set[str]) -> str:
    """``name`` if free in ``folder`` and not taken, else ``stem-2.ext``, ``stem-3.ext``, ..."""
    stem, dot, ext = name.partition(".")
    stem = re.sub(r"-\d+$", "", stem)
    candidate = name
    n = 1
    while candidate in taken or (folder / candidate).exists():
        n += 1
        candidate = f"{stem}-{n}{dot}{ext}"
    return candidate


def episode_item(e: EpisodeEntry) -> dict:
    """The manifest item of ``e`` (provenance and branch step only when known)."""
    d: dict[str, Any] = {"file": e.file, "name": e.name, "seed": e.seed, "steps": e.steps}
    if e.provenance:
        d["provenance"] = {k: e.provenance[k] for k in PROVENANCE_KEYS if k in e.provenance}
    if e.branched_at is not None:
        d["branched_at"] = int(e.branched_at)
    return d


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
    if current and file_digest(root / current) == content_digest(data):
        taken.add(current)
        return current
    default = PART_NAMES.get(role, f"{role}.dat")
    if role == "rules" and current:
        default = "rules" + (Path(current).suffix or ".rules")
    name = default if (default not in taken and file_digest(root / default) == content_digest(data)) else \
        fresh_name(root, default, taken)
    if file_digest(root / name) != content_digest(data):
        writes.append((name, functools.partial(atomic_write_bytes, data=data)))
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

    A folder that holds *another* project is refused (:class:`~core.base.errors.ConfigError`) unless ``replace``:
    then that project is replaced as cleanly as a save of its own: after the commit the files its manifest used
    and the new one does not are deleted (only files inside the folder; anything else in it stays).

    Safety (core/project/files.py): before anything is written every name is checked, and a project (the one
    saved or the one replaced) that names a file outside the folder (absolute, ``..``, through a symbolic link)
    or one of the studio's own files (``project.yaml``) is refused with a :class:`~core.base.errors.ConfigError`.
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
    for role in ("map", "agents", "ontology", "rules", *split_roles(cfg)):
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
            e.file = f"{EPISODE_DIR}/" + fresh_name(root / EPISODE_DIR, Path(e.file).name,
                                                      {Path(t).name for t in taken})
            writes.append((e.file, functools.partial(_copy_file, src)))
            taken.add(e.file)
    current = project.current_episode
    for name, kept_episode in kept:      # before the current one, which keeps its index (or is appended after)
        kname = f"{EPISODE_DIR}/" + fresh_name(root / EPISODE_DIR, f"{_slug(name)}.npz",
                                                {Path(t).name for t in taken})
        writes.append((kname, kept_episode.save))
        taken.add(kname)
        entries.append(episode_entry_for(kname, name, kept_episode, project.seed))
    if episode is not None:
        name = "main" if current is None else entries[current].name
        fname = f"{EPISODE_DIR}/" + fresh_name(root / EPISODE_DIR, f"{_slug(name)}.npz",
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
                                "episodes": [episode_item(e) for e in entries],
                                "current_episode": current}
    if project.studio:
        manifest["studio"] = plain_data(dict(project.studio))
    header = ("# LogiCity Studio project manifest (format: docs/projects.md). Written by the studio; safe to "
              "edit by hand.\n")
    text = header + dump_yaml(manifest)
    now_used = set(parts.values()) | {e.file for e in entries}
    _refuse_bad_names(root, {**{f: f"the {role} file" for role, f in parts.items()},
                             **{e.file: f"episode file of {e.name!r}" for e in entries}}, "cannot save")
    in_use = {normalise(u).casefold() for u in now_used}   # casefolded: on a case-insensitive disk Map.yaml is map.yaml
    obsolete = {f for f in old_files if normalise(f).casefold() not in in_use}

    # write: journal, new files, then the manifest (the commit)
    created = [name for name, _ in writes]
    try:
        begin_save(root, created, obsolete, text.encode("utf-8"))
        for name, write in writes:
            write(root / name)
        atomic_write_text(root / MANIFEST, text)   # the commit
    except BaseException:
        if file_digest(root / MANIFEST) != content_digest(text.encode("utf-8")):   # not committed: undo
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
    return yaml.safe_dump(plain_data(data), sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")
    return s or "episode"
