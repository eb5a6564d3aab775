"""File-system safety of project folders: which names a project may use, whether a file stays inside its folder,
deleting without following links, and the save journal that lets the next save or open remove what a killed save
left behind.

Why a module of its own: these rules keep a user's files safe (docs/projects.md, "How saving stays safe") and are
easier to check in one place; :mod:`core.project.load` and :mod:`core.project.save` apply them.

* Names: a name in ``project.yaml`` or in the project's mode file is a relative path with ``/`` between folders. It
  may not be empty, absolute, contain ``..``, a backslash or a control character (NUL included), be longer than
  the file system allows, or name one of the studio's own files (``project.yaml``, the save journal, temporary
  files). :func:`name_problem` says what is wrong.
* Containment: every file a project uses must stay inside its folder also after following symbolic links
  (:func:`outside_problem`); a project that breaks this is refused, so a save never writes or deletes elsewhere.
* Deleting (:func:`unlink_inside`) never follows a link: a link among the folders on the way stops it, a link as
  the file itself is removed as a link (its target stays).
* The journal (:data:`JOURNAL`) is written before a save writes anything and removed when it is done. It names the
  files the save creates and the files it deletes after its commit, with the writer's host and process id. When a
  save was killed, the next open or save of the folder finds the journal, proves its writer is gone and removes the
  listed files the current manifest does not use (:func:`clean_leftovers`).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from core.base.errors import LogiCityError
from core.io.fileio import TEMP_MARK, atomic_write_bytes, clean_stale_temps, host_tag, pid_alive
from core.io.yamlio import load_yaml, yaml_type_name

MANIFEST = "project.yaml"
EPISODE_DIR = "episodes"
#: The save journal (see the module docstring); a hidden file in the project folder while a save runs.
JOURNAL = ".logicity-save.journal"
JOURNAL_FORMAT = "logicity-save-journal"
#: Longest name part (bytes): the usual file-system limit is 255 and a temporary file adds about 30.
MAX_PART_BYTES = 200
#: Longest relative name (bytes).
MAX_NAME_BYTES = 1024
#: Keys of a mode file that name a data file.
MODE_FILE_KEYS = ("map", "agents", "agents_train", "agents_val", "agents_test", "ontology", "rules")

_RESERVED = {MANIFEST.casefold(), JOURNAL.casefold()}
_DRIVE_RE = re.compile(r"^[A-Za-z]:")
#: Names a save may create: a part's default name or a numbered variant of it, or a file in episodes/.
_CREATED_RE = re.compile(r"^(?:(?:map|agents|ontology|mode)(?:-[0-9]+)?\.yaml|rules(?:-[0-9]+)?(?:\.[^/]*)?|"
                         r"episodes/[^/]+)$")
_saving: set[str] = set()           # folders (real paths) this process is saving into right now
_saving_lock = threading.Lock()


# ---- names -------------------------------------------------------------------------------------------------

def name_problem(rel: Any, *, allow_up: bool = False) -> str | None:
    """What is wrong with ``rel`` as the name of a file of a project (relative to its folder), or None.
    ``allow_up`` lets ``..`` pass (a name written in a mode file in a subfolder; check the joined name too)."""
    if not isinstance(rel, str):
        return f"must be a file name (text), got {yaml_type_name(rel)}"
    if not rel.strip():
        return "is empty"
    bad = next((c for c in rel if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        return f"contains the control character U+{ord(bad):04X}"
    try:
        raw = rel.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid text (unpaired surrogate)"
    if "\\" in rel:
        return "contains a backslash; separate folders with /"
    if rel.startswith("/") or _DRIVE_RE.match(rel):
        return "is an absolute path; name a file inside the project folder"
    path = PurePosixPath(rel)
    if ".." in path.parts and not allow_up:
        return "leaves the project folder (..)"
    if len(raw) > MAX_NAME_BYTES:
        return f"is too long ({len(raw)} bytes; at most {MAX_NAME_BYTES})"
    for part in path.parts:
        if len(part.encode("utf-8")) > MAX_PART_BYTES:
            return f"has a name part longer than {MAX_PART_BYTES} bytes"
    norm = path.as_posix()
    if norm == ".":
        return "names the project folder itself"
    if norm.casefold() in _RESERVED or (TEMP_MARK in path.name and path.name.endswith(".tmp")):
        return f"is reserved for the studio's own files ({norm!r})"
    return None


def normalise(rel: str) -> str:
    """A valid name in one spelling (``./a//b`` -> ``a/b``)."""
    return PurePosixPath(rel).as_posix()


def relative_to_root(root: Path, base: str, rel: str) -> str | None:
    """``rel`` written in the file ``base`` (both relative names) as a name relative to the project folder, or
    None when it leaves the folder (``sub/mode.yaml`` naming ``../map.yaml`` is ``map.yaml``)."""
    joined = os.path.normpath(os.path.join(os.path.dirname(base), rel)) if not os.path.isabs(rel) else rel
    if os.path.isabs(joined) or joined == ".." or joined.startswith("../"):
        return None
    return PurePosixPath(joined).as_posix()


def entry_problem(root: str | Path, rel: Any, base: str | None = None) -> tuple[str | None, str | None]:
    """``(name, None)`` for a valid entry ``rel`` of the manifest (``base`` None) or of the file ``base`` (a mode
    file), ``name`` relative to ``root``; ``(None, problem)`` when it is invalid or leads outside ``root``."""
    problem = name_problem(rel, allow_up=base is not None)
    if problem is not None:
        return None, problem
    name = normalise(rel) if base is None else relative_to_root(Path(root), base, rel)
    if name is None:
        return None, "leaves the project folder"
    problem = name_problem(name) or outside_problem(root, name)
    return (None, problem) if problem is not None else (name, None)


# ---- containment -------------------------------------------------------------------------------------------

def _first_link(root: Path, rel: str) -> Path | None:
    p = root
    for part in PurePosixPath(rel).parts:
        p = p / part
        try:
            if p.is_symlink():
                return p
        except (OSError, ValueError):
            return None
    return None


def outside_problem(root: str | Path, rel: str) -> str | None:
    """None when ``root/rel`` stays inside ``root`` with every symbolic link followed (the file need not exist);
    else a sentence naming where it leads and through which link."""
    real_root = Path(os.path.realpath(root))
    try:
        target = Path(os.path.realpath(real_root / rel))
    except (OSError, ValueError) as exc:
        return f"cannot be resolved ({exc})"
    if target == real_root or real_root in target.parents:
        return None
    link = _first_link(real_root, rel)
    via = f" through the link {link}" if link is not None else ""
    return f"leads outside the project folder, to {target}{via}"


def file_problem(root: str | Path, rel: Any) -> str | None:
    """:func:`name_problem`, then :func:`outside_problem`."""
    return name_problem(rel) or outside_problem(root, rel)


# ---- deleting ----------------------------------------------------------------------------------------------

def unlink_inside(root: str | Path, rel: str, *, own_file: bool = False) -> bool:
    """Delete ``root/rel`` without following any link; returns whether something was removed; never raises.

    A link among the folders on the way stops the deletion; a link as the file itself is removed (not its target);
    folders and other non-files are left alone, as is every invalid name (:func:`name_problem`); ``own_file``
    allows the studio's own reserved names (the journal).
    """
    if name_problem(rel) is not None and not (own_file and rel.casefold() in _RESERVED):
        return False
    parts = PurePosixPath(rel).parts
    if os.unlink in os.supports_dir_fd and os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW"):
        try:
            dfd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except (OSError, ValueError):
            return False
        try:
            for part in parts[:-1]:
                nfd = os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW, dir_fd=dfd)
                os.close(dfd)
                dfd = nfd
            st = os.stat(parts[-1], dir_fd=dfd, follow_symlinks=False)
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                return False
            os.unlink(parts[-1], dir_fd=dfd)
            return True
        except (OSError, ValueError):
            return False
        finally:
            os.close(dfd)
    # platforms without dir_fd: check every step with lstat (a small race window remains there)
    p = Path(root)
    try:
        for part in parts[:-1]:
            p = p / part
            if not stat.S_ISDIR(os.lstat(p).st_mode):
                return False
        p = p / parts[-1]
        mode = os.lstat(p).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            return False
        os.unlink(p)
        return True
    except (OSError, ValueError):
        return False


