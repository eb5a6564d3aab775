"""The icon library on disk: generated or imported icons, one folder per semantic, each PNG with a JSON sidecar.

Layout (``root`` defaults to ``<user data dir>/icons``)::

    root/<semantic>/<stem>.png        RGBA icon (background removed), what the renderer uses
    root/<semantic>/<stem>.raw.png    the image exactly as generated (kept so the alpha step can be redone)
    root/<semantic>/<stem>.json       sidecar: prompt, negative_prompt, seed, model, scheduler, steps, guidance,
                                      width, height, status (pending | accepted | rejected), created, ...

Why files and not a database: artists browse, back up and share these folders with ordinary tools; a sidecar
per image keeps everything needed to reproduce it next to it. Nothing is ever deleted implicitly: rejecting only
changes the status, so a rejected icon can be accepted later.

Sidecars are user files (edited by hand, copied between machines, half-written by a crash), so reading one never
raises: a sidecar that is not JSON, or a field of the wrong type, flags the record with ``sidecar_error`` (naming
the file and the field), the bad fields are left out of ``meta`` and the icon counts as pending when its status
cannot be read. Rewriting such a sidecar (accept/reject) keeps every field it had, and an unreadable sidecar is
first copied to ``<stem>.json.broken`` so nothing of it is lost.
"""
from __future__ import annotations

import builtins
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from core.base.errors import LogiCityError
from core.io.datadir import icon_library_dir
from core.io.yamlio import type_word
from core.render.semantics import SEMANTICS, parse_semantic

# PIL is imported on first use.

STATUSES = ("pending", "accepted", "rejected")
_STEM_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class IconLibraryError(LogiCityError):
    """A bad icon id, semantic or status given by the user."""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


_JSON_WORDS = {type(None): "null", bool: "a boolean", int: "an integer", float: "a number", str: "a string",
               dict: "an object", list: "an array"}


def _json_type_name(v: Any) -> str:
    return type_word(v, _JSON_WORDS)


def _short(v: Any, limit: int = 40) -> str:
    text = json.dumps(v, ensure_ascii=False) if isinstance(v, (str, int, float, bool, type(None))) else ""
    return f" {text[:limit] + '…' if len(text) > limit else text}" if text else ""


#: Sidecar fields the studio reads, with their check and what the check asks for. Other fields are kept as they
#: are (artists may add their own notes).
_FIELDS: dict[str, tuple[Any, str]] = {
    "status": (lambda v: v in STATUSES, "one of " + ", ".join(f'"{s}"' for s in STATUSES)),
    "seed": (lambda v: v is None or (_is_int(v) and v >= 0), "a non-negative integer"),
    "prompt": (_is_str, "a string"),
    "negative_prompt": (_is_str, "a string"),
    "model": (_is_str, "a string"),
    "scheduler": (_is_str, "a string"),
    "scheduler_choice": (_is_str, "a string"),
    "post": (lambda v: v is None or _is_str(v), "a string"),
    "raw": (_is_str, "a string"),
    "steps": (lambda v: _is_int(v) and v >= 1, "a positive integer"),
    "guidance": (_is_number, "a number"),
    "width": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    "height": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    "postprocess": (lambda v: isinstance(v, dict) and _is_str(v.get("warning", "")),
                    'an object (its "warning" a string)'),
}


def check_sidecar(meta: Mapping[str, Any], file: str | Path) -> tuple[dict[str, Any], str | None]:
    """``meta`` without the fields of a wrong type, and a message naming ``file`` and each such field (or
    ``None`` when all are fine)."""
    clean: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in meta.items():
        if key == "sidecar_error":  # written by older versions: never a stored field
            continue
        check = _FIELDS.get(key)
        if check is not None and not check[0](value):
            problems.append(f"field {key!r} must be {check[1]}, got {_json_type_name(value)}{_short(value)}")
            continue
        clean[key] = value
    return clean, (f"{file}: " + "; ".join(problems) + " (ignored)") if problems else None


