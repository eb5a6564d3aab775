"""The icon library on disk: generated or imported icons, one folder per semantic, each PNG with a JSON sidecar.

Layout (``root`` defaults to ``<user data dir>/icons``)::

    root/<semantic>/<stem>.png        RGBA icon (background removed), what the renderer uses
    root/<semantic>/<stem>.raw.png    the image exactly as generated (kept so the alpha step can be redone)
    root/<semantic>/<stem>.json       sidecar: prompt, negative_prompt, seed, model, scheduler, steps, guidance,
                                      width, height, status (pending | accepted | rejected), created, ...

Why files and not a database: artists browse, back up and share these folders with ordinary tools; a sidecar
per image keeps everything needed to reproduce it next to it. Nothing is ever deleted implicitly: rejecting only
changes the status, so a rejected icon can be accepted later.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..datadir import icon_library_dir
from ..errors import LogiCityError
from .semantics import SEMANTICS, parse_semantic

STATUSES = ("pending", "accepted", "rejected")
_STEM_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class IconLibraryError(LogiCityError):
    """A bad icon id, semantic or status given by the user."""


@dataclass(frozen=True)
class IconRecord:
    """One icon of the library (a snapshot of its sidecar at the time it was read)."""

    semantic: str
    stem: str
    png: Path
    meta: Mapping[str, Any]

    @property
    def id(self) -> str:
        return f"{self.semantic}/{self.stem}"

    @property
    def status(self) -> str:
        return str(self.meta.get("status", "pending"))

    @property
    def seed(self) -> int | None:
        s = self.meta.get("seed")
        return int(s) if s is not None else None

    @property
    def prompt(self) -> str:
        return str(self.meta.get("prompt", ""))

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
        return self.root / parse_semantic(semantic)

    def list(self, semantic: str | None = None, status: str | Iterable[str] | None = None) -> list[IconRecord]:
        """Icons of one semantic (or all), optionally filtered by status; oldest first (stems sort by time)."""
        sems = [parse_semantic(semantic)] if semantic else list(SEMANTICS)
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

    def accepted(self, semantic: str) -> list[IconRecord]:
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
        sem = parse_semantic(semantic)
        if status not in STATUSES:
            raise IconLibraryError(f"unknown status {status!r}")
        folder = self.root / sem
        folder.mkdir(parents=True, exist_ok=True)
        meta = dict(meta or {})
        if stem is None:
            seed = meta.get("seed")
            base = time.strftime("%Y%m%d-%H%M%S") + (f"-s{int(seed)}" if seed is not None else "-import")
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
        _write_json_atomic(folder / f"{stem}.json", meta)
        return IconRecord(sem, stem, png, meta)

    def import_image(self, semantic: str, path: str | Path, status: str = "accepted") -> IconRecord:
        """Add an artist's own PNG/JPEG (kept as is, converted to RGBA)."""
        from PIL import Image

        path = Path(path)
        try:
            with Image.open(path) as im:
                img = im.convert("RGBA")
        except (OSError, ValueError) as exc:
            raise IconLibraryError(f"cannot read image: {exc}", path) from exc
        return self.add(semantic, img, {"source": "imported", "original_file": str(path)}, status=status)

    def set_status(self, icon_id: str, status: str) -> IconRecord:
        if status not in STATUSES:
            raise IconLibraryError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
        rec = self.get(icon_id)
        meta = dict(rec.meta)
        meta["status"] = status
        meta["status_changed"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        _write_json_atomic(rec.sidecar, meta)
        return IconRecord(rec.semantic, rec.stem, rec.png, meta)

    def accept(self, icon_id: str) -> IconRecord:
        return self.set_status(icon_id, "accepted")

    def reject(self, icon_id: str) -> IconRecord:
        return self.set_status(icon_id, "rejected")

    def update_metadata(self, icon_id: str, **fields: Any) -> IconRecord:
        rec = self.get(icon_id)
        meta = {**rec.meta, **fields}
        _write_json_atomic(rec.sidecar, meta)
        return IconRecord(rec.semantic, rec.stem, rec.png, meta)

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
        try:
            sem = parse_semantic(sem)
        except ValueError as exc:
            raise IconLibraryError(str(exc)) from None
        if stem.endswith(".png"):
            stem = stem[:-4]
        if not _STEM_RE.match(stem):
            raise IconLibraryError(f"invalid icon name {stem!r}")
        return sem, stem

    def _record(self, sem: str, png: Path) -> IconRecord:
        stem = png.name[:-4]
        side = png.with_name(stem + ".json")
        meta: dict[str, Any] = {}
        if side.is_file():
            try:
                meta = json.loads(side.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                meta = {"status": "pending", "sidecar_error": "unreadable sidecar"}
            if not isinstance(meta, dict):
                meta = {"status": "pending", "sidecar_error": "sidecar is not a JSON object"}
        return IconRecord(sem, stem, png, meta)
