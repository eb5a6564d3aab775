"""Default art for places: the seamless street tiles and the top-down building lots (160×160, 10×10 cells).

Part of the procedural default icon set (:mod:`core.render.default_art`); fixed seeds, Pillow primitives only.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image

from core.render.art_pen import RGB, TILE, Pen, periodic_noise, shade, texture


# ----------------------------------------------------------------------------------------- street tiles -----
def draw_walking_street(v: int) -> Image.Image:
    rng = np.random.default_rng(100 + v)
    if v == 0:  # grey concrete slabs, 4×4 grid
        pen = Pen(TILE, TILE, texture(rng, (196, 196, 190), 5, 2.0, 3))
        for k in range(5):
            pen.rect((k * 40 - 1, 0, k * 40 + 1, TILE), (150, 150, 146))
            pen.rect((0, k * 40 - 1, TILE, k * 40 + 1), (150, 150, 146))
    elif v == 1:  # warm brick pavers, running bond
        pen = Pen(TILE, TILE, texture(rng, (150, 130, 118), 3, 1.0, 2))
        cols = [(205, 150, 120), (190, 138, 110), (214, 162, 128), (198, 145, 116)]
        for row in range(8):
            off = 0 if row % 2 == 0 else 20
            for k in range(4):
                c = cols[int(rng.integers(len(cols)))]
                x0, y0 = k * 40 + off, row * 20
                pen.wrap(lambda dx, dy, x0=x0, y0=y0, c=c: pen.rect((x0 + dx + 1.5, y0 + dy + 1.5, x0 + dx + 38.5,
                                                                     y0 + dy + 18.5), c, r=2))
    else:  # pale cobbles
        pen = Pen(TILE, TILE, texture(rng, (160, 156, 148), 4, 1.5, 2))
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
    pen = Pen(TILE, TILE, texture(rng, base, 4, 3.0, 5))
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
    pen = Pen(TILE, TILE, texture(rng, base, 4, 3.0, 5))
    period, bar = (20, 10) if v != 1 else (32, 18)
    white = (236, 236, 232) if v != 2 else (245, 240, 230)
    for k in range(TILE // period):
        y0 = k * period + (period - bar) / 2
        pen.rect((0, y0, TILE, y0 + bar), white)
    img = pen.result()
    if v == 1:  # worn paint: let the asphalt show through in places
        arr = np.asarray(img).astype(np.float64)
        wear = periodic_noise(rng, TILE, TILE, 2.0) > 1.1
        asphalt = np.asarray(texture(rng, base, 4, 3.0, 5)).astype(np.float64)
        arr[wear] = 0.6 * asphalt[wear] + 0.4 * arr[wear]
        img = Image.fromarray(arr.astype(np.uint8), "RGBA")
    return img


# -------------------------------------------------------------------------------------------- buildings -----
def _drop_shadow(pen: Pen, box: Sequence[float], off: float, alpha: int = 90) -> None:
    x0, y0, x1, y1 = box
    with pen.layer():
        pen.poly([(x1, y0 + off * 0.3), (x1 + off, y0 + off), (x1 + off, y1 + off), (x0 + off, y1 + off),
                  (x0 + off * 0.3, y1), (x1, y1)], (0, 0, 0, alpha))


def _tree(pen: Pen, cx: float, cy: float, r: float, green: RGB = (60, 130, 60)) -> None:
    with pen.layer():
        pen.circle(cx + 2, cy + 2, r, (0, 0, 0, 70))
    pen.circle(cx, cy, r, green)
    pen.circle(cx - r * 0.3, cy - r * 0.3, r * 0.45, shade(green, 1.25))


def draw_house(v: int) -> Image.Image:
    rng = np.random.default_rng(400 + v)
    pen = Pen(TILE, TILE, texture(rng, (96, 158, 82), 6, 2.0, 4))
    pen.rect((72, 118, 88, TILE), (200, 190, 170))  # path to the street
    roof = [(196, 92, 62), (128, 88, 64), (96, 104, 120)][v]
    box = (22, 30, 138, 122)
    _drop_shadow(pen, box, 8)
    x0, y0, x1, y1 = box
    cy = (y0 + y1) / 2
    if v == 0:  # hip roof, four faces
        inset = (y1 - y0) / 2
        pen.poly([(x0, y0), (x1, y0), (x1 - inset, cy), (x0 + inset, cy)], shade(roof, 1.12))
        pen.poly([(x0, y1), (x1, y1), (x1 - inset, cy), (x0 + inset, cy)], shade(roof, 0.8))
        pen.poly([(x0, y0), (x0 + inset, cy), (x0, y1)], roof)
        pen.poly([(x1, y0), (x1 - inset, cy), (x1, y1)], shade(roof, 0.9))
        pen.line([(x0 + inset, cy), (x1 - inset, cy)], shade(roof, 0.6), 1.5)
    else:  # gable roof, ridge left–right, tile rows
        pen.rect((x0, y0, x1, cy), shade(roof, 1.1))
        pen.rect((x0, cy, x1, y1), shade(roof, 0.8))
        for k in range(1, 6):
            yy = y0 + k * (cy - y0) / 6
            pen.line([(x0, yy), (x1, yy)], shade(roof, 0.95), 1.0, round_caps=False)
            yy2 = cy + k * (y1 - cy) / 6
            pen.line([(x0, yy2), (x1, yy2)], shade(roof, 0.68), 1.0, round_caps=False)
        pen.line([(x0, cy), (x1, cy)], shade(roof, 0.55), 2.0, round_caps=False)
    pen.rect((x0, y0, x1, y1), None, shade(roof, 0.5), 1.5)
    pen.rect((100, 40, 114, 54), (150, 90, 80), (70, 50, 45), 1.5)  # chimney
    if v == 2:
        pen.rect((10, 128, 54, 152), (90, 180, 220), (230, 230, 230), 2.5, r=4)  # pool
        _tree(pen, 140, 140, 12)
    else:
        _tree(pen, 16, 140, 11)
        _tree(pen, 146, 16, 10, (70, 140, 70))
    return pen.result()


def _fuel_drop(pen: Pen, cx: float, cy: float, s: float, color: RGB) -> None:
    pen.poly([(cx, cy - s), (cx - s * 0.62, cy + s * 0.15), (cx + s * 0.62, cy + s * 0.15)], color)
    pen.circle(cx, cy + s * 0.3, s * 0.64, color)


def draw_gas_station(v: int) -> Image.Image:
    rng = np.random.default_rng(500 + v)
    pen = Pen(TILE, TILE, texture(rng, (188, 188, 184), 4, 2.0, 3))
    main, accent = [((214, 40, 40), (255, 255, 255)), ((30, 140, 70), (250, 210, 40)),
                    ((30, 90, 190), (255, 255, 255))][v]
    for x in (36, 68, 100):  # pump islands (peek out under the canopy)
        pen.rect((x, 100, x + 24, 112), (235, 235, 235), (90, 90, 90), 1)
        pen.rect((x + 8, 102, x + 16, 110), main)
    canopy = (14, 16, 146, 98)
    _drop_shadow(pen, canopy, 7)
    pen.rect(canopy, main, shade(main, 0.55), 2, r=3)
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
    pen = Pen(TILE, TILE, texture(rng, (150, 152, 158), 4, 2.0, 3))
    box = (14, 12, 138, 136)
    _drop_shadow(pen, box, 16, 110)
    x0, y0, x1, y1 = box
    if v == 0:  # blue glass curtain-wall roof
        pen.rect(box, (40, 70, 120), (28, 34, 48), 3)
        for i in range(4):
            for j in range(4):
                cx, cy = x0 + 8 + i * 28, y0 + 8 + j * 28
                c = shade((70, 120, 190), 1.0 + 0.15 * ((i + j) % 2))
                pen.rect((cx, cy, cx + 24, cy + 24), c)
                pen.poly([(cx, cy), (cx + 24, cy), (cx, cy + 24)], shade(c, 1.2))
        pen.rect((84, 84, 126, 126), (120, 124, 130), (60, 60, 66), 2)  # HVAC plant
        for k in range(3):
            pen.circle(96 + k * 12, 105, 4.5, (80, 84, 90))
    elif v == 1:  # concrete roof with helipad
        pen.rect(box, (112, 118, 128), (50, 52, 60), 3)
        pen.rect((x0 + 6, y0 + 6, x1 - 6, y1 - 6), None, (150, 156, 166), 2)
        hx, hy = (x0 + x1) / 2, (y0 + y1) / 2   # the helipad's centre
        pen.circle(hx, hy, 44, (60, 64, 72), (250, 210, 40), 4)
        pen.rect((hx - 20, hy - 22, hx - 12, hy + 22), (250, 250, 250))
        pen.rect((hx + 12, hy - 22, hx + 20, hy + 22), (250, 250, 250))
        pen.rect((hx - 12, hy - 4, hx + 12, hy + 4), (250, 250, 250))
    else:  # stepped teal tower with roof garden
        pen.rect(box, (30, 110, 120), (20, 40, 44), 3)
        pen.rect((30, 28, 122, 120), (50, 140, 150), (20, 60, 66), 2)
        pen.rect((46, 44, 106, 104), (80, 170, 176), (20, 70, 76), 2)
        pen.rect((56, 54, 96, 94), (80, 150, 80), (40, 90, 40), 2)
        _tree(pen, 68, 66, 7, (50, 120, 50))
        _tree(pen, 84, 82, 7, (60, 130, 60))
    return pen.result()


def _mini_car(pen: Pen, x: float, y: float, w: float, h: float, color: RGB) -> None:
    pen.rect((x, y, x + w, y + h), color, shade(color, 0.5), 1, r=3)
    pen.rect((x + 2, y + h * 0.25, x + w - 2, y + h * 0.45), (40, 50, 60))


def draw_garage(v: int) -> Image.Image:
    rng = np.random.default_rng(700 + v)
    deck = [(132, 134, 136), (118, 112, 104), (144, 140, 150)][v]
    pen = Pen(TILE, TILE, texture(rng, deck, 4, 2.0, 3))
    pen.rect((4, 4, 156, 156), None, shade(deck, 0.6), 4)
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
    pen = Pen(TILE, TILE, texture(rng, (196, 192, 184), 3, 2.0, 3))
    roof = [(236, 226, 204), (222, 222, 214), (240, 220, 222)][v]
    stripes = [((226, 70, 40), (255, 250, 240)), ((40, 150, 80), (255, 250, 240)),
               ((150, 60, 160), (250, 190, 60))][v]
    box = (10, 10, 150, 120)
    _drop_shadow(pen, box, 7)
    pen.rect(box, roof, shade(roof, 0.6), 2)
    for x in (24, 112):  # roof units
        pen.rect((x, 22, x + 22, 40), (170, 170, 170), (100, 100, 100), 1)
    # shopping bag glyph
    pen.rect((62, 44, 98, 84), stripes[0], shade(stripes[0], 0.6), 1.5, r=3)
    pen.arc((69, 32, 91, 56), 180, 360, shade(stripes[0], 0.6), 3)
    # striped awning over the shop front
    n = 10
    for k in range(n):
        c = stripes[k % 2]
        sx = 6 + k * 148 / n   # the stripe's left edge
        pen.poly([(sx, 112), (sx + 148 / n, 112), (sx + 148 / n, 134), (sx, 134)], c)
        pen.poly([(sx, 134), (sx + 148 / n, 134), (sx + 148 / (2 * n), 140)], shade(c, 0.85))
    pen.line([(6, 112), (154, 112)], shade(stripes[0], 0.5), 1.5, round_caps=False)
    for x in (30, 130):  # planters
        _tree(pen, x, 150, 6, (70, 140, 60))
    return pen.result()
