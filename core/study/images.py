"""Question images: the frame each question shows, with the asked agent framed (study modality image/both)."""
from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from core.io.fileio import atomic_write_bytes
from core.study.source import SimulatedSource

# PIL, the renderer and the simulator are imported when images are made: `python main.py --help` imports this module
# (core/cli/study.py).

#: Side of a question image in cells (8 px each) and the colour of the frame around the asked agent.
IMAGE_CELLS = 80
FRAME_RGB = (230, 20, 20)


def render_images(spec, questions: list, snaps: dict, folder: Path, base: Path | None,
                  progress) -> list:
    """Each question's frame to images/<id>.png, the asked agent framed in :data:`FRAME_RGB`: simulated sources
    render a square of :data:`IMAGE_CELLS` cells around the agent (clipped to the map); a VAP dataset's frame is
    its own image."""
    from PIL import Image, ImageDraw

    from core.render.renderer import Renderer
    from core.sim.config import load_mode

    renderer = None
    if isinstance(spec.source, SimulatedSource):
        mode = Path(spec.source.mode)
        if base is not None and not mode.is_absolute():
            mode = base / mode
        cfg = load_mode(mode, agents_split=spec.source.split)
        renderer = Renderer(cfg.city, px_per_cell=8)
        h, w = cfg.city.height, cfg.city.width
    (folder / "images").mkdir(exist_ok=True)
    out = []
    for k, q in enumerate(questions):
        snap = snaps[(q.world, q.step)]
        if renderer is None:   # a dataset frame: its own image and boxes
            _, png, boxes = snap
            img = Image.open(png).convert("RGB")
            box = boxes[q.agent] if q.agent < len(boxes) else None
        else:
            r, c = (int(v) for v in snap.positions[q.agent])
            r0 = min(max(r - IMAGE_CELLS // 2, 0), max(h - IMAGE_CELLS, 0))
            c0 = min(max(c - IMAGE_CELLS // 2, 0), max(w - IMAGE_CELLS, 0))
            frame = renderer.render(snap, crop=(r0, c0, min(IMAGE_CELLS, h), min(IMAGE_CELLS, w)))
            img = Image.fromarray(frame.image, "RGB")
            box = frame.boxes.get(q.agent)
        if box is not None:
            x1, y1, x2, y2 = box
            ImageDraw.Draw(img).rectangle((x1 - 3, y1 - 3, x2 + 3, y2 + 3), outline=FRAME_RGB, width=4)
        rel = f"images/{q.id}.png"
        buf = io.BytesIO()
        img.save(buf, "PNG", compress_level=3)
        atomic_write_bytes(folder / rel, buf.getvalue())
        out.append(replace(q, image=rel))
        if progress is not None:
            progress("rendering", k + 1, len(questions))
    return out