# ---- which files a project uses ----------------------------------------------------------------------------

def used_files(root: str | Path, on_problem: Any = None) -> tuple[set[str], bool]:
    """The files the project in ``root`` uses per its manifest (``project.yaml`` itself not included): the mode
    file, the data files the mode names and the episode files, as names relative to ``root``.

    Returns ``(names, complete)``; ``complete`` is False when the manifest or the mode file could not be read (the
    names are then what could be known). A name that is invalid or leads outside the folder is left out, or, when
    ``on_problem(container, key, message)`` is given, passed to it (it may raise a located error).
    """
    root = Path(root)
    out: set[str] = set()

    def take(container: Any, key: Any, rel: Any, base: str | None, what: str) -> str | None:
        name, problem = entry_problem(root, rel, base)
        if name is None:   # then problem says why
            if on_problem is not None:
                on_problem(container, key, f"{what} {rel!r} {problem}" if isinstance(rel, str) else
                           f"{what} {problem}")
            return None
        out.add(name)
        return name

    try:
        d = load_yaml(root / MANIFEST)
    except LogiCityError:
        return out, False
    if not isinstance(d, dict):
        return out, False
    complete = True
    if "mode" in d:
        mode_name = take(d, "mode", d["mode"], None, "mode:")
        m = None
        if mode_name is not None:
            try:
                m = load_yaml(root / mode_name)
            except LogiCityError:
                m = None
        if isinstance(m, dict):
            for key in MODE_FILE_KEYS:
                if key in m:
                    take(m, key, m[key], mode_name, f"{key}:")
        else:
            complete = False
    eps = d.get("episodes")
    for i, item in enumerate(eps if isinstance(eps, list) else []):
        if isinstance(item, dict) and "file" in item:
            take(item, "file", item["file"], None, f"episode #{i + 1} file:")
    return out, complete


