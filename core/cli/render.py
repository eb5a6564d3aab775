"""``python main.py render``: render recorded episode steps to PNG files."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

# The renderer, PIL, the simulator's episodes and tqdm are imported in the command bodies: `python main.py --help`
# imports every command module (core/cli/__init__.py).


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("render", help="render an episode step (or range) to PNG",
                       description="Render recorded episode states with the icon renderer.")
    p.add_argument("--episode", type=Path, required=True, help="episode file (.npz) written by simulate")
    p.add_argument("--step", type=int, default=None, help="state to render (default: 0)")
    p.add_argument("--range", nargs=2, type=int, metavar=("FIRST", "LAST"),
                   help="render states FIRST..LAST (inclusive) as an image sequence into --out (a folder)")
    p.add_argument("--out", type=Path, required=True, help="PNG file (or folder with --range)")
    p.add_argument("--ppc", type=int, default=8, help="pixels per cell (reference: 8)")
    p.add_argument("--crop", nargs=4, type=int, metavar=("ROW0", "COL0", "ROWS", "COLS"),
                   help="crop in cells (reference VAP: 0 0 128 128 = 1024² px)")
    p.add_argument("--seed", type=int, default=0, help="icon-variant seed")
    p.set_defaults(func=run)


#: Largest rendered image side in pixels (the renderer also paints the whole map at --ppc): beyond this a typo
#: (``--ppc 800``) would allocate gigabytes before failing.
MAX_SIDE_PX = 20_000


def _error(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _check_arguments(args: argparse.Namespace) -> int:
    """Exit code 2 for a bad argument, 1 for an output that cannot be written, 0 when all is fine.

    Checked before the episode is loaded and anything is rendered, so a mistake costs nothing.
    """
    if args.ppc < 1:
        return _error("--ppc must be >= 1", 2)
    if args.seed < 0:
        return _error(f"--seed must be >= 0, got {args.seed}", 2)
    if args.crop:
        _r0, _c0, rows, cols = args.crop
        if rows <= 0 or cols <= 0:
            return _error(f"--crop ROWS and COLS must be positive, got {rows} and {cols}", 2)
        if max(rows, cols) * args.ppc > MAX_SIDE_PX:
            return _error(f"--crop {rows}x{cols} cells at --ppc {args.ppc} is larger than {MAX_SIDE_PX} px per side", 2)
    out: Path = args.out
    if args.range:
        if out.exists() and not out.is_dir():
            return _error(f"--out {out}: with --range give a folder (the frames are written into it)", 2)
        folder = out
    else:
        if out.is_dir():
            return _error(f"--out {out} is a folder; give a file name such as {out / 'frame.png'}", 2)
        problem = image_format_problem(out)
        if problem:
            return _error(f"--out {out}: {problem}", 2)
        folder = out.parent

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        return _error(f"cannot write --out {out}: {folder} (or a folder above it) is a file, not a folder", 1)
    except OSError as exc:
        return _error(f"cannot write --out {out}: cannot create the folder {folder} ({exc.strerror or exc})", 1)
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".logicity-write-test-"):
            pass  # the folder accepts new files (os.access is no answer for root or special file systems)
    except OSError as exc:
        return _error(f"cannot write --out {out}: cannot create files in {folder} ({exc.strerror or exc})", 1)
    if not args.range and out.exists() and not os.access(out, os.W_OK):
        return _error(f"cannot write --out {out}: the file is read-only", 1)
    return 0


def image_format_problem(out: Path) -> str | None:
    """Why PIL cannot save an image under ``out``'s file extension (None when it can)."""
    from PIL import Image

    Image.init()
    ext = out.suffix.lower()
    fmt = Image.registered_extensions().get(ext)
    if fmt is None or fmt not in Image.SAVE:
        known = sorted(e for e, f in Image.registered_extensions().items() if f in Image.SAVE
                       and e in (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".gif", ".ppm"))
        what = f"unknown image file extension {ext!r}" if ext else "no file extension"
        return f"{what}; use one of {', '.join(known)}"
    return None


def run(args: argparse.Namespace) -> int:
    code = _check_arguments(args)
    if code:
        return code
    from tqdm import tqdm

    from core.render.renderer import Renderer
    from core.sim.episode import load_episode
    from core.sim.replay import config_from_episode

    ep = load_episode(args.episode)
    cfg = config_from_episode(ep.meta, args.episode)
    ep.check_map(cfg.city.height, cfg.city.width)
    if max(cfg.city.height, cfg.city.width) * args.ppc > MAX_SIDE_PX:
        return _error(f"the map ({cfg.city.height}x{cfg.city.width} cells) at --ppc {args.ppc} is larger than "
                      f"{MAX_SIDE_PX} px per side; use a smaller --ppc", 2)
    renderer = Renderer(cfg.city, px_per_cell=args.ppc, seed=args.seed)
    crop = tuple(args.crop) if args.crop else None
    if args.range:
        first, last = args.range
        if not (0 <= first <= last < ep.num_states):
            return _error(f"range must lie within 0..{ep.num_states - 1}", 2)
        prev = renderer.render(ep.snapshot(max(0, first - 1)), crop=crop) if first > 0 else None
        for k in tqdm(range(first, last + 1), unit="frame", file=sys.stderr):
            prev = renderer.render(ep.snapshot(k), previous=prev, crop=crop)
            target = args.out / f"step_{k:05d}.png"
            try:
                prev.save(target)
            except OSError as exc:
                return _error(f"cannot write {target}: {exc.strerror or exc} ({k - first} frame(s) written)", 1)
        print(f"wrote {last - first + 1} frames to {args.out}")
        return 0
    k = 0 if args.step is None else args.step
    if not 0 <= k < ep.num_states:
        return _error(f"--step must lie within 0..{ep.num_states - 1}", 2)
    prev = renderer.render(ep.snapshot(k - 1), crop=crop) if k > 0 else None
    frame = renderer.render(ep.snapshot(k), previous=prev, crop=crop)
    try:
        frame.save(args.out)
    except OSError as exc:
        return _error(f"cannot write --out {args.out}: {exc.strerror or exc}", 1)
    h, w = frame.image.shape[:2]
    print(f"wrote {args.out} ({w}x{h} px, {len(frame.boxes)} agents drawn)")
    return 0
