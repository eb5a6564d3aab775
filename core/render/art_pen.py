"""Drawing primitives for the procedural default icon art (see :mod:`core.render.default_art`).

Shapes are drawn at ``SS``× and downsampled (anti-aliasing without relying on Pillow's line smoothing); textures
are periodic so street tiles are seamless.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Protocol, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

# scipy.ndimage is imported on first use.

SS = 4  # supersampling factor
TILE = 160

RGB = tuple[int, int, int]
RGBA = tuple[int, int, int, int]


class Shape(Protocol):
    """What :meth:`Pen.wrap` draws: ``shape(dx, dy)`` at an offset (a lambda may bind more, as defaults)."""

    def __call__(self, dx: float, dy: float, /) -> None: ...


# ---------------------------------------------------------------------------------------------- helpers -----
def rgba(c: Sequence[int], a: int = 255) -> RGBA:
    return (int(c[0]), int(c[1]), int(c[2]), int(c[3]) if len(c) > 3 else a)


def shade(c: Sequence[int], f: float) -> RGB:
    """Darken (f < 1) or lighten (f > 1, towards white) a colour."""
    if f <= 1:
        return tuple(int(round(v * f)) for v in c[:3])  # type: ignore[return-value]
    t = f - 1
    return tuple(int(round(v + (255 - v) * t)) for v in c[:3])  # type: ignore[return-value]


class Pen:
    """Draws in native-pixel coordinates on a canvas SS times larger; ``result()`` downsamples."""

    def __init__(self, w: int, h: int, base: Image.Image | None = None, bg: RGBA = (0, 0, 0, 0)) -> None:
        self.w, self.h = w, h
        if base is None:
            self.img = Image.new("RGBA", (w * SS, h * SS), bg)
        else:
            self.img = base.convert("RGBA").resize((w * SS, h * SS), Image.Resampling.BICUBIC)
        self.d = ImageDraw.Draw(self.img)

    @staticmethod
    def _s(vals: Sequence[float]) -> list[float]:
        return [v * SS for v in vals]

    def rect(self, box: Sequence[float], fill: Sequence[int] | None, outline: Sequence[int] | None = None,
             width: float = 0, r: float = 0) -> None:
        b = self._s(box)
        b = [b[0], b[1], b[2] - 1, b[3] - 1]
        f = rgba(fill) if fill is not None else None
        o = rgba(outline) if outline is not None else None
        if r > 0:
            self.d.rounded_rectangle(b, radius=r * SS, fill=f, outline=o, width=int(width * SS))
        else:
            self.d.rectangle(b, fill=f, outline=o, width=int(width * SS))

    def ellipse(self, box: Sequence[float], fill: Sequence[int] | None, outline: Sequence[int] | None = None,
                width: float = 0) -> None:
        b = self._s(box)
        self.d.ellipse([b[0], b[1], b[2] - 1, b[3] - 1], fill=rgba(fill) if fill else None,
                       outline=rgba(outline) if outline else None, width=int(width * SS))

    def circle(self, cx: float, cy: float, r: float, fill: Sequence[int] | None,
               outline: Sequence[int] | None = None, width: float = 0) -> None:
        self.ellipse((cx - r, cy - r, cx + r, cy + r), fill, outline, width)

    def poly(self, pts: Sequence[tuple[float, float]], fill: Sequence[int] | None,
             outline: Sequence[int] | None = None, width: float = 0) -> None:
        p = [(x * SS, y * SS) for x, y in pts]
        self.d.polygon(p, fill=rgba(fill) if fill else None, outline=rgba(outline) if outline else None,
                       width=max(1, int(width * SS)) if outline else 0)

    def line(self, pts: Sequence[tuple[float, float]], fill: Sequence[int], width: float, round_caps: bool = True
             ) -> None:
        p = [(x * SS, y * SS) for x, y in pts]
        self.d.line(p, fill=rgba(fill), width=int(width * SS), joint="curve")
        if round_caps:
            for x, y in (pts[0], pts[-1]):
                self.circle(x, y, width / 2, fill)

    def arc(self, box: Sequence[float], start: float, end: float, fill: Sequence[int], width: float) -> None:
        b = self._s(box)
        self.d.arc([b[0], b[1], b[2] - 1, b[3] - 1], start, end, fill=rgba(fill), width=int(width * SS))

    @contextmanager
    def layer(self) -> Iterator[None]:
        """Draw the block on a transparent layer and alpha-composite it (Pillow does not blend on RGBA)."""
        base, base_d = self.img, self.d
        self.img = Image.new("RGBA", base.size, (0, 0, 0, 0))
        self.d = ImageDraw.Draw(self.img)
        try:
            yield
        finally:
            layer, self.img, self.d = self.img, base, base_d
            self.img.alpha_composite(layer)

    def wrap(self, fn: Shape) -> None:
        """Call ``fn(dx, dy)`` for the 9 periodic copies, so shapes crossing an edge re-enter opposite (tiles)."""
        for dy in (-self.h, 0, self.h):
            for dx in (-self.w, 0, self.w):
                fn(dx, dy)

    def result(self) -> Image.Image:
        return self.img.resize((self.w, self.h), Image.Resampling.LANCZOS)


def periodic_noise(rng: np.random.Generator, h: int, w: int, sigma: float) -> np.ndarray:
    """Seamless (wrap-around) smooth noise with zero mean and unit std."""
    from scipy.ndimage import gaussian_filter

    n = gaussian_filter(rng.normal(size=(h, w)), sigma, mode="wrap")
    return (n - n.mean()) / (n.std() + 1e-9)


def texture(rng: np.random.Generator, base: RGB, amp: float, sigma: float = 1.0, fine: float = 0.0,
             size: tuple[int, int] = (TILE, TILE)) -> Image.Image:
    """A seamless noisy fill of colour ``base`` (amp/fine = coarse/fine brightness variation in levels)."""
    h, w = size
    n = amp * periodic_noise(rng, h, w, sigma)
    if fine:
        n = n + fine * rng.normal(size=(h, w))
    arr = np.clip(np.asarray(base, dtype=np.float64)[None, None, :] + n[..., None], 0, 255).astype(np.uint8)
    return Image.fromarray(np.dstack([arr, np.full((h, w), 255, np.uint8)]), "RGBA")


def outlined(img: Image.Image, px: int = 2, color: RGB = (22, 22, 26)) -> Image.Image:
    """Add a dark silhouette outline ``px`` wide around the opaque part (agents must pop on any street)."""
    pad = px + 1
    canvas = Image.new("RGBA", (img.width + 2 * pad, img.height + 2 * pad), (0, 0, 0, 0))
    canvas.paste(img, (pad, pad))
    alpha = canvas.getchannel("A")
    grown = alpha.filter(ImageFilter.MaxFilter(2 * px + 1))
    back = Image.new("RGBA", canvas.size, rgba(color))
    back.putalpha(grown)
    return Image.alpha_composite(back, canvas)


def finish_agent(pen: Pen) -> Image.Image:
    """Downsample and outline an agent icon (dark rim so it stands out on any street)."""
    return outlined(pen.result(), 2)