# ---- the save journal --------------------------------------------------------------------------------------

def _real(root: str | Path) -> str:
    return os.path.realpath(root)


def begin_save(root: str | Path, created: Iterable[str], obsolete: Iterable[str], manifest: bytes) -> None:
    """Write the journal before a save writes anything: the files it will create, the files it will delete after
    the commit, and a digest of the manifest that is the commit."""
    with _saving_lock:
        _saving.add(_real(root))
    data = {"format": JOURNAL_FORMAT, "host": host_tag(), "pid": os.getpid(), "created": sorted(created),
            "obsolete": sorted(obsolete), "manifest_sha256": hashlib.sha256(manifest).hexdigest()}
    atomic_write_bytes(Path(root) / JOURNAL, json.dumps(data, indent=1).encode("utf-8"))


def end_save(root: str | Path) -> None:
    """Remove the journal once the save is complete (or cleanly undone)."""
    unlink_inside(root, JOURNAL, own_file=True)
    with _saving_lock:
        _saving.discard(_real(root))


def _journal_is_stale(data: dict[str, Any], root: str | Path) -> bool:
    if data.get("host") != host_tag() or not isinstance(data.get("pid"), int):
        return False
    if data["pid"] == os.getpid():
        with _saving_lock:
            return _real(root) not in _saving
    return not pid_alive(data["pid"])


def clean_leftovers(root: str | Path) -> list[str]:
    """Remove what interrupted saves and writes left in the project folder ``root``; returns the removed names.

    Only files the studio's naming proves are its own go: stale temporary files (:func:`core.io.fileio.is_stale_temp`)
    in the folder and in ``episodes/``, and the files a stale journal lists that the current manifest does not use
    (files the killed save created; after its commit also the ones it was going to delete). Nothing is removed
    while the writer may still run, nor when the manifest or mode file cannot be read. Never raises.
    """
    root = Path(root)
    removed = [p.name for p in clean_stale_temps(root)]
    removed += [f"{EPISODE_DIR}/{p.name}" for p in clean_stale_temps(root / EPISODE_DIR)]
    journal = root / JOURNAL
    try:
        if journal.is_symlink() or not journal.is_file():
            return removed
        data = json.loads(journal.read_text("utf-8"))
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict) or data.get("format") != JOURNAL_FORMAT:
        return removed   # not a journal this studio wrote in full: left alone
    if not _journal_is_stale(data, root):
        return removed
    used, complete = used_files(root)
    if not complete:
        return removed
    try:
        committed = hashlib.sha256((root / MANIFEST).read_bytes()).hexdigest() == data.get("manifest_sha256")
    except OSError:
        committed = False
    # a save creates only part files named by the studio's scheme and files in episodes/ (a journal naming anything
    # else was not written by a save: those entries are ignored)
    listed = [rel for rel in data.get("created") or [] if isinstance(rel, str) and _CREATED_RE.match(rel)]
    if committed:
        listed += list(data.get("obsolete") or [])
    for rel in listed:
        if isinstance(rel, str) and name_problem(rel) is None and normalise(rel) not in used:
            if unlink_inside(root, normalise(rel)):
                removed.append(normalise(rel))
    unlink_inside(root, JOURNAL, own_file=True)
    return removed
