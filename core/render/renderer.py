"""Frame renderer: static city + agent icons → RGB image, plus each agent's box in image coordinates.

Why this shape: the static map is composed once per (map, icon set, scale) and cached; a frame only copies the
cached background (or a crop of it) and alpha-blends a few dozen small, pre-scaled, pre-rotated sprites, so a
frame costs one copy and those blends however large the map. Boxes come from the same placement computation, so
the VAP labels always match the pixels.

Conventions (docs/reference.md#rendering, deviations in docs/rendering.md):

* image x = column · ppc, y = row · ppc; boxes are ``(x1, y1, x2, y2)`` with ``x2``/``y2`` exclusive, in the
  coordinates of the returned (cropped) image, *not* clipped (a box may stick out of the image); agents whose
  box does not touch the image are omitted.
* icon short side: cars 6·ppc, pedestrians 4·ppc, street tiles and buildings 10·ppc (long side at most
  18·ppc for cars and 6·ppc for pedestrians).
* cars are rotated to their heading with the head at the cell edge in the moving direction; pedestrians are
  centred on their cell and mirrored for Left/Down; heading ``NONE`` keeps the previous frame's orientation.
* each agent keeps one icon variant for the whole episode, drawn from ``seed`` and its index.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from PIL import Image

from core.base.codes import BUILDING_CODES, Heading, Kind
from core.base.world import WorldSnapshot
from core.render.icons import IconSet
from core.render.semantics import BUILDING_SEMANTIC_BY_CODE, SEMANTICS, agent_semantic, is_car_semantic

# scipy.ndimage is imported when a static map is drawn: core/render/sheet.py imports this module without drawing one.

Box = tuple[int, int, int, int]
Crop = tuple[int, int, int, int]  # (row0, col0, rows, cols) in cells

#: Colour of cells that are neither street nor building (empty land in user maps).
GROUND_RGB = (178, 196, 158)
#: Mid-lane marking colour (gold, as the reference; docs/reference.md#static-map-rendering).
MIDLINE_RGB = (255, 215, 0)
#: Icon short side in cells (docs/reference.md#static-map-rendering).
CAR_CELLS, PEDESTRIAN_CELLS, TILE_CELLS = 6, 4, 10
#: Longest side allowed, in cells: a tall pedestrian pictogram or a very long bus is scaled down to fit.
CAR_MAX_CELLS, PEDESTRIAN_MAX_CELLS = 18, 6

_LEFT, _RIGHT, _UP, _DOWN = int(Heading.LEFT), int(Heading.RIGHT), int(Heading.UP), int(Heading.DOWN)


@dataclass(frozen=True)
class Placement:
    """How one agent was drawn (kept so a later frame can reuse it when the heading is NONE)."""

    semantic: str
    variant: int
    orientation: int      # Heading value used (LEFT/RIGHT/UP/DOWN)
    box: Box              # full-map pixel coordinates


@dataclass
class Frame:
    """One rendered image. ``boxes``/``semantics``/``orientations`` are keyed by agent index."""

    image: np.ndarray                                  # uint8 [H, W, 3]
    boxes: dict[int, Box]
    step: int
    crop: Crop
    px_per_cell: int
    placements: dict[int, Placement] = field(default_factory=dict)

    @property
    def semantics(self) -> dict[int, str]:
        """Icon semantic (detailed type) of every drawn agent."""
        return {i: p.semantic for i, p in self.placements.items() if i in self.boxes}

    def inside(self, i: int) -> bool:
        """True when agent ``i``'s whole box lies within the image (the reference drops frames otherwise)."""
        x1, y1, x2, y2 = self.boxes[i]
        h, w = self.image.shape[:2]
        return x1 >= 0 and y1 >= 0 and x2 <= w and y2 <= h

    def save(self, path) -> None:
        Image.fromarray(self.image, "RGB").save(path)


def _resize(rgba: np.ndarray, w: int, h: int) -> np.ndarray:
    return np.asarray(Image.fromarray(rgba, "RGBA").resize((max(1, w), max(1, h)), Image.Resampling.LANCZOS))


