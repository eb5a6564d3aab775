"""Default art for agents: cars seen from above (head up) and side-view pedestrians (facing right).

Part of the procedural default icon set (:mod:`core.render.default_art`); fixed seeds, Pillow primitives only.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from PIL import Image

from core.render.art_pen import RGB, Pen, finish_agent, shade

# ----------------------------------------------------------------------------------------------- cars -----
CAR_W, CAR_H, BUS_H = 96, 168, 240


def _car_body(pen: Pen, body: RGB, *, h: float = CAR_H, cabin: RGB | None = None, sporty: bool = False,
              van: bool = False) -> tuple[float, float]:
    """A car seen from above, head up. Returns the (top, bottom) y of the roof panel for decorations."""
    w = CAR_W
    dark = shade(body, 0.55)
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
    pen.rect((22, roof_top, w - 22, roof_bot), cabin or shade(body, 1.08), None, 0, r=6)
    if not van:
        pen.poly([(22, roof_bot), (w - 22, roof_bot), (w - 18, roof_bot + 16), (18, roof_bot + 16)], glass)
    pen.rect((12, 54, 18, 64) if not van else (12, 38, 18, 48), dark, r=2)  # mirrors
    pen.rect((w - 18, 54, w - 12, 64) if not van else (w - 18, 38, w - 12, 48), dark, r=2)
    pen.ellipse((16, 7, 32, 15), (255, 246, 200), dark, 1)  # headlights
    pen.ellipse((w - 32, 7, w - 16, 15), (255, 246, 200), dark, 1)
    pen.rect((16, h - 12, 32, h - 7), (210, 30, 30))  # tail lights
    pen.rect((w - 32, h - 12, w - 16, h - 7), (210, 30, 30))
    return roof_top, roof_bot



def _cross(pen: Pen, cx: float, cy: float, arm: float, thick: float, color: RGB) -> None:
    pen.rect((cx - thick / 2, cy - arm, cx + thick / 2, cy + arm), color)
    pen.rect((cx - arm, cy - thick / 2, cx + arm, cy + thick / 2), color)


def _lightbar(pen: Pen, y: float, left: RGB = (230, 30, 30), right: RGB = (30, 90, 240)) -> None:
    pen.rect((22, y, 48, y + 10), left, (30, 30, 30), 1, r=2)
    pen.rect((48, y, 74, y + 10), right, (30, 30, 30), 1, r=2)


def draw_car(v: int) -> Image.Image:
    body = [(46, 98, 200), (176, 182, 190), (40, 120, 80)][v]
    pen = Pen(CAR_W, CAR_H)
    _car_body(pen, body)
    if v == 1:
        pen.rect((30, 84, 66, 110), None, (120, 124, 130), 1.5, r=3)  # sunroof
    return finish_agent(pen)


def draw_ambulance(v: int) -> Image.Image:
    body, stripe, cross = [((250, 250, 250), (220, 30, 30), (220, 30, 30)),
                           ((240, 230, 60), (40, 160, 70), (40, 160, 70)),
                           ((250, 250, 250), (245, 130, 30), (30, 90, 210))][v]
    pen = Pen(CAR_W, CAR_H)
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
    return finish_agent(pen)


def draw_bus(v: int) -> Image.Image:
    body = [(250, 196, 30), (210, 40, 40), (40, 110, 200)][v]
    pen = Pen(CAR_W, BUS_H)
    dark = shade(body, 0.55)
    pen.rect((6, 4, CAR_W - 6, BUS_H - 4), body, dark, 2, r=12)
    pen.rect((14, 10, CAR_W - 14, 26), (38, 52, 68), r=3)  # windscreen
    pen.ellipse((14, 6, 28, 12), (255, 246, 200))
    pen.ellipse((CAR_W - 28, 6, CAR_W - 14, 12), (255, 246, 200))
    for k in range(12):  # side window strips
        y = 36 + k * 16
        pen.rect((8, y, 15, y + 12), (38, 52, 68))
        pen.rect((CAR_W - 15, y, CAR_W - 8, y + 12), (38, 52, 68))
    roof = shade(body, 1.15) if v != 2 else (240, 240, 240)
    pen.rect((20, 34, CAR_W - 20, BUS_H - 16), roof, None, 0, r=6)
    if v == 0:  # school-bus black stripes
        pen.rect((6, 120, CAR_W - 6, 124), (30, 30, 30))
    for y in (60, 150):  # roof hatches / AC units
        pen.rect((32, y, CAR_W - 32, y + 26), (190, 190, 194), (110, 110, 114), 1.5, r=3)
    pen.rect((16, BUS_H - 12, 30, BUS_H - 7), (210, 30, 30))
    pen.rect((CAR_W - 30, BUS_H - 12, CAR_W - 16, BUS_H - 7), (210, 30, 30))
    return finish_agent(pen)


def draw_police(v: int) -> Image.Image:
    body, doors = [((28, 28, 32), (250, 250, 250)), ((250, 250, 250), (30, 70, 170)),
                   ((24, 36, 80), (24, 36, 80))][v]
    pen = Pen(CAR_W, CAR_H)
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
    return finish_agent(pen)


def draw_tiro(v: int) -> Image.Image:
    body = [(236, 236, 226), (150, 200, 230), (246, 230, 170)][v]
    pen = Pen(CAR_W, CAR_H)
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
    return finish_agent(pen)


def draw_reckless(v: int) -> Image.Image:
    body, deco = [((214, 30, 36), (255, 255, 255)), ((26, 26, 30), (250, 140, 20)),
                  ((130, 220, 40), (20, 20, 20))][v]
    pen = Pen(CAR_W, CAR_H)
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
    pen.rect((10, CAR_H - 22, CAR_W - 10, CAR_H - 14), shade(body, 0.45), r=2)  # rear spoiler
    return finish_agent(pen)


# ------------------------------------------------------------------------------------------ pedestrians -----
PED_W, PED_H = 96, 128
SKIN = [(236, 196, 160), (196, 140, 100), (140, 96, 64)]


def _walker(pen: Pen, *, skin: RGB, shirt: RGB, pants: RGB, head: tuple[float, float, float],
            shoulder: tuple[float, float], hip: tuple[float, float], feet: Sequence[tuple[float, float]],
            hands: Sequence[tuple[float, float]], limb: float = 9, torso_w: float = 20) -> None:
    """A side-view walking pictogram facing right: back limbs first, then torso, head, front limbs."""
    back_c, front_c = shade(pants, 0.8), pants
    pen.line([hip, feet[0]], back_c, limb)
    pen.line([shoulder, hands[0]], shade(shirt, 0.78), limb * 0.8)
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
    pen = Pen(PED_W, PED_H)
    skin = SKIN[v]
    _walker(pen, skin=skin, shirt=shirt, pants=pants, head=(52, 16, 12), shoulder=(48, 40), hip=(48, 76),
            feet=[(22, 118), (72, 118)], hands=[(26, 64), (74, 62)])
    pen.arc((39, 2, 65, 22), 180, 360, (60, 40, 30), 6)  # hair
    if v == 2:  # shoulder bag
        pen.line([(44, 30), (58, 68)], (90, 60, 30), 3)
        pen.rect((52, 62, 68, 78), (150, 100, 50), (80, 50, 20), 1.5, r=2)
    return finish_agent(pen)


def draw_old(v: int) -> Image.Image:
    shirt = [(160, 140, 110), (150, 130, 170), (120, 130, 90)][v]
    pants = [(90, 80, 70), (70, 70, 90), (80, 80, 80)][v]
    pen = Pen(PED_W, PED_H)
    skin = SKIN[v]
    # stooped: shoulders and head forward of the hips
    _walker(pen, skin=skin, shirt=shirt, pants=pants, head=(62, 24, 11), shoulder=(52, 44), hip=(44, 80),
            feet=[(26, 120), (58, 120)], hands=[(34, 70), (72, 66)], limb=8)
    pen.arc((50, 11, 74, 31), 160, 380, (225, 225, 225), 6)  # white hair
    pen.line([(72, 66), (80, 122)], (110, 70, 30), 4)  # cane
    pen.arc((66, 60, 80, 72), 180, 360, (110, 70, 30), 4)
    return finish_agent(pen)


def draw_young(v: int) -> Image.Image:
    shirt = [(250, 190, 30), (240, 90, 150), (40, 190, 200)][v]
    pants = [(50, 90, 200), (60, 60, 70), (230, 110, 40)][v]
    bag = [(220, 50, 50), (60, 160, 70), (120, 70, 200)][v]
    pen = Pen(PED_W, PED_H)
    skin = SKIN[(v + 1) % 3]
    pen.rect((24, 46, 40, 76), bag, shade(bag, 0.6), 1.5, r=4)  # backpack (on the back = left)
    _walker(pen, skin=skin, shirt=shirt, pants=pants, head=(50, 27, 18), shoulder=(48, 58), hip=(48, 86),
            feet=[(28, 120), (68, 120)], hands=[(30, 80), (70, 76)], limb=9, torso_w=22)
    if v == 0:  # cap with a visor pointing forward
        pen.arc((32, 9, 68, 45), 180, 360, (200, 40, 40), 10)
        pen.rect((60, 18, 76, 24), (200, 40, 40), r=2)
    else:
        pen.arc((32, 9, 68, 45), 180, 360, (70, 45, 30), 8)
    return finish_agent(pen)