@dataclass(frozen=True)
class IconRecord:
    """One icon of the library (a snapshot of its sidecar at the time it was read).

    ``meta`` holds the sidecar's valid fields; ``sidecar_error`` (``None`` when the sidecar is fine) says what is
    wrong with it, naming the file and field; ``stored`` is the sidecar as parsed, bad fields included (``None``
    when it could not be parsed), which is what a rewrite starts from. The properties never raise.
    """

    semantic: str
    stem: str
    png: Path
    meta: Mapping[str, Any]
    sidecar_error: str | None = None
    stored: Mapping[str, Any] | None = None

    @property
    def id(self) -> str:
        return f"{self.semantic}/{self.stem}"

    @property
    def status(self) -> str:
        s = self.meta.get("status", "pending")
        return s if s in STATUSES else "pending"

    @property
    def seed(self) -> int | None:
        s = self.meta.get("seed")
        return s if _is_int(s) else None

    @property
    def prompt(self) -> str:
        s = self.meta.get("prompt", "")
        return s if isinstance(s, str) else ""

    @property
    def warning(self) -> str | None:
        """The post-processing warning (e.g. background removal incomplete), if any."""
        post = self.meta.get("postprocess")
        w = post.get("warning") if isinstance(post, dict) else None
        return w if isinstance(w, str) and w else None

    @property
    def raw_png(self) -> Path:
        return self.png.with_name(self.stem + ".raw.png")

    @property
    def sidecar(self) -> Path:
        return self.png.with_name(self.stem + ".json")


