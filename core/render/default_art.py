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
from pathlib import Path
from typing import Callable, Sequence

from PIL import Image

from core.base.paths import RESOURCES
from core.render.art_agents import (
    draw_ambulance,
    draw_bus,
    draw_car,
    draw_old,
    draw_pedestrian,
    draw_police,
    draw_reckless,
    draw_tiro,
    draw_young,
)
from core.render.art_places import (
    draw_crossing,
    draw_garage,
    draw_gas_station,
    draw_house,
    draw_office,
    draw_store,
    draw_traffic_street,
    draw_walking_street,
)
from core.render.semantics import SEMANTICS

#: Where the default art is shipped (``resources/icons``): written by :func:`main`, read by
#: :class:`core.render.icons.IconSet`.
DEFAULT_ICON_DIR = RESOURCES / "icons"
N_VARIANTS = 3

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
