"""Contact sheet of an :class:`IconSet`: every variant of every semantic, large and at render size.

Why: artists (and reviewers) need to see at a glance whether icons are distinct and legible at the size the
renderer uses (8 px per cell: cars 48 px wide, pedestrians 32 px, tiles and buildings 80 px).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from core.render.icons import IconSet
from core.render.renderer import TILE_CELLS, scale_agent_icon
from core.render.semantics import LABELS, SEMANTICS, STATIC_SEMANTICS


def _fit(rgba: np.ndarray, box: int) -> Image.Image:
    im = Image.fromarray(rgba, "RGBA")
    s = box / max(im.width, im.height)
    return im.resize((max(1, round(im.width * s)), max(1, round(im.height * s))), Image.Resampling.LANCZOS)


def _render_size(semantic: str, rgba: np.ndarray, px_per_cell: int) -> Image.Image:
    if semantic in STATIC_SEMANTICS:
        side = px_per_cell * TILE_CELLS
        return Image.fromarray(rgba, "RGBA").resize((side, side), Image.Resampling.LANCZOS)
    return Image.fromarray(scale_agent_icon(rgba, semantic, px_per_cell), "RGBA")


def icon_sheet(icons: IconSet, semantics: Sequence[str] = SEMANTICS, big: int = 120, px_per_cell: int = 8,
               max_variants: int = 6) -> Image.Image:
    """One row per semantic: label, each variant at ``big`` px, then each variant at render size on asphalt."""
    font = ImageFont.load_default(size=14)
    label_w, pad = 150, 8
    n = min(max_variants, max(icons.count(s) for s in semantics))
    row_h = big + 2 * pad
    small_w = px_per_cell * 10 + pad
    width = label_w + n * (big + pad) + n * small_w + pad
    sheet = Image.new("RGB", (width, row_h * len(semantics)), (245, 245, 242))
    draw = ImageDraw.Draw(sheet)
    for r, sem in enumerate(semantics):
        y0 = r * row_h
        if r % 2:
            draw.rectangle([0, y0, width, y0 + row_h - 1], fill=(234, 234, 230))
        draw.text((pad, y0 + row_h // 2 - 8), LABELS[sem], fill=(20, 20, 20), font=font)
        for k, rgba in enumerate(icons.variants(sem)[:n]):
            x = label_w + k * (big + pad)
            im = _fit(rgba, big)
            # checkerboard behind transparent icons shows where the alpha is
            cb = Image.new("RGB", (big, big), (255, 255, 255))
            cbd = ImageDraw.Draw(cb)
            for i in range(0, big, 12):
                for j in range(0, big, 12):
                    if (i // 12 + j // 12) % 2:
                        cbd.rectangle([i, j, i + 11, j + 11], fill=(222, 222, 222))
            sheet.paste(cb, (x, y0 + pad))
            sheet.paste(im, (x + (big - im.width) // 2, y0 + pad + (big - im.height) // 2), im)
        for k, rgba in enumerate(icons.variants(sem)[:n]):
            x = label_w + n * (big + pad) + k * small_w
            im = _render_size(sem, rgba, px_per_cell)
            bg = Image.new("RGB", (small_w - pad, big), (72, 74, 78))
            bg.paste(im, ((bg.width - im.width) // 2, (big - im.height) // 2), im)
            sheet.paste(bg, (x, y0 + pad))
    return sheet
