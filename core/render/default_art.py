"""Procedural default icon art (Pillow only), so rendering works on a fresh machine with no generated icons.

Run ``python -m core.render.default_art [OUT_DIR]`` to (re)draw ``resources/icons/<semantic>/default_<k>.png``.
Everything is drawn from fixed seeds with Pillow primitives (no fonts, no external images), so the output is
identical on every machine with the pinned Pillow; a test checks the committed PNGs match this script.

Conventions the renderer relies on (see docs/rendering.md):

* street tiles (``walking_street``, ``traffic_street``, ``crossing``) are seamless 160×160 squares that stand for
  10×10 cells; the crossing's bars run left–right (traffic flowing horizontally) and are rotated for vertical
  roads;
* buildings are opaque 160×160 top-down views of a 10×10-cell lot;
* cars point **up** (head at the top), pedestrians face **right** (side-view pictograms, mirrored for left/down),
  on a transparent background with a dark outline so they stand out on any street.

Shapes are drawn at 4× and downsampled (anti-aliasing without relying on Pillow's line smoothing).
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from .semantics import SEMANTICS

#: Where the default art is shipped (``resources/icons``): written by :func:`main`, read by
#: :class:`core.render.icons.IconSet`.
DEFAULT_ICON_DIR = Path(__file__).resolve().parents[2] / "resources" / "icons"
SS = 4  # supersampling factor
N_VARIANTS = 3
TILE = 160

RGB = tuple[int, int, int]
RGBA = tuple[int, int, int, int]


# ---------------------------------------------------------------------------------------------- helpers -----
def _rgba(c: Sequence[int], a: int = 255) -> RGBA:
    return (int(c[0]), int(c[1]), int(c[2]), int(c[3]) if len(c) > 3 else a)


def _shade(c: Sequence[int], f: float) -> RGB:
    """Darken (f < 1) or lighten (f > 1, towards white) a colour."""
    if f <= 1:
        return tuple(int(round(v * f)) for v in c[:3])  # type: ignore[return-value]
    t = f - 1
    return tuple(int(round(v + (255 - v) * t)) for v in c[:3])  # type: ignore[return-value]


class _Pen:
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
        f = _rgba(fill) if fill is not None else None
        o = _rgba(outline) if outline is not None else None
        if r > 0:
            self.d.rounded_rectangle(b, radius=r * SS, fill=f, outline=o, width=int(width * SS))
        else:
            self.d.rectangle(b, fill=f, outline=o, width=int(width * SS))

    def ellipse(self, box: Sequence[float], fill: Sequence[int] | None, outline: Sequence[int] | None = None,
                width: float = 0) -> None:
        b = self._s(box)
        self.d.ellipse([b[0], b[1], b[2] - 1, b[3] - 1], fill=_rgba(fill) if fill else None,
                       outline=_rgba(outline) if outline else None, width=int(width * SS))

    def circle(self, cx: float, cy: float, r: float, fill: Sequence[int] | None,
               outline: Sequence[int] | None = None, width: float = 0) -> None:
        self.ellipse((cx - r, cy - r, cx + r, cy + r), fill, outline, width)

    def poly(self, pts: Sequence[tuple[float, float]], fill: Sequence[int] | None,
             outline: Sequence[int] | None = None, width: float = 0) -> None:
        p = [(x * SS, y * SS) for x, y in pts]
        self.d.polygon(p, fill=_rgba(fill) if fill else None, outline=_rgba(outline) if outline else None,
                       width=max(1, int(width * SS)) if outline else 0)

    def line(self, pts: Sequence[tuple[float, float]], fill: Sequence[int], width: float, round_caps: bool = True
             ) -> None:
        p = [(x * SS, y * SS) for x, y in pts]
        self.d.line(p, fill=_rgba(fill), width=int(width * SS), joint="curve")
        if round_caps:
            for x, y in (pts[0], pts[-1]):
                self.circle(x, y, width / 2, fill)

    def arc(self, box: Sequence[float], start: float, end: float, fill: Sequence[int], width: float) -> None:
        b = self._s(box)
        self.d.arc([b[0], b[1], b[2] - 1, b[3] - 1], start, end, fill=_rgba(fill), width=int(width * SS))

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

    def wrap(self, fn: Callable[[float, float], None]) -> None:
        """Call ``fn(dx, dy)`` for the 9 periodic copies, so shapes crossing an edge re-enter opposite (tiles)."""
        for dy in (-self.h, 0, self.h):
            for dx in (-self.w, 0, self.w):
                fn(dx, dy)

    def result(self) -> Image.Image:
        return self.img.resize((self.w, self.h), Image.Resampling.LANCZOS)


def _periodic_noise(rng: np.random.Generator, h: int, w: int, sigma: float) -> np.ndarray:
    """Seamless (wrap-around) smooth noise with zero mean and unit std."""
    from scipy.ndimage import gaussian_filter

    n = gaussian_filter(rng.normal(size=(h, w)), sigma, mode="wrap")
    return (n - n.mean()) / (n.std() + 1e-9)


def _texture(rng: np.random.Generator, base: RGB, amp: float, sigma: float = 1.0, fine: float = 0.0,
             size: tuple[int, int] = (TILE, TILE)) -> Image.Image:
    """A seamless noisy fill of colour ``base`` (amp/fine = coarse/fine brightness variation in levels)."""
    h, w = size
    n = amp * _periodic_noise(rng, h, w, sigma)
    if fine:
        n = n + fine * rng.normal(size=(h, w))
    arr = np.clip(np.asarray(base, dtype=np.float64)[None, None, :] + n[..., None], 0, 255).astype(np.uint8)
    return Image.fromarray(np.dstack([arr, np.full((h, w), 255, np.uint8)]), "RGBA")


def _outlined(img: Image.Image, px: int = 2, color: RGB = (22, 22, 26)) -> Image.Image:
    """Add a dark silhouette outline ``px`` wide around the opaque part (agents must pop on any street)."""
    pad = px + 1
    canvas = Image.new("RGBA", (img.width + 2 * pad, img.height + 2 * pad), (0, 0, 0, 0))
    canvas.paste(img, (pad, pad))
    alpha = canvas.getchannel("A")
    grown = alpha.filter(ImageFilter.MaxFilter(2 * px + 1))
    back = Image.new("RGBA", canvas.size, _rgba(color))
    back.putalpha(grown)
    return Image.alpha_composite(back, canvas)


# ----------------------------------------------------------------------------------------- street tiles -----
def draw_walking_street(v: int) -> Image.Image:
    rng = np.random.default_rng(100 + v)
    if v == 0:  # grey concrete slabs, 4×4 grid
        pen = _Pen(TILE, TILE, _texture(rng, (196, 196, 190), 5, 2.0, 3))
        for k in range(5):
            pen.rect((k * 40 - 1, 0, k * 40 + 1, TILE), (150, 150, 146))
            pen.rect((0, k * 40 - 1, TILE, k * 40 + 1), (150, 150, 146))
    elif v == 1:  # warm brick pavers, running bond
        pen = _Pen(TILE, TILE, _texture(rng, (150, 130, 118), 3, 1.0, 2))
        cols = [(205, 150, 120), (190, 138, 110), (214, 162, 128), (198, 145, 116)]
        for row in range(8):
            off = 0 if row % 2 == 0 else 20
            for k in range(4):
                c = cols[int(rng.integers(len(cols)))]
                x0, y0 = k * 40 + off, row * 20
                pen.wrap(lambda dx, dy, x0=x0, y0=y0, c=c: pen.rect((x0 + dx + 1.5, y0 + dy + 1.5, x0 + dx + 38.5,
                                                                     y0 + dy + 18.5), c, r=2))
    else:  # pale cobbles
        pen = _Pen(TILE, TILE, _texture(rng, (160, 156, 148), 4, 1.5, 2))
        for gy in range(8):
            for gx in range(8):
                jx, jy = rng.uniform(-1.5, 1.5, 2)
                g = int(rng.integers(200, 226))
                c = (g, g - 4, g - 12)
                x0, y0 = gx * 20 + jx, gy * 20 + jy
                pen.wrap(lambda dx, dy, x0=x0, y0=y0, c=c: pen.ellipse((x0 + dx + 1.5, y0 + dy + 1.5,
                                                                        x0 + dx + 19, y0 + dy + 19), c))
    return pen.result()


def draw_traffic_street(v: int) -> Image.Image:
    rng = np.random.default_rng(200 + v)
    base = [(72, 74, 78), (64, 67, 74), (78, 76, 74)][v]
    pen = _Pen(TILE, TILE, _texture(rng, base, 4, 3.0, 5))
    if v == 1:  # light aggregate specks
        for _ in range(160):
            x, y = rng.uniform(0, TILE, 2)
            g = int(rng.integers(95, 125))
            pen.wrap(lambda dx, dy, x=x, y=y, g=g: pen.circle(x + dx, y + dy, 0.9, (g, g, g + 4)))
    elif v == 2:  # repair patches and tar cracks
        for _ in range(3):
            x, y = rng.uniform(0, TILE, 2)
            w, h = rng.uniform(25, 50, 2)
            pen.wrap(lambda dx, dy, x=x, y=y, w=w, h=h: pen.rect((x + dx, y + dy, x + dx + w, y + dy + h),
                                                                   (71, 70, 69), r=3))
        for _ in range(4):
            pts = [tuple(rng.uniform(0, TILE, 2))]
            for _ in range(4):
                px, py = pts[-1]
                pts.append((px + rng.uniform(-14, 14), py + rng.uniform(-14, 14)))
            pen.wrap(lambda dx, dy, pts=pts: pen.line([(x + dx, y + dy) for x, y in pts], (44, 44, 46), 1.2))
    return pen.result()


def draw_crossing(v: int) -> Image.Image:
    """Zebra bars running left–right (for a horizontal road); rotated 90° by the renderer for vertical roads."""
    rng = np.random.default_rng(300 + v)
    base = [(72, 74, 78), (70, 72, 76), (150, 62, 56)][v]
    pen = _Pen(TILE, TILE, _texture(rng, base, 4, 3.0, 5))
    period, bar = (20, 10) if v != 1 else (32, 18)
    white = (236, 236, 232) if v != 2 else (245, 240, 230)
    for k in range(TILE // period):
        y0 = k * period + (period - bar) / 2
        pen.rect((0, y0, TILE, y0 + bar), white)
    img = pen.result()
    if v == 1:  # worn paint: let the asphalt show through in places
        arr = np.asarray(img).astype(np.float64)
        wear = _periodic_noise(rng, TILE, TILE, 2.0) > 1.1
        asphalt = np.asarray(_texture(rng, base, 4, 3.0, 5)).astype(np.float64)
        arr[wear] = 0.6 * asphalt[wear] + 0.4 * arr[wear]
        img = Image.fromarray(arr.astype(np.uint8), "RGBA")
    return img


# -------------------------------------------------------------------------------------------- buildings -----
def _drop_shadow(pen: _Pen, box: Sequence[float], off: float, alpha: int = 90) -> None:
    x0, y0, x1, y1 = box
    with pen.layer():
        pen.poly([(x1, y0 + off * 0.3), (x1 + off, y0 + off), (x1 + off, y1 + off), (x0 + off, y1 + off),
                  (x0 + off * 0.3, y1), (x1, y1)], (0, 0, 0, alpha))


def _tree(pen: _Pen, cx: float, cy: float, r: float, green: RGB = (60, 130, 60)) -> None:
    with pen.layer():
        pen.circle(cx + 2, cy + 2, r, (0, 0, 0, 70))
    pen.circle(cx, cy, r, green)
    pen.circle(cx - r * 0.3, cy - r * 0.3, r * 0.45, _shade(green, 1.25))


def draw_house(v: int) -> Image.Image:
    rng = np.random.default_rng(400 + v)
    pen = _Pen(TILE, TILE, _texture(rng, (96, 158, 82), 6, 2.0, 4))
    pen.rect((72, 118, 88, TILE), (200, 190, 170))  # path to the street
    roof = [(196, 92, 62), (128, 88, 64), (96, 104, 120)][v]
    box = (22, 30, 138, 122)
    _drop_shadow(pen, box, 8)
    x0, y0, x1, y1 = box
    cy = (y0 + y1) / 2
    if v == 0:  # hip roof, four faces
        inset = (y1 - y0) / 2
        pen.poly([(x0, y0), (x1, y0), (x1 - inset, cy), (x0 + inset, cy)], _shade(roof, 1.12))
        pen.poly([(x0, y1), (x1, y1), (x1 - inset, cy), (x0 + inset, cy)], _shade(roof, 0.8))
        pen.poly([(x0, y0), (x0 + inset, cy), (x0, y1)], roof)
        pen.poly([(x1, y0), (x1 - inset, cy), (x1, y1)], _shade(roof, 0.9))
        pen.line([(x0 + inset, cy), (x1 - inset, cy)], _shade(roof, 0.6), 1.5)
    else:  # gable roof, ridge left–right, tile rows
        pen.rect((x0, y0, x1, cy), _shade(roof, 1.1))
        pen.rect((x0, cy, x1, y1), _shade(roof, 0.8))
        for k in range(1, 6):
            yy = y0 + k * (cy - y0) / 6
            pen.line([(x0, yy), (x1, yy)], _shade(roof, 0.95), 1.0, round_caps=False)
            yy2 = cy + k * (y1 - cy) / 6
            pen.line([(x0, yy2), (x1, yy2)], _shade(roof, 0.68), 1.0, round_caps=False)
        pen.line([(x0, cy), (x1, cy)], _shade(roof, 0.55), 2.0, round_caps=False)
    pen.rect((x0, y0, x1, y1), None, _shade(roof, 0.5), 1.5)
    pen.rect((100, 40, 114, 54), (150, 90, 80), (70, 50, 45), 1.5)  # chimney
    if v == 2:
        pen.rect((10, 128, 54, 152), (90, 180, 220), (230, 230, 230), 2.5, r=4)  # pool
        _tree(pen, 140, 140, 12)
    else:
        _tree(pen, 16, 140, 11)
        _tree(pen, 146, 16, 10, (70, 140, 70))
    return pen.result()


def _fuel_drop(pen: _Pen, cx: float, cy: float, s: float, color: RGB) -> None:
    pen.poly([(cx, cy - s), (cx - s * 0.62, cy + s * 0.15), (cx + s * 0.62, cy + s * 0.15)], color)
    pen.circle(cx, cy + s * 0.3, s * 0.64, color)


def draw_gas_station(v: int) -> Image.Image:
    rng = np.random.default_rng(500 + v)
    pen = _Pen(TILE, TILE, _texture(rng, (188, 188, 184), 4, 2.0, 3))
    main, accent = [((214, 40, 40), (255, 255, 255)), ((30, 140, 70), (250, 210, 40)),
                    ((30, 90, 190), (255, 255, 255))][v]
    for x in (36, 68, 100):  # pump islands (peek out under the canopy)
        pen.rect((x, 100, x + 24, 112), (235, 235, 235), (90, 90, 90), 1)
        pen.rect((x + 8, 102, x + 16, 110), main)
    canopy = (14, 16, 146, 98)
    _drop_shadow(pen, canopy, 7)
    pen.rect(canopy, main, _shade(main, 0.55), 2, r=3)
    pen.rect((14, 16, 146, 28), accent)
    pen.rect((14, 86, 146, 98), accent)
    _fuel_drop(pen, 80, 54, 20, accent)
    pen.rect((112, 118, 152, 150), (236, 232, 220), (110, 110, 110), 1.5)  # kiosk
    pen.rect((118, 124, 146, 132), main)
    pen.rect((6, 112, 16, 152), main, (40, 40, 40), 1)  # price sign
    for x in (30, 50, 70, 90):
        pen.line([(x, 124), (x, 152)], (250, 250, 250), 1.2, round_caps=False)
    return pen.result()


def draw_office(v: int) -> Image.Image:
    rng = np.random.default_rng(600 + v)
    pen = _Pen(TILE, TILE, _texture(rng, (150, 152, 158), 4, 2.0, 3))
    box = (14, 12, 138, 136)
    _drop_shadow(pen, box, 16, 110)
    x0, y0, x1, y1 = box
    if v == 0:  # blue glass curtain-wall roof
        pen.rect(box, (40, 70, 120), (28, 34, 48), 3)
        for i in range(4):
            for j in range(4):
                cx, cy = x0 + 8 + i * 28, y0 + 8 + j * 28
                c = _shade((70, 120, 190), 1.0 + 0.15 * ((i + j) % 2))
                pen.rect((cx, cy, cx + 24, cy + 24), c)
                pen.poly([(cx, cy), (cx + 24, cy), (cx, cy + 24)], _shade(c, 1.2))
        pen.rect((84, 84, 126, 126), (120, 124, 130), (60, 60, 66), 2)  # HVAC plant
        for k in range(3):
            pen.circle(96 + k * 12, 105, 4.5, (80, 84, 90))
    elif v == 1:  # concrete roof with helipad
        pen.rect(box, (112, 118, 128), (50, 52, 60), 3)
        pen.rect((x0 + 6, y0 + 6, x1 - 6, y1 - 6), None, (150, 156, 166), 2)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        pen.circle(cx, cy, 44, (60, 64, 72), (250, 210, 40), 4)
        pen.rect((cx - 20, cy - 22, cx - 12, cy + 22), (250, 250, 250))
        pen.rect((cx + 12, cy - 22, cx + 20, cy + 22), (250, 250, 250))
        pen.rect((cx - 12, cy - 4, cx + 12, cy + 4), (250, 250, 250))
    else:  # stepped teal tower with roof garden
        pen.rect(box, (30, 110, 120), (20, 40, 44), 3)
        pen.rect((30, 28, 122, 120), (50, 140, 150), (20, 60, 66), 2)
        pen.rect((46, 44, 106, 104), (80, 170, 176), (20, 70, 76), 2)
        pen.rect((56, 54, 96, 94), (80, 150, 80), (40, 90, 40), 2)
        _tree(pen, 68, 66, 7, (50, 120, 50))
        _tree(pen, 84, 82, 7, (60, 130, 60))
    return pen.result()


def _mini_car(pen: _Pen, x: float, y: float, w: float, h: float, color: RGB) -> None:
    pen.rect((x, y, x + w, y + h), color, _shade(color, 0.5), 1, r=3)
    pen.rect((x + 2, y + h * 0.25, x + w - 2, y + h * 0.45), (40, 50, 60))


def draw_garage(v: int) -> Image.Image:
    rng = np.random.default_rng(700 + v)
    deck = [(132, 134, 136), (118, 112, 104), (144, 140, 150)][v]
    pen = _Pen(TILE, TILE, _texture(rng, deck, 4, 2.0, 3))
    pen.rect((4, 4, 156, 156), None, _shade(deck, 0.6), 4)
    for row_y in (16, 92):
        for k in range(8):
            x = 12 + k * 17
            pen.line([(x, row_y), (x, row_y + 40)], (245, 245, 240), 1.5, round_caps=False)
    colors = [(200, 50, 50), (40, 90, 180), (230, 200, 60), (60, 150, 80), (220, 220, 220), (40, 40, 44)]
    spots = rng.choice(14, size=6, replace=False)
    for s in spots:
        row, k = divmod(int(s), 7)
        _mini_car(pen, 14 + k * 17, 20 + row * 76, 13, 32, colors[int(rng.integers(len(colors)))])
    pen.poly([(64, 66), (96, 66), (96, 60), (110, 70), (96, 80), (96, 74), (64, 74)], (245, 245, 240))  # lane arrow
    # parking sign: white "P" on a blue square
    sx, sy = [(116, 56), (16, 56), (66, 112)][v]
    pen.rect((sx, sy, sx + 30, sy + 30), (30, 80, 190), (255, 255, 255), 2, r=4)
    pen.rect((sx + 9, sy + 6, sx + 14, sy + 25), (255, 255, 255))
    pen.arc((sx + 7, sy + 6, sx + 23, sy + 18), -90, 90, (255, 255, 255), 5)
    pen.rect((sx + 9, sy + 6, sx + 15, sy + 8.5), (255, 255, 255))
    pen.rect((sx + 9, sy + 15.5, sx + 15, sy + 18), (255, 255, 255))
    return pen.result()


def draw_store(v: int) -> Image.Image:
    rng = np.random.default_rng(800 + v)
    pen = _Pen(TILE, TILE, _texture(rng, (196, 192, 184), 3, 2.0, 3))
    roof = [(236, 226, 204), (222, 222, 214), (240, 220, 222)][v]
    stripes = [((226, 70, 40), (255, 250, 240)), ((40, 150, 80), (255, 250, 240)),
               ((150, 60, 160), (250, 190, 60))][v]
    box = (10, 10, 150, 120)
    _drop_shadow(pen, box, 7)
    pen.rect(box, roof, _shade(roof, 0.6), 2)
    for x in (24, 112):  # roof units
        pen.rect((x, 22, x + 22, 40), (170, 170, 170), (100, 100, 100), 1)
    # shopping bag glyph
    pen.rect((62, 44, 98, 84), stripes[0], _shade(stripes[0], 0.6), 1.5, r=3)
    pen.arc((69, 32, 91, 56), 180, 360, _shade(stripes[0], 0.6), 3)
    # striped awning over the shop front
    n = 10
    for k in range(n):
        c = stripes[k % 2]
        x = 6 + k * 148 / n
        pen.poly([(x, 112), (x + 148 / n, 112), (x + 148 / n, 134), (x, 134)], c)
        pen.poly([(x, 134), (x + 148 / n, 134), (x + 148 / (2 * n), 140)], _shade(c, 0.85))
    pen.line([(6, 112), (154, 112)], _shade(stripes[0], 0.5), 1.5, round_caps=False)
    for x in (30, 130):  # planters
        _tree(pen, x, 150, 6, (70, 140, 60))
    return pen.result()


# ----------------------------------------------------------------------------------------------- cars -----
CAR_W, CAR_H, BUS_H = 96, 168, 240


def _car_body(pen: _Pen, body: RGB, *, h: float = CAR_H, cabin: RGB | None = None, sporty: bool = False,
              van: bool = False) -> tuple[float, float]:
    """A car seen from above, head up. Returns the (top, bottom) y of the roof panel for decorations."""
    w = CAR_W
    dark = _shade(body, 0.55)
    pen.rect((4, 22, 12, 46), (30, 30, 32), r=2)  # wheels peek out
    pen.rect((w - 12, 22, w - 4, 46), (30, 30, 32), r=2)
    pen.rect((4, h - 50, 12, h - 26), (30, 30, 32), r=2)
    pen.rect((w - 12, h - 50, w - 4, h - 26), (30, 30, 32), r=2)
    radius = 14 if van else (30 if sporty else 22)
    pen.rect((8, 4, w - 8, h - 4), body, dark, 2, r=radius)
    glass = (38, 52, 68)
    ws_top, ws_bot = (30, 46) if van else ((52, 74) if sporty else (46, 68))
    pen.poly([(18, ws_top), (w - 18, ws_top), (w - 23, ws_bot), (23, ws_bot)], glass)
    pen.poly([(26, ws_top + 3), (40, ws_top + 3), (34, ws_bot - 4)], (110, 130, 150))  # glare
    roof_top, roof_bot = ws_bot, (h - 34 if van else h - 48)
    pen.rect((22, roof_top, w - 22, roof_bot), cabin or _shade(body, 1.08), None, 0, r=6)
    if not van:
        pen.poly([(22, roof_bot), (w - 22, roof_bot), (w - 18, roof_bot + 16), (18, roof_bot + 16)], glass)
    pen.rect((12, 54, 18, 64) if not van else (12, 38, 18, 48), dark, r=2)  # mirrors
    pen.rect((w - 18, 54, w - 12, 64) if not van else (w - 18, 38, w - 12, 48), dark, r=2)
    pen.ellipse((16, 7, 32, 15), (255, 246, 200), dark, 1)  # headlights
    pen.ellipse((w - 32, 7, w - 16, 15), (255, 246, 200), dark, 1)
    pen.rect((16, h - 12, 32, h - 7), (210, 30, 30))  # tail lights
    pen.rect((w - 32, h - 12, w - 16, h - 7), (210, 30, 30))
    return roof_top, roof_bot


def _finish(pen: _Pen) -> Image.Image:
    return _outlined(pen.result(), 2)


def _cross(pen: _Pen, cx: float, cy: float, arm: float, thick: float, color: RGB) -> None:
    pen.rect((cx - thick / 2, cy - arm, cx + thick / 2, cy + arm), color)
    pen.rect((cx - arm, cy - thick / 2, cx + arm, cy + thick / 2), color)


def _lightbar(pen: _Pen, y: float, left: RGB = (230, 30, 30), right: RGB = (30, 90, 240)) -> None:
    pen.rect((22, y, 48, y + 10), left, (30, 30, 30), 1, r=2)
    pen.rect((48, y, 74, y + 10), right, (30, 30, 30), 1, r=2)


def draw_car(v: int) -> Image.Image:
    body = [(46, 98, 200), (176, 182, 190), (40, 120, 80)][v]
    pen = _Pen(CAR_W, CAR_H)
    _car_body(pen, body)
    if v == 1:
        pen.rect((30, 84, 66, 110), None, (120, 124, 130), 1.5, r=3)  # sunroof
    return _finish(pen)


def draw_ambulance(v: int) -> Image.Image:
    body, stripe, cross = [((250, 250, 250), (220, 30, 30), (220, 30, 30)),
                           ((240, 230, 60), (40, 160, 70), (40, 160, 70)),
                           ((250, 250, 250), (245, 130, 30), (30, 90, 210))][v]
    pen = _Pen(CAR_W, CAR_H)
    top, bot = _car_body(pen, body, van=True, cabin=body)
    if v == 1:  # checker band along both sides
        for k in range(9):
            c = stripe if k % 2 == 0 else body
            pen.rect((10, 50 + k * 12, 20, 62 + k * 12), c)
            pen.rect((CAR_W - 20, 50 + k * 12, CAR_W - 10, 62 + k * 12), c)
    else:
        pen.rect((10, 50, 18, CAR_H - 16), stripe)
        pen.rect((CAR_W - 18, 50, CAR_W - 10, CAR_H - 16), stripe)
    _lightbar(pen, top + 2, (230, 30, 30), (30, 90, 240))
    _cross(pen, CAR_W / 2, (top + bot) / 2 + 10, 24, 12, cross)
    return _finish(pen)


def draw_bus(v: int) -> Image.Image:
    body = [(250, 196, 30), (210, 40, 40), (40, 110, 200)][v]
    pen = _Pen(CAR_W, BUS_H)
    dark = _shade(body, 0.55)
    pen.rect((6, 4, CAR_W - 6, BUS_H - 4), body, dark, 2, r=12)
    pen.rect((14, 10, CAR_W - 14, 26), (38, 52, 68), r=3)  # windscreen
    pen.ellipse((14, 6, 28, 12), (255, 246, 200))
    pen.ellipse((CAR_W - 28, 6, CAR_W - 14, 12), (255, 246, 200))
    for k in range(12):  # side window strips
        y = 36 + k * 16
        pen.rect((8, y, 15, y + 12), (38, 52, 68))
        pen.rect((CAR_W - 15, y, CAR_W - 8, y + 12), (38, 52, 68))
    roof = _shade(body, 1.15) if v != 2 else (240, 240, 240)
    pen.rect((20, 34, CAR_W - 20, BUS_H - 16), roof, None, 0, r=6)
    if v == 0:  # school-bus black stripes
        pen.rect((6, 120, CAR_W - 6, 124), (30, 30, 30))
    for y in (60, 150):  # roof hatches / AC units
        pen.rect((32, y, CAR_W - 32, y + 26), (190, 190, 194), (110, 110, 114), 1.5, r=3)
    pen.rect((16, BUS_H - 12, 30, BUS_H - 7), (210, 30, 30))
    pen.rect((CAR_W - 30, BUS_H - 12, CAR_W - 16, BUS_H - 7), (210, 30, 30))
    return _finish(pen)


def draw_police(v: int) -> Image.Image:
    body, doors = [((28, 28, 32), (250, 250, 250)), ((250, 250, 250), (30, 70, 170)),
                   ((24, 36, 80), (24, 36, 80))][v]
    pen = _Pen(CAR_W, CAR_H)
    top, bot = _car_body(pen, body)
    pen.rect((9, 70, 22, 118), doors)
    pen.rect((CAR_W - 22, 70, CAR_W - 9, 118), doors)
    if v == 2:  # blue–yellow checker band
        for k in range(6):
            c = (250, 210, 40) if k % 2 == 0 else (40, 90, 220)
            pen.rect((9, 66 + k * 9, 21, 75 + k * 9), c)
            pen.rect((CAR_W - 21, 66 + k * 9, CAR_W - 9, 75 + k * 9), c)
    pen.rect((22, top, CAR_W - 22, bot), doors if v != 2 else (240, 240, 240), None, 0, r=6)
    _lightbar(pen, (top + bot) / 2 - 5)
    # six-point star badge on the bonnet
    cx, cy, r = CAR_W / 2, 27, 9
    tri = lambda a: [(cx + r * np.sin(np.radians(a + k * 120)), cy - r * np.cos(np.radians(a + k * 120)))
                     for k in range(3)]
    pen.poly(tri(0), (240, 190, 40))
    pen.poly(tri(60), (240, 190, 40))
    return _finish(pen)


def draw_tiro(v: int) -> Image.Image:
    body = [(236, 236, 226), (150, 200, 230), (246, 230, 170)][v]
    pen = _Pen(CAR_W, CAR_H)
    top, bot = _car_body(pen, body)
    cx, cy = CAR_W / 2, (top + bot) / 2 + 6
    if v == 1:  # Japanese novice-driver chevron: yellow | green
        pen.poly([(cx - 22, cy - 26), (cx, cy - 14), (cx, cy + 26), (cx - 22, cy + 14)], (250, 210, 30),
                 (30, 30, 30), 1.2)
        pen.poly([(cx + 22, cy - 26), (cx, cy - 14), (cx, cy + 26), (cx + 22, cy + 14)], (40, 160, 70),
                 (30, 30, 30), 1.2)
    else:  # learner plate: big "L"
        plate, letter = ((255, 255, 255), (220, 30, 30)) if v == 0 else ((40, 160, 70), (255, 255, 255))
        pen.rect((cx - 22, cy - 22, cx + 22, cy + 22), plate, (30, 30, 30), 1.5, r=4)
        pen.rect((cx - 12, cy - 15, cx - 3, cy + 15), letter)
        pen.rect((cx - 12, cy + 6, cx + 13, cy + 15), letter)
    return _finish(pen)


def draw_reckless(v: int) -> Image.Image:
    body, deco = [((214, 30, 36), (255, 255, 255)), ((26, 26, 30), (250, 140, 20)),
                  ((130, 220, 40), (20, 20, 20))][v]
    pen = _Pen(CAR_W, CAR_H)
    pen.rect((2, 20, 14, 50), (24, 24, 26), r=3)  # fat tyres
    pen.rect((CAR_W - 14, 20, CAR_W - 2, 50), (24, 24, 26), r=3)
    pen.rect((2, CAR_H - 54, 14, CAR_H - 22), (24, 24, 26), r=3)
    pen.rect((CAR_W - 14, CAR_H - 54, CAR_W - 2, CAR_H - 22), (24, 24, 26), r=3)
    top, bot = _car_body(pen, body, sporty=True)
    if v == 1:  # flames from the nose
        for x, ln in ((30, 46), (48, 60), (66, 46)):
            pen.poly([(x - 10, 8), (x + 10, 8), (x + 3, 8 + ln * 0.6), (x + 6, 8 + ln), (x - 2, 8 + ln * 0.7),
                      (x - 7, 8 + ln * 0.9)], deco)
            pen.poly([(x - 5, 8), (x + 5, 8), (x + 1, 8 + ln * 0.55), (x - 3, 8 + ln * 0.65)], (250, 220, 60))
    else:  # twin racing stripes over the whole length
        for x in (38, 52):
            pen.rect((x, 4, x + 6, CAR_H - 4), deco)
    pen.rect((10, CAR_H - 22, CAR_W - 10, CAR_H - 14), _shade(body, 0.45), r=2)  # rear spoiler
    return _finish(pen)


# ------------------------------------------------------------------------------------------ pedestrians -----
PED_W, PED_H = 96, 128
SKIN = [(236, 196, 160), (196, 140, 100), (140, 96, 64)]


def _walker(pen: _Pen, *, skin: RGB, shirt: RGB, pants: RGB, head: tuple[float, float, float],
            shoulder: tuple[float, float], hip: tuple[float, float], feet: Sequence[tuple[float, float]],
            hands: Sequence[tuple[float, float]], limb: float = 9, torso_w: float = 20) -> None:
    """A side-view walking pictogram facing right: back limbs first, then torso, head, front limbs."""
    back_c, front_c = _shade(pants, 0.8), pants
    pen.line([hip, feet[0]], back_c, limb)
    pen.line([shoulder, hands[0]], _shade(shirt, 0.78), limb * 0.8)
    sx, sy = shoulder
    hx, hy = hip
    pen.poly([(sx - torso_w / 2, sy - 2), (sx + torso_w / 2, sy - 2), (hx + torso_w / 2 - 2, hy + 2),
              (hx - torso_w / 2 + 2, hy + 2)], shirt)
    pen.circle(sx, sy, torso_w / 2, shirt)
    pen.line([hip, feet[1]], front_c, limb)
    for f in feet:
        pen.ellipse((f[0] - 3, f[1] - 4, f[0] + 9, f[1] + 3), (30, 30, 30))
    pen.line([shoulder, hands[1]], shirt, limb * 0.8)
    pen.circle(hands[1][0], hands[1][1], limb * 0.45, skin)
    cx, cy, r = head
    pen.circle(cx, cy, r, skin)


def draw_pedestrian(v: int) -> Image.Image:
    shirt = [(40, 110, 220), (220, 70, 50), (60, 160, 90)][v]
    pants = [(40, 44, 70), (70, 70, 80), (120, 90, 60)][v]
    pen = _Pen(PED_W, PED_H)
    skin = SKIN[v]
    _walker(pen, skin=skin, shirt=shirt, pants=pants, head=(52, 16, 12), shoulder=(48, 40), hip=(48, 76),
            feet=[(22, 118), (72, 118)], hands=[(26, 64), (74, 62)])
    pen.arc((39, 2, 65, 22), 180, 360, (60, 40, 30), 6)  # hair
    if v == 2:  # shoulder bag
        pen.line([(44, 30), (58, 68)], (90, 60, 30), 3)
        pen.rect((52, 62, 68, 78), (150, 100, 50), (80, 50, 20), 1.5, r=2)
    return _finish(pen)


def draw_old(v: int) -> Image.Image:
    shirt = [(160, 140, 110), (150, 130, 170), (120, 130, 90)][v]
    pants = [(90, 80, 70), (70, 70, 90), (80, 80, 80)][v]
    pen = _Pen(PED_W, PED_H)
    skin = SKIN[v]
    # stooped: shoulders and head forward of the hips
    _walker(pen, skin=skin, shirt=shirt, pants=pants, head=(62, 24, 11), shoulder=(52, 44), hip=(44, 80),
            feet=[(26, 120), (58, 120)], hands=[(34, 70), (72, 66)], limb=8)
    pen.arc((50, 11, 74, 31), 160, 380, (225, 225, 225), 6)  # white hair
    pen.line([(72, 66), (80, 122)], (110, 70, 30), 4)  # cane
    pen.arc((66, 60, 80, 72), 180, 360, (110, 70, 30), 4)
    return _finish(pen)


def draw_young(v: int) -> Image.Image:
    shirt = [(250, 190, 30), (240, 90, 150), (40, 190, 200)][v]
    pants = [(50, 90, 200), (60, 60, 70), (230, 110, 40)][v]
    bag = [(220, 50, 50), (60, 160, 70), (120, 70, 200)][v]
    pen = _Pen(PED_W, PED_H)
    skin = SKIN[(v + 1) % 3]
    pen.rect((24, 46, 40, 76), bag, _shade(bag, 0.6), 1.5, r=4)  # backpack (on the back = left)
    _walker(pen, skin=skin, shirt=shirt, pants=pants, head=(50, 27, 18), shoulder=(48, 58), hip=(48, 86),
            feet=[(28, 120), (68, 120)], hands=[(30, 80), (70, 76)], limb=9, torso_w=22)
    if v == 0:  # cap with a visor pointing forward
        pen.arc((32, 9, 68, 45), 180, 360, (200, 40, 40), 10)
        pen.rect((60, 18, 76, 24), (200, 40, 40), r=2)
    else:
        pen.arc((32, 9, 68, 45), 180, 360, (70, 45, 30), 8)
    return _finish(pen)


DRAWERS: dict[str, Callable[[int], Image.Image]] = {
    "walking_street": draw_walking_street, "traffic_street": draw_traffic_street, "crossing": draw_crossing,
    "house": draw_house, "gas_station": draw_gas_station, "office": draw_office, "garage": draw_garage,
    "store": draw_store, "pedestrian": draw_pedestrian, "old": draw_old, "young": draw_young, "car": draw_car,
    "ambulance": draw_ambulance, "bus": draw_bus, "police": draw_police, "tiro": draw_tiro,
    "reckless": draw_reckless,
}
assert set(DRAWERS) == set(SEMANTICS)


def default_icon_name(semantic: str, k: int) -> str:
    return f"{semantic}/default_{k}.png"


def draw_all(out_dir: Path, semantics: Sequence[str] = SEMANTICS) -> list[Path]:
    """Draw every variant of every semantic into ``out_dir/<semantic>/default_<k>.png``."""
    written = []
    for sem in semantics:
        for k in range(N_VARIANTS):
            path = out_dir / default_icon_name(sem, k)
            path.parent.mkdir(parents=True, exist_ok=True)
            DRAWERS[sem](k).save(path, optimize=False, compress_level=9)
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else DEFAULT_ICON_DIR
    paths = draw_all(out)
    print(f"wrote {len(paths)} icons to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
