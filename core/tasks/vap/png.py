"""Fast lossless PNG encoding for dataset frames.

Why not Pillow's encoder: ``Image.save(..., compress_level=1)`` of a large RGB frame is dominated by its adaptive
row filters (``optimize`` off changes nothing at that level), which alone would cap generation far below its
frames-per-second target (docs/vap.md). Here one fixed "Up" row filter is computed with numpy and the scanlines are
deflated by ISA-L (the ``isal`` package, Intel's deflate: at level 1 several times faster than zlib's and its files
slightly smaller) or, when ``isal`` is missing or another level is asked for, by zlib.

zlib's cost is cut further by :class:`BandCache`: most of a dataset frame is the static map, so the map is
compressed once in bands of rows, each band an independent deflate segment ending on a byte boundary (a full
flush); a frame's band whose filtered bytes equal the map's reuses that segment and only the bands with agents
are compressed again. The segments of one frame, a final empty block and the Adler-32 of the whole data make one
valid zlib stream (the way parallel compressors join their pieces). With ISA-L the whole frame is compressed in
one call: it is already cheaper than the band bookkeeping. Either way the files are ordinary 8-bit RGB PNGs (a
test decodes them with Pillow and compares every pixel), and the same pixels always give the same bytes with the
same encoder (:func:`encoder_name` is recorded in the dataset manifest).
"""
from __future__ import annotations

import struct
import zlib
from types import ModuleType

import numpy as np

_isal: ModuleType | None
try:   # optional at import (a missing package falls back to zlib); pinned in requirements.txt
    from isal import isal_zlib as _isal
except ImportError:   # pragma: no cover - exercised only where isal is not installed
    _isal = None

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: rows per independently compressed band (zlib path)
BAND_ROWS = 16
#: the level that uses ISA-L when it is installed (its fastest; 2-9 keep zlib's meaning)
ISAL_LEVEL = 1


def encoder_name(level: int = 1) -> str:
    """Which deflate implementation writes frames at ``level`` here: ``isal <version>`` or ``zlib <version>``."""
    if _isal is not None and level == ISAL_LEVEL:
        import isal

        return f"isal {isal.__version__} level {level}"
    return f"zlib {zlib.ZLIB_RUNTIME_VERSION} level {level}"


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
    """The static background of a dataset, compressed band by band (see the module docstring). Built lazily:
    the ISA-L path never needs it."""

    def __init__(self, background: np.ndarray, level: int = 1) -> None:
        self.background = background
        self.shape = background.shape
        self.level = level
        self._bands: list[np.ndarray] | None = None
        self._segments: list[bytes] = []

    def parts(self) -> tuple[list[np.ndarray], list[bytes]]:
        if self._bands is None:
            raw = _filtered(self.background)
            self._bands = [raw[r:r + BAND_ROWS] for r in range(0, raw.shape[0], BAND_ROWS)]
            self._segments = [_segment(b.tobytes(), self.level) for b in self._bands]
        return self._bands, self._segments

    @property
    def segments(self) -> list[bytes]:
        return self.parts()[1]


def encode_png(image: np.ndarray, level: int = 1, cache: BandCache | None = None, use_isal: bool = True) -> bytes:
    """PNG bytes of a uint8 ``[H, W, 3]`` image (filter "Up"). ``level`` 1 deflates with ISA-L when it is
    installed (and ``use_isal``), else with zlib at ``level``; ``cache`` (the background of frames of this
    shape and level) lets unchanged bands reuse their compressed bytes on the zlib path."""
    raw = _filtered(image)
    h, w = image.shape[:2]
    data = raw.data.cast("B")
    if use_isal and _isal is not None and level == ISAL_LEVEL:
        return _png(h, w, _isal.compress(data, ISAL_LEVEL))
    if cache is None or cache.shape != image.shape or cache.level != level:
        return _png(h, w, zlib.compress(data, level))
    bands, segments = cache.parts()
    parts = [b"\x78\x01"]
    for k, r in enumerate(range(0, h, BAND_ROWS)):
        band = raw[r:r + BAND_ROWS]
        parts.append(segments[k] if np.array_equal(band, bands[k]) else _segment(band.tobytes(), level))
    parts.append(_FINAL)
    parts.append(struct.pack(">I", zlib.adler32(data) & 0xFFFFFFFF))
    return _png(h, w, b"".join(parts))
