"""Export of recorded steps as an image sequence or an animated GIF (the Qt-free half).

Why here: which steps an export covers ("10-50", "every 2nd"), how frames are named and how a GIF is assembled
are plain decisions that tests check without a screen; the studio only grabs each frame's pixels.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from core.io.fileio import atomic_writer


@dataclass(frozen=True)
class StepRange:
    """States ``start..stop`` inclusive, every ``stride``-th."""

    start: int
    stop: int
    stride: int = 1

    def steps(self) -> list[int]:
        return list(range(self.start, self.stop + 1, self.stride))

    def __len__(self) -> int:
        return len(self.steps())


def parse_range(text: str, last: int, stride: int = 1) -> StepRange:
    """Parse ``"a-b"``, ``"a:b"``, ``"a"``, ``"a-"``, ``"-b"`` or ``""``/``"all"`` against states ``0..last``.

    Raises ``ValueError`` with a message fit for a dialog.
    """
    if stride < 1:
        raise ValueError("the stride must be at least 1")
    t = text.strip().lower().replace(" ", "")
    if t in ("", "all", "*"):
        return StepRange(0, last, stride)
    m = re.fullmatch(r"(\d*)(?:[-:](\d*))?", t)
    if not m or (m.group(1) == "" and (m.group(2) in (None, ""))):
        raise ValueError(f"cannot read the step range {text!r}; write e.g. 10-50, 10-, -50 or all")
    a = int(m.group(1)) if m.group(1) else 0
    if m.group(2) is None:
        b = a
    else:
        b = int(m.group(2)) if m.group(2) else last
    if a > b:
        raise ValueError(f"the range {text!r} starts after it ends")
    if b > last:
        raise ValueError(f"step {b} is not recorded (last recorded step: {last})")
    return StepRange(a, b, stride)


def frame_name(pattern: str, index: int, step: int) -> str:
    """File name of one frame: ``pattern`` may use ``{step}`` and ``{index}`` (format specs allowed)."""
    try:
        return pattern.format(step=step, index=index)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"bad file name pattern {pattern!r}: {exc}; use {{step}} or {{index}}") from None


DEFAULT_PATTERN = "frame_{step:05d}.png"


class _Cancelled(Exception):
    """Raised inside an atomic write to drop the temporary file instead of committing it."""


class GifBuilder:
    """Collects frames one by one (downscaled, quantised to 255 colours: ~1 byte per pixel) and encodes a
    looping GIF. ``encode()`` is pure Pillow work and may run in a background thread."""

    def __init__(self, fps: float = 10.0, max_side: int | None = 720) -> None:
        self.fps = float(fps)
        self.max_side = max_side
        self.frames: list = []

    def add(self, frame: np.ndarray | str | Path) -> None:
        from PIL import Image

        im = Image.open(frame).convert("RGB") if isinstance(frame, (str, Path)) else Image.fromarray(
            np.ascontiguousarray(np.asarray(frame)[..., :3]), "RGB")
        if self.max_side and max(im.size) > self.max_side:
            s = self.max_side / max(im.size)
            im = im.resize((max(1, round(im.width * s)), max(1, round(im.height * s))), Image.Resampling.LANCZOS)
        self.frames.append(im.quantize(colors=255, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE))

    def __len__(self) -> int:
        return len(self.frames)

    def encode(self) -> bytes:
        import io

        if not self.frames:
            raise ValueError("no frames to write")
        buf = io.BytesIO()
        self.frames[0].save(buf, format="GIF", save_all=True, append_images=self.frames[1:], loop=0,
                            duration=max(20, int(round(1000.0 / max(self.fps, 0.1)))), disposal=1)
        return buf.getvalue()

    def save(self, path: str | Path, cancelled: Callable[[], bool] | None = None) -> Path | None:
        """Encode and write atomically. ``cancelled()`` is asked once the (long) encoding is done, right before
        the file is committed: when it is true nothing is written (an existing file stays) and None is returned."""
        data = self.encode()
        if cancelled is not None and cancelled():
            return None
        try:
            with atomic_writer(path) as fh:
                fh.write(data)
                if cancelled is not None and cancelled():
                    raise _Cancelled
        except _Cancelled:
            return None
        return Path(path)


def write_gif(frames: Iterable[np.ndarray | str | Path], path: str | Path, fps: float = 10.0,
              progress: Callable[[int], None] | None = None, cancelled: Callable[[], bool] | None = None,
              max_side: int | None = 720) -> bool:
    """Assemble RGB frames (arrays or image files) into a looping GIF, written atomically.

    Returns False (and writes nothing) when ``cancelled()`` turned true.
    """
    gb = GifBuilder(fps, max_side)
    for i, fr in enumerate(frames):
        if cancelled is not None and cancelled():
            return False
        gb.add(fr)
        if progress is not None:
            progress(i + 1)
    gb.save(path)
    return True


def sequence_paths(folder: str | Path, pattern: str, steps: Sequence[int]) -> list[Path]:
    """The files an image-sequence export writes, in order (checked for collisions)."""
    names = [frame_name(pattern, i, s) for i, s in enumerate(steps)]
    if len(set(names)) != len(names):
        raise ValueError(f"the pattern {pattern!r} gives the same name to several frames; include {{step}}")
    return [Path(folder) / n for n in names]