def _scale_short(rgba: np.ndarray, short: int, max_long: int | None = None) -> np.ndarray:
    """Scale so the shorter side is ``short`` px, unless the longer side would exceed ``max_long``."""
    h, w = rgba.shape[:2]
    s = short / min(h, w)
    if max_long is not None and max(h, w) * s > max_long:
        s = max_long / max(h, w)
    return _resize(rgba, round(w * s), round(h * s))


def _over(dst: np.ndarray, rgba: np.ndarray) -> None:
    """Alpha-composite an RGBA array of the same height/width onto an RGB uint8 array, in place."""
    a = rgba[..., 3:4].astype(np.float32) * (1.0 / 255.0)
    dst[...] = (dst.astype(np.float32) * (1.0 - a) + rgba[..., :3].astype(np.float32) * a + 0.5).astype(np.uint8)


class _Sprite:
    """A pre-scaled, pre-oriented agent icon, stored premultiplied for a fast blend."""

    __slots__ = ("h", "w", "rgb_a", "inv_a")

    def __init__(self, rgba: np.ndarray) -> None:
        self.h, self.w = rgba.shape[:2]
        a = rgba[..., 3:4].astype(np.float32) * (1.0 / 255.0)
        self.rgb_a = rgba[..., :3].astype(np.float32) * a + 0.5
        self.inv_a = 1.0 - a

    def paste(self, img: np.ndarray, x: int, y: int) -> None:
        H, W = img.shape[:2]
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + self.w, W), min(y + self.h, H)
        if x0 >= x1 or y0 >= y1:
            return
        sx, sy = x0 - x, y0 - y
        sub = (slice(sy, sy + y1 - y0), slice(sx, sx + x1 - x0))
        region = img[y0:y1, x0:x1]
        region[...] = (region * self.inv_a[sub] + self.rgb_a[sub]).astype(np.uint8)


