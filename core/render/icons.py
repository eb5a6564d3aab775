"""The set of icon images the renderer and the map view draw with: default art plus accepted library icons.

Why: both the headless renderer and the studio's map view must show exactly the same icons, and an icon the
artist accepts must replace the default art at once; :class:`IconSet` is the one place that decides which images
stand for a semantic.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

from core.render.default_art import DEFAULT_ICON_DIR, DRAWERS, N_VARIANTS
from core.render.library import IconLibrary
from core.render.semantics import AGENT_SEMANTICS, SEMANTICS

# PIL is imported on first use.

__all__ = ["DEFAULT_ICON_DIR", "IconSet", "trim_alpha"]


def trim_alpha(rgba: np.ndarray, threshold: int = 8) -> np.ndarray:
    """Crop an RGBA array to the bounding box of its visible pixels (agent boxes must hug the drawing)."""
    ys, xs = np.nonzero(rgba[..., 3] > threshold)
    if len(ys) == 0:
        return rgba
    return rgba[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def _read_rgba(path: Path) -> np.ndarray:
    """The image as RGBA; any unreadable file (corrupt, not an image, too large) raises ``OSError``."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGBA")).copy()
    except (ValueError, Image.DecompressionBombError) as exc:
        raise OSError(f"cannot read {path}: {exc}") from exc


@dataclass(frozen=True)
class IconSet:
    """RGBA images (uint8 ``[h, w, 4]``) per semantic, and where each came from.

    Agent icons are trimmed to their visible pixels when loaded. ``sources[semantic][k]`` is a file path or a
    library id, ``from_library[semantic]`` says whether accepted library icons replaced the defaults.
    """

    images: Mapping[str, tuple[np.ndarray, ...]]
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    from_library: Mapping[str, bool] = field(default_factory=dict)

    def variants(self, semantic: str) -> tuple[np.ndarray, ...]:
        return self.images[semantic]

    def count(self, semantic: str) -> int:
        return len(self.images.get(semantic, ()))

    @property
    def semantics(self) -> tuple[str, ...]:
        return tuple(s for s in SEMANTICS if s in self.images)

    def merged(self, other: "IconSet") -> "IconSet":
        """This set with every semantic present in ``other`` replaced by ``other``'s images."""
        return IconSet({**self.images, **other.images}, {**self.sources, **other.sources},
                       {**self.from_library, **other.from_library})

    @classmethod
    def default(cls) -> "IconSet":
        """Default art plus the accepted icons of the user's library (``<user data dir>/icons``)."""
        return cls.load(DEFAULT_ICON_DIR, IconLibrary())

    def reload(self, semantic: str, library: IconLibrary | None,
               default_dir: str | Path | None = DEFAULT_ICON_DIR) -> "IconSet":
        """This set with ``semantic`` re-read (call on the Render dock's ``iconsChanged(semantic)``)."""
        return self.merged(IconSet.load(default_dir, library, [semantic]))

    @classmethod
    def load(cls, default_dir: str | Path | None = DEFAULT_ICON_DIR, library: IconLibrary | None = None,
             semantics: Iterable[str] = SEMANTICS) -> "IconSet":
        """Accepted library icons of a semantic when it has any, else the default art of ``default_dir``.

        A semantic with neither (e.g. a deleted resources folder) is drawn procedurally on the fly, so rendering
        always works.
        """
        images: dict[str, tuple[np.ndarray, ...]] = {}
        sources: dict[str, tuple[str, ...]] = {}
        from_lib: dict[str, bool] = {}
        for sem in semantics:
            imgs: list[np.ndarray] = []
            srcs: list[str] = []
            if library is not None:
                for rec in library.accepted(sem):
                    try:
                        imgs.append(_read_rgba(rec.png))
                        srcs.append(rec.id)
                    except OSError:
                        continue  # a half-written or corrupt file must not break rendering
            from_lib[sem] = bool(imgs)
            if not imgs and default_dir is not None:
                for png in sorted((Path(default_dir) / sem).glob("*.png")):
                    try:
                        imgs.append(_read_rgba(png))
                        srcs.append(str(png))
                    except OSError:
                        continue
            if not imgs:
                imgs = [np.asarray(DRAWERS[sem](k).convert("RGBA")).copy() for k in range(N_VARIANTS)]
                srcs = [f"<procedural {sem} {k}>" for k in range(N_VARIANTS)]
            if sem in AGENT_SEMANTICS:
                imgs = [trim_alpha(a) for a in imgs]
            for a in imgs:
                a.setflags(write=False)
            images[sem] = tuple(imgs)
            sources[sem] = tuple(srcs)
        return cls(images, sources, from_lib)
