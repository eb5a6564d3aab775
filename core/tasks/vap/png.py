"""Fast lossless PNG encoding for dataset frames.

Why not Pillow's encoder: a 1024² RGB frame takes ~70 ms with ``Image.save(..., compress_level=1)`` (its adaptive
row filters dominate), which alone would cap generation far below the 50 frames/s target. One fixed "Up" row
filter (vectorised with numpy) and zlib level 1 give files of the same size in ~28 ms, and zlib releases the GIL,
so a small thread pool encodes several frames at once.

Most of a dataset frame is the static map. :class:`BandCache` compresses the map once, in bands of rows, each
band an independent deflate segment ending on a byte boundary (a full flush); a frame's band whose filtered bytes
equal the map's reuses that segment, and only the bands with agents are compressed again. The segments of one
frame, a final empty block and the Adler-32 of the whole data make one valid zlib stream (the way parallel
compressors join their pieces). The files are ordinary 8-bit RGB PNGs (a test decodes them with Pillow and
compares every pixel).
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: rows per independently compressed band
BAND_ROWS = 16


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _filtered(image: np.ndarray) -> np.ndarray:
    """PNG scanlines of ``image``: filter byte + row, "Up" filter on every row but the first."""
    img = np.ascontiguousarray(image, dtype=np.uint8)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"expected an [H, W, 3] uint8 image, got shape {img.shape}")
    h, w, _ = img.shape
    flat = img.reshape(h, w * 3)
    raw = np.empty((h, w * 3 + 1), np.uint8)
    raw[:, 0] = 2            # filter type Up
    raw[0, 0] = 0            # first row: no filter
    raw[0, 1:] = flat[0]
    np.subtract(flat[1:], flat[:-1], out=raw[1:, 1:])   # uint8 wraps modulo 256, as the filter wants
    return raw


def _segment(data: bytes, level: int) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)


_FINAL = zlib.compressobj(1, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)   # an empty final block


def _png(h: int, w: int, idat: bytes) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return _SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


class BandCache:
    """The static background of a dataset, compressed band by band (see the module docstring)."""

    def __init__(self, background: np.ndarray, level: int = 1) -> None:
        raw = _filtered(background)
        self.shape = background.shape
        self.level = level
        self.bands = [raw[r:r + BAND_ROWS] for r in range(0, raw.shape[0], BAND_ROWS)]
        self.segments = [_segment(b.tobytes(), level) for b in self.bands]


def encode_png(image: np.ndarray, level: int = 1, cache: BandCache | None = None) -> bytes:
    """PNG bytes of a uint8 ``[H, W, 3]`` image (filter "Up", zlib ``level``); ``cache`` (the background of
    frames of this shape and level) lets unchanged bands reuse their compressed bytes."""
    raw = _filtered(image)
    h, w = image.shape[:2]
    if cache is None or cache.shape != image.shape or cache.level != level:
        return _png(h, w, zlib.compress(raw.tobytes(), level))
    parts = [b"\x78\x01"]
    for k, r in enumerate(range(0, h, BAND_ROWS)):
        band = raw[r:r + BAND_ROWS]
        parts.append(cache.segments[k] if np.array_equal(band, cache.bands[k]) else _segment(band.tobytes(), level))
    parts.append(_FINAL)
    parts.append(struct.pack(">I", zlib.adler32(raw.tobytes()) & 0xFFFFFFFF))
    return _png(h, w, b"".join(parts))