class Renderer:
    """Renders a :class:`core.map.model.CityMap` and world snapshots with an :class:`IconSet`.

    ``seed`` fixes every random choice (tile and building variants, each agent's icon variant), so the same
    inputs and seed give identical pixels. ``icons`` None means :meth:`IconSet.default` (default art replaced by
    the accepted icons of the user's library).
    """

    def __init__(self, city, icons: IconSet | None = None, px_per_cell: int = 8, seed: int = 0) -> None:
        if px_per_cell < 1:
            raise ValueError("px_per_cell must be >= 1")
        self.city = city
        self.icons = icons if icons is not None else IconSet.default()
        self.ppc = int(px_per_cell)
        self.seed = int(seed)
        self._background: np.ndarray | None = None
        self._sprites: dict[tuple[str, int, int], _Sprite] = {}
        self._variant_cache: dict[tuple[int, str, int], int] = {}

    # ------------------------------------------------------------------------------------------ public ----
    def set_icons(self, icons: IconSet) -> None:
        """Use a new icon set (e.g. after an icon was accepted); caches are rebuilt lazily."""
        self.icons = icons
        self._background = None
        self._sprites.clear()
        self._variant_cache.clear()

    @property
    def image_size(self) -> tuple[int, int]:
        """(height, width) in pixels of an uncropped frame."""
        return self.city.height * self.ppc, self.city.width * self.ppc

    def background(self, crop: Crop | None = None) -> np.ndarray:
        """The static map (no agents) as uint8 ``[H, W, 3]``; a fresh array the caller may modify."""
        bg = self._static()
        if crop is None:
            return bg.copy()
        return self._crop(bg, crop)

    def render(self, snapshot: WorldSnapshot, previous: Frame | None = None, crop: Crop | None = None,
               headings: Sequence[int] | np.ndarray | None = None) -> Frame:
        """Draw ``snapshot`` on the static map.

        ``headings`` overrides ``snapshot.headings`` (VAP uses the upcoming move k → k+1,
        docs/reference.md#vap-samples); ``previous`` is the frame before, whose orientations are kept for agents with
        heading NONE.
        """
        p = self.ppc
        crop = crop if crop is not None else (0, 0, self.city.height, self.city.width)
        img = self._crop(self._static(), crop)
        oy, ox = crop[0] * p, crop[1] * p
        hd = np.asarray(snapshot.headings if headings is None else headings, dtype=np.int64)
        agents = snapshot.agents
        if hd.shape != (len(agents),):
            raise ValueError("headings must have one entry per agent")
        boxes: dict[int, Box] = {}
        placements: dict[int, Placement] = {}
        # cars first, then pedestrians on top: a pedestrian on a crossing stays visible under a long car icon
        order = sorted(range(len(agents)), key=lambda i: (int(agents.kinds[i]) != Kind.CAR, i))
        for i in order:
            sem = agent_semantic(int(agents.kinds[i]), agents.concept_names(i))
            variant = self._variant(i, sem)
            orient = int(hd[i])
            if orient == Heading.NONE:
                prev = previous.placements.get(i) if previous is not None else None
                orient = prev.orientation if prev is not None else (_UP if is_car_semantic(sem) else _RIGHT)
            sprite = self._sprite(sem, variant, orient)
            r, c = (int(v) for v in snapshot.positions[i])
            x, y = self._anchor(sem, orient, r, c, sprite)
            sprite.paste(img, x - ox, y - oy)
            placements[i] = Placement(sem, variant, orient, (x, y, x + sprite.w, y + sprite.h))
            bx1, by1, bx2, by2 = x - ox, y - oy, x - ox + sprite.w, y - oy + sprite.h
            if bx2 > 0 and by2 > 0 and bx1 < img.shape[1] and by1 < img.shape[0]:
                boxes[i] = (bx1, by1, bx2, by2)
        row0, col0, rows, cols = (int(v) for v in crop)
        return Frame(img, boxes, int(snapshot.step), (row0, col0, rows, cols), p, placements)

    def sprite_rgba(self, semantic: str, variant: int, heading: int) -> np.ndarray:
        """An agent icon scaled and oriented as the renderer draws it (for the map view's sprites)."""
        base = scale_agent_icon(self.icons.variants(semantic)[variant], semantic, self.ppc)
        if is_car_semantic(semantic):
            return _orient_car(base, heading)
        return base[:, ::-1] if heading in (_LEFT, _DOWN) else base

    def agent_variant(self, index: int, semantic: str) -> int:
        return self._variant(index, semantic)

    # --------------------------------------------------------------------------------------- internals ----
    def _variant(self, i: int, sem: str) -> int:
        n = self.icons.count(sem)
        key = (i, sem, n)
        v = self._variant_cache.get(key)
        if v is None:
            rng = np.random.default_rng([self.seed, i, SEMANTICS.index(sem)])
            v = int(rng.integers(n))
            self._variant_cache[key] = v
        return v

    def _sprite(self, sem: str, variant: int, orient: int) -> _Sprite:
        key = (sem, variant, orient)
        s = self._sprites.get(key)
        if s is None:
            s = _Sprite(np.ascontiguousarray(self.sprite_rgba(sem, variant, orient)))
            self._sprites[key] = s
        return s

    def _anchor(self, sem: str, orient: int, r: int, c: int, s: _Sprite) -> tuple[int, int]:
        """Top-left pixel of the sprite: cars head-aligned to the cell edge they move towards, else centred."""
        p = self.ppc
        cx, cy = c * p, r * p
        midx, midy = cx + (p - s.w) // 2, cy + (p - s.h) // 2
        if not is_car_semantic(sem):
            return midx, midy
        if orient == _UP:
            return midx, cy
        if orient == _DOWN:
            return midx, cy + p - s.h
        if orient == _RIGHT:
            return cx + p - s.w, midy
        return cx, midy  # LEFT

    def _crop(self, bg: np.ndarray, crop: Crop) -> np.ndarray:
        """Copy of the crop (cells) of ``bg``; parts outside the map are black."""
        p = self.ppc
        r0, c0, rows, cols = crop
        if rows <= 0 or cols <= 0:
            raise ValueError("crop must have positive rows and cols")
        out_h, out_w = rows * p, cols * p
        y0, x0 = r0 * p, c0 * p
        H, W = bg.shape[:2]
        if y0 >= 0 and x0 >= 0 and y0 + out_h <= H and x0 + out_w <= W:
            return bg[y0:y0 + out_h, x0:x0 + out_w].copy()
        out = np.zeros((out_h, out_w, 3), np.uint8)
        sy0, sx0, sy1, sx1 = max(y0, 0), max(x0, 0), min(y0 + out_h, H), min(x0 + out_w, W)
        if sy0 < sy1 and sx0 < sx1:
            out[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = bg[sy0:sy1, sx0:sx1]
        return out

    def _static(self) -> np.ndarray:
        if self._background is None:
            self._background = compose_static(self.city, self.icons, self.ppc, self.seed)
            self._background.setflags(write=False)
        return self._background


def scale_agent_icon(rgba: np.ndarray, semantic: str, px_per_cell: int) -> np.ndarray:
    """An agent icon (car art pointing up, pedestrian facing right) at the size the renderer draws it."""
    if is_car_semantic(semantic):
        return _scale_short(rgba, CAR_CELLS * px_per_cell, CAR_MAX_CELLS * px_per_cell)
    return _scale_short(rgba, PEDESTRIAN_CELLS * px_per_cell, PEDESTRIAN_MAX_CELLS * px_per_cell)


def _orient_car(base: np.ndarray, heading: int) -> np.ndarray:
    """Car art points up; rotate to the heading (np.rot90 k counter-clockwise quarter turns)."""
    k = {_UP: 0, _LEFT: 1, _DOWN: 2, _RIGHT: 3}.get(int(heading), 0)
    return np.ascontiguousarray(np.rot90(base, k))


# ------------------------------------------------------------------------------------------- static map -----
def _upsample(mask: np.ndarray, p: int) -> np.ndarray:
    return np.repeat(np.repeat(mask, p, axis=0), p, axis=1)


def _tiled(tile_rgba: np.ndarray, tile_px: int, h: int, w: int) -> np.ndarray:
    t = _resize(tile_rgba, tile_px, tile_px)[..., :3]
    reps = (-(-h // tile_px), -(-w // tile_px), 1)
    return np.tile(t, reps)[:h, :w]


def _crossing_vertical_traffic(street: np.ndarray) -> np.ndarray:
    """Per crossing cell: True where the road through it runs vertically (zebra bars must then run up–down).

    A crossing component whose left/right neighbours are mostly traffic lies on a horizontal road.
    """
    from scipy import ndimage

    cross = street == -1.0
    out = np.zeros_like(cross)
    lab, n = ndimage.label(cross)
    drivable = (street == 2.0) | (street == 2.5)
    H, W = street.shape
    for k, sl in enumerate(ndimage.find_objects(lab), start=1):
        rs, cs = sl
        horiz = vert = 0
        if cs.start > 0:
            horiz += int(drivable[rs, cs.start - 1].sum())
        if cs.stop < W:
            horiz += int(drivable[rs, cs.stop].sum())
        if rs.start > 0:
            vert += int(drivable[rs.start - 1, cs].sum())
        if rs.stop < H:
            vert += int(drivable[rs.stop, cs].sum())
        if vert > horiz:
            out[sl] |= lab[sl] == k
    return out


def _building_lots(city) -> list[tuple[str, int, int, int, int]]:
    """(semantic, row, col, rows, cols) of every building: from the spec, or connected components of the layer."""
    lots = []
    if city.buildings:
        for b in city.buildings:
            code = BUILDING_CODES.get(b.kind)
            if code in BUILDING_SEMANTIC_BY_CODE:
                lots.append((BUILDING_SEMANTIC_BY_CODE[code], b.row, b.col, b.rows, b.cols))
        return lots
    from scipy import ndimage

    for code, sem in BUILDING_SEMANTIC_BY_CODE.items():
        lab, _ = ndimage.label(city.building == code)
        for sl in ndimage.find_objects(lab):
            if sl is not None:
                lots.append((sem, sl[0].start, sl[1].start, sl[0].stop - sl[0].start, sl[1].stop - sl[1].start))
    return lots


def compose_static(city, icons: IconSet, px_per_cell: int, seed: int) -> np.ndarray:
    """The static map image ``[H·p, W·p, 3]``: ground, street tiles, crossings, mid lanes, buildings."""
    p = px_per_cell
    H, W = city.height * p, city.width * p
    rng = np.random.default_rng([seed, 0x5717])
    img = np.empty((H, W, 3), np.uint8)
    img[...] = GROUND_RGB
    street = np.asarray(city.street)
    tile_px = TILE_CELLS * p

    def pick(sem: str) -> np.ndarray:
        vs = icons.variants(sem)
        return vs[int(rng.integers(len(vs)))]

    walking_tile, traffic_tile, crossing_tile = pick("walking_street"), pick("traffic_street"), pick("crossing")
    for mask_cells, tile in (((street == 1.0), walking_tile), ((street == 2.0) | (street == 2.5), traffic_tile)):
        if mask_cells.any():
            m = _upsample(mask_cells, p)
            img[m] = _tiled(tile, tile_px, H, W)[m]
    cross = street == -1.0
    if cross.any():
        vert = _crossing_vertical_traffic(street)
        for cells, t in ((cross & ~vert, crossing_tile), (cross & vert, np.ascontiguousarray(np.rot90(crossing_tile)))):
            if cells.any():
                m = _upsample(cells, p)
                img[m] = _tiled(t, tile_px, H, W)[m]
    mid = np.asarray(city.midline, dtype=bool) | (street == 2.5)
    if mid.any():
        # a thin centred stripe along each run rather than the whole cell (easier to read at 8 px/cell)
        stripe = np.zeros((p, p), bool)
        lo, hi = (p - max(2, p // 4)) // 2, (p - max(2, p // 4)) // 2 + max(2, p // 4)
        horiz = np.zeros_like(mid)
        horiz[:, 1:] |= mid[:, 1:] & mid[:, :-1]
        horiz[:, :-1] |= mid[:, :-1] & mid[:, 1:]
        for cells, pattern in ((mid & horiz, "h"), (mid & ~horiz, "v")):
            stripe[:] = False
            if pattern == "h":
                stripe[lo:hi, :] = True
            else:
                stripe[:, lo:hi] = True
            m = np.kron(cells, stripe).astype(bool)
            img[m] = MIDLINE_RGB
    for sem, r, c, rows, cols in _building_lots(city):
        vs = icons.variants(sem)
        _paste_building(img, vs, rng, r * p, c * p, rows * p, cols * p)
    return img


def _paste_building(img: np.ndarray, variants: Sequence[np.ndarray], rng: np.random.Generator, y: int, x: int,
                    h: int, w: int) -> None:
    """Fill a lot with building icons; a long lot gets ``round(long/short)`` icons side by side."""
    if h <= 0 or w <= 0:
        return
    n = max(1, round(max(h, w) / min(h, w)))
    for k in range(n):
        icon = variants[int(rng.integers(len(variants)))]
        if w >= h:
            sx0, sx1 = x + (k * w) // n, x + ((k + 1) * w) // n
            sy0, sy1 = y, y + h
        else:
            sx0, sx1 = x, x + w
            sy0, sy1 = y + (k * h) // n, y + ((k + 1) * h) // n
        tile = _resize(icon, sx1 - sx0, sy1 - sy0)
        Hh, Ww = img.shape[:2]
        cy0, cx0, cy1, cx1 = max(sy0, 0), max(sx0, 0), min(sy1, Hh), min(sx1, Ww)
        if cy0 < cy1 and cx0 < cx1:
            _over(img[cy0:cy1, cx0:cx1], tile[cy0 - sy0:cy1 - sy0, cx0 - sx0:cx1 - sx0])
