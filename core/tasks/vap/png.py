"""Fast lossless PNG encoding for dataset frames.

Why not Pillow's encoder: a 1024² RGB frame takes ~70 ms with ``Image.save(..., compress_level=1)`` (its adaptive
row filters dominate), which alone would cap generation far below the 50 frames/s target. One fixed "Up" row
filter (vectorised with numpy) and zlib level 1 give files of the same size in ~28 ms, and zlib releases the GIL,
so a small thread pool encodes several frames at once. The files are ordinary 8-bit RGB PNGs (any reader opens
them; a test decodes them with Pillow and compares every pixel).
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(image: np.ndarray, level: int = 1) -> bytes:
    """PNG bytes of a uint8 ``[H, W, 3]`` image (filter "Up" on every row but the first, zlib ``level``)."""
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
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return _SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw.tobytes(), level)) + \
        _chunk(b"IEND", b"")