def _natural_key(path: Path) -> list:
    """Sort ``…-s9`` before ``…-s10`` (stems start with the creation time, then the seed)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name)]


def _write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class IconLibrary:
    """File-backed icon library. Safe to use from a worker thread and the GUI thread at the same time for
    different icons (every write is a whole-file atomic replace)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else icon_library_dir()

    # ------------------------------------------------------------------------------------------ queries ----
    def folder(self, semantic: str) -> Path:
        return self.root / _semantic(semantic)

    def list(self, semantic: str | None = None, status: str | Iterable[str] | None = None) -> list[IconRecord]:
        """Icons of one semantic (or all), optionally filtered by status; oldest first (stems sort by time)."""
        sems = [_semantic(semantic)] if semantic else list(SEMANTICS)
        wanted = {status} if isinstance(status, str) else (set(status) if status is not None else None)
        if wanted is not None:
            bad = wanted - set(STATUSES)
            if bad:
                raise IconLibraryError(f"unknown status {sorted(bad)}; use one of {', '.join(STATUSES)}")
        out: list[IconRecord] = []
        for sem in sems:
            folder = self.root / sem
            if not folder.is_dir():
                continue
            for png in sorted(folder.glob("*.png"), key=_natural_key):
                if png.name.endswith(".raw.png"):
                    continue
                rec = self._record(sem, png)
                if wanted is None or rec.status in wanted:
                    out.append(rec)
        return out

    def accepted(self, semantic: str) -> builtins.list[IconRecord]:   # ``list`` here is the method above
        return self.list(semantic, "accepted")

    def get(self, icon_id: str) -> IconRecord:
        sem, stem = self._split(icon_id)
        png = self.root / sem / f"{stem}.png"
        if not png.is_file():
            raise IconLibraryError(f"no icon {icon_id!r} in the library at {self.root}")
        return self._record(sem, png)

    def metadata(self, icon_id: str) -> dict[str, Any]:
        return dict(self.get(icon_id).meta)

    def revision(self, semantic: str) -> tuple[tuple[str, str], ...]:
        """A cheap signature of the accepted icons of ``semantic`` (changes when one is accepted/rejected)."""
        return tuple((r.stem, r.status) for r in self.accepted(semantic))

    # ------------------------------------------------------------------------------------------ updates ----
    def add(self, semantic: str, image: Any, meta: Mapping[str, Any] | None = None, *, raw: Any = None,
            status: str = "pending", stem: str | None = None) -> IconRecord:
        """Store a PIL image (RGBA) with its sidecar; ``raw`` (optional) is the image before background removal.

        The stem is ``YYYYmmdd-HHMMSS-s<seed>`` (+ ``-2``, ``-3`` … when taken), so files sort by creation time
        and show their seed.
        """
        sem = _semantic(semantic)
        if status not in STATUSES:
            raise IconLibraryError(f"unknown status {status!r}")
        folder = self.root / sem
        folder.mkdir(parents=True, exist_ok=True)
        meta = dict(meta or {})
        if stem is None:
            seed = meta.get("seed")
            base = time.strftime("%Y%m%d-%H%M%S") + (f"-s{seed}" if _is_int(seed) else "-import")
            stem, k = base, 1
            while (folder / f"{stem}.png").exists() or (folder / f"{stem}.json").exists():
                k += 1
                stem = f"{base}-{k}"
        elif not _STEM_RE.match(stem):
            raise IconLibraryError(f"invalid icon name {stem!r}")
        meta.update(semantic=sem, status=status, width=image.width, height=image.height)
        meta.setdefault("created", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        if raw is not None:
            raw.save(folder / f"{stem}.raw.png")
            meta["raw"] = f"{stem}.raw.png"
        png = folder / f"{stem}.png"
        tmp = folder / f"{stem}.png.tmp"
        image.save(tmp, format="PNG")
        os.replace(tmp, png)
        side = folder / f"{stem}.json"
        _write_json_atomic(side, meta)
        clean, problem = check_sidecar(meta, side)
        return IconRecord(sem, stem, png, clean, problem, meta)

    def import_image(self, semantic: str, path: str | Path, status: str = "accepted") -> IconRecord:
        """Add an artist's own PNG/JPEG (kept as is, converted to RGBA)."""
        from PIL import Image

        path = Path(path)
        _semantic(semantic)  # a bad semantic is reported before the file is read
        try:
            with Image.open(path) as im:
                img = im.convert("RGBA")
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            raise IconLibraryError(f"cannot read image: {exc}", path) from exc
        return self.add(semantic, img, {"source": "imported", "original_file": str(path)}, status=status)

    def set_status(self, icon_id: str, status: str) -> IconRecord:
        if status not in STATUSES:
            raise IconLibraryError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
        rec = self.get(icon_id)
        return self._rewrite(rec, status=status, status_changed=time.strftime("%Y-%m-%dT%H:%M:%S%z"))

    def accept(self, icon_id: str) -> IconRecord:
        return self.set_status(icon_id, "accepted")

    def reject(self, icon_id: str) -> IconRecord:
        return self.set_status(icon_id, "rejected")

    def update_metadata(self, icon_id: str, **fields: Any) -> IconRecord:
        return self._rewrite(self.get(icon_id), **fields)

    def delete(self, icon_id: str) -> None:
        """Remove an icon and its sidecar/raw image for good (explicit user action only)."""
        rec = self.get(icon_id)
        for p in (rec.png, rec.raw_png, rec.sidecar):
            p.unlink(missing_ok=True)

    # ---------------------------------------------------------------------------------------- internals ----
    def _split(self, icon_id: str) -> tuple[str, str]:
        if "/" not in icon_id:
            raise IconLibraryError(f"icon id {icon_id!r} must look like <semantic>/<name>")
        sem, stem = icon_id.split("/", 1)
        sem = _semantic(sem)
        if stem.endswith(".png"):
            stem = stem[:-4]
        if not _STEM_RE.match(stem):
            raise IconLibraryError(f"invalid icon name {stem!r}")
        return sem, stem

    def _record(self, sem: str, png: Path) -> IconRecord:
        """Read an icon's sidecar; never raises (a bad sidecar flags the record, see the module docstring)."""
        stem = png.name[:-4]
        side = png.with_name(stem + ".json")
        if not side.is_file():
            return IconRecord(sem, stem, png, {}, None, {})
        try:
            data = json.loads(side.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            return IconRecord(sem, stem, png, {}, f"{side}: unreadable sidecar ({_why(exc)}); the icon counts as "
                                                  "pending", None)
        if not isinstance(data, dict):
            return IconRecord(sem, stem, png, {}, f"{side}: the sidecar must be a JSON object, got "
                                                  f"{_json_type_name(data)}; the icon counts as pending", None)
        meta, problem = check_sidecar(data, side)
        return IconRecord(sem, stem, png, meta, problem, data)

    def _rewrite(self, rec: IconRecord, **fields: Any) -> IconRecord:
        """Write ``rec``'s sidecar with ``fields`` changed, keeping every field it had (even invalid ones)."""
        if rec.stored is None and rec.sidecar.is_file():  # unreadable: keep a copy before replacing it
            backup = rec.sidecar.with_name(rec.sidecar.name + ".broken")
            k = 1
            while backup.exists():
                k += 1
                backup = rec.sidecar.with_name(f"{rec.sidecar.name}.broken{k}")
            try:
                os.replace(rec.sidecar, backup)
            except OSError as exc:
                raise IconLibraryError(f"cannot keep a copy of the unreadable sidecar: {exc}", rec.sidecar) from exc
        base = dict(rec.stored) if rec.stored is not None else dict(rec.meta)
        base.pop("sidecar_error", None)
        base.update(fields)
        try:
            _write_json_atomic(rec.sidecar, base)
        except OSError as exc:
            raise IconLibraryError(f"cannot write the sidecar: {exc}", rec.sidecar) from exc
        meta, problem = check_sidecar(base, rec.sidecar)
        return IconRecord(rec.semantic, rec.stem, rec.png, meta, problem, base)


def _why(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)


def _semantic(text: str) -> str:
    """``parse_semantic`` raising :class:`IconLibraryError` (a user error) instead of ``ValueError``."""
    try:
        return parse_semantic(str(text))
    except ValueError as exc:
        raise IconLibraryError(str(exc)) from None
