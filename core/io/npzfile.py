"""Defensive reading of the project's ".npz" container (a stored ZIP of ``.npy`` members plus ``meta.json``).

Why a module of its own: episode files, episode sets and demonstrations are data a user may receive from anyone,
and a crafted archive must never crash the program, exhaust its memory or make it read outside the file. Every
number that decides how much is read or mapped comes from the file itself (ZIP directory sizes and offsets,
``.npy`` shape headers), so each one is checked here *before* it is used: member sizes and offsets against the
real file size, ``.npy`` headers (read with :mod:`numpy.lib.format`, without loading data) for a supported
version, a plain integer/boolean/float dtype, non-negative dimensions and a byte count that fits in the member,
and ``meta.json`` for size and nesting depth. Problems raise the caller's :class:`~core.base.errors.LogiCityError`
subclass naming the file and the member.
"""
from __future__ import annotations

import json
import math
import os
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import numpy as np

from core.base.errors import EpisodeFileError, LogiCityError

__all__ = ["MAX_META_BYTES", "MAX_META_DEPTH", "NpyMember", "open_zip", "read_meta", "read_npy_header",
           "member_data_offset", "map_member", "read_member"]

#: ``meta.json`` larger than this is refused before it is read (it holds a few texts and per-agent lists; the
#: largest the studio writes, 1000 agents with all configuration texts, is well under 2 MB).
MAX_META_BYTES = 64 * 1024 * 1024
#: ``meta.json`` nested deeper than this is refused (the format nests 3 levels; deep nesting would exhaust the
#: JSON decoder's recursion).
MAX_META_DEPTH = 32
#: ``.npy`` dtype kinds the container holds: booleans, signed/unsigned integers and floats (no objects,
#: strings, structured records, dates or complex numbers).
PLAIN_KINDS = "biuf"
#: deflate expands at most ~1032:1; a member claiming more is a crafted size
_MAX_DEFLATE_RATIO = 1100
#: an array shape whose non-zero dimensions multiply beyond this cannot exist in any file (numpy refuses it too)
_MAX_ELEMENTS = 2**48

_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, ValueError,
               OverflowError, struct.error, EOFError, zlib.error, UnicodeDecodeError, KeyError, IndexError)


@dataclass(frozen=True)
class NpyMember:
    """A validated ``.npy`` member: where its data starts in the file and what it holds."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool
    offset: int  # absolute file offset of the first data byte
    nbytes: int


def _error(cls: type[LogiCityError], message: str, path: Path) -> LogiCityError:
    return cls(message, path)


def open_zip(path: Path, cls: type[LogiCityError] = EpisodeFileError) -> zipfile.ZipFile:
    """Open the archive, turning every way a crafted ZIP can fail into ``cls`` naming the file."""
    try:
        return zipfile.ZipFile(path)
    except FileNotFoundError:
        raise _error(cls, "file not found", path) from None
    except IsADirectoryError:
        raise _error(cls, "is a folder, not a .npz file", path) from None
    except OSError as exc:
        raise _error(cls, f"cannot read the file: {exc.strerror or exc}", path) from None
    except _ZIP_ERRORS as exc:
        raise _error(cls, f"not a valid .npz (ZIP) archive: {_short(exc)}", path) from None


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 200 else text[:200] + "…"


def _check_member_bounds(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, cls: type[LogiCityError],
                         file_size: int) -> None:
    """Member flags, compressed size and header offset must describe bytes inside the file."""
    if info.flag_bits & 0x1:
        raise _error(cls, f"member {info.filename} is encrypted (not supported)", path)
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise _error(cls, f"member {info.filename} uses ZIP compression method {info.compress_type} (only stored "
                          f"or deflated members are supported)", path)
    if info.header_offset < 0 or info.compress_size < 0 or info.file_size < 0 \
            or info.header_offset + 30 + info.compress_size > file_size:
        raise _error(cls, f"member {info.filename} lies outside the file (damaged ZIP directory)", path)


def read_meta(zf: zipfile.ZipFile, path: Path, cls: type[LogiCityError] = EpisodeFileError) -> Any:
    """``meta.json`` decoded, bounded in size and nesting depth."""
    try:
        info = zf.getinfo("meta.json")
    except KeyError:
        raise _error(cls, "meta.json missing (not a LogiCity data file)", path) from None
    _check_member_bounds(zf, info, path, cls, _size(path, cls))
    if info.file_size > MAX_META_BYTES:
        raise _error(cls, f"meta.json is {info.file_size} bytes; the limit is {MAX_META_BYTES} bytes", path)
    try:
        raw = zf.read(info)
    except _ZIP_ERRORS as exc:
        raise _error(cls, f"meta.json cannot be read: {_short(exc)}", path) from None
    except OSError as exc:
        raise _error(cls, f"cannot read the file: {exc.strerror or exc}", path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(cls, f"meta.json is not UTF-8 text (byte {exc.start})", path) from None
    depth = _json_depth(text)
    if depth > MAX_META_DEPTH:
        raise _error(cls, f"meta.json is nested more than {MAX_META_DEPTH} levels deep (the limit)", path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _error(cls, f"meta.json is not valid JSON: {exc}", path) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more digits than Python converts
        raise _error(cls, f"meta.json cannot be decoded: {_short(exc)}", path) from None


def _json_depth(text: str) -> int:
    """Maximum bracket nesting of a JSON text, skipping strings (a linear scan, no recursion)."""
    depth = best = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if best > MAX_META_DEPTH:
                    return best
        elif ch in "]}":
            depth -= 1
    return best


def _size(path: Path, cls: type[LogiCityError]) -> int:
    try:
        return os.stat(path).st_size
    except OSError as exc:
        raise _error(cls, f"cannot read the file: {exc.strerror or exc}", path) from None


def read_npy_header(fh: IO[bytes], name: str, path: Path, cls: type[LogiCityError], limit: int
                    ) -> tuple[tuple[int, ...], np.dtype, bool]:
    """Shape, dtype and order of the ``.npy`` header at the current position of ``fh`` (data not read).

    ``limit`` = the bytes available after the header start; an array needing more is refused (truncated or a
    crafted shape), so no later step can map or allocate more than the file holds."""
    start = fh.tell()
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise _error(cls, f"member {name} is a .npy array of unsupported format version "
                              f"{version[0]}.{version[1]} (1.0 or 2.0 expected)", path)
    except LogiCityError:
        raise
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - numpy's header parser raises ValueError, SyntaxError,
        # tokenize.TokenError, RecursionError, ... for crafted header text; all mean "not a plain .npy"
        raise _error(cls, f"member {name} is not a plain .npy array: {_short(exc)}", path) from None
    if not isinstance(dtype, np.dtype) or dtype.fields is not None or dtype.subdtype is not None \
            or dtype.kind not in PLAIN_KINDS:
        raise _error(cls, f"member {name} holds {dtype} values; only plain numbers and booleans are read "
                          f"(never Python objects)", path)
    if not isinstance(shape, tuple) or not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise _error(cls, f"member {name} has an invalid shape {shape!r:.80}", path)
    if any(d < 0 for d in shape):
        raise _error(cls, f"member {name} has a negative dimension in its shape {shape!r:.80}", path)
    if len(shape) > 32 or math.prod(d for d in shape if d) > _MAX_ELEMENTS:
        raise _error(cls, f"member {name} has an impossible shape {shape!r:.80}", path)
    nbytes = math.prod(shape) * dtype.itemsize  # Python integers: no overflow
    header = fh.tell() - start
    if header + nbytes > limit:
        raise _error(cls, f"member {name} is truncated or its shape {shape!r:.80} is larger than the file "
                          f"({nbytes} bytes of data, {max(0, limit - header)} present)", path)
    return shape, dtype, bool(fortran)


def member_data_offset(fh: IO[bytes], info: zipfile.ZipInfo, path: Path, cls: type[LogiCityError]) -> int:
    """File offset of a member's first byte, from its local header (checked against the central directory)."""
    fh.seek(info.header_offset)
    header = fh.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise _error(cls, f"corrupt local header for member {info.filename}", path)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_len + extra_len


def map_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path,
               cls: type[LogiCityError] = EpisodeFileError) -> np.ndarray:
    """A stored ``.npy`` member memory-mapped in place (read-only), after every header check."""
    file_size = _size(path, cls)
    _check_member_bounds(zf, info, path, cls, file_size)
    if info.compress_type != zipfile.ZIP_STORED:
        raise _error(cls, f"member {info.filename} is compressed; arrays must be stored uncompressed", path)
    try:
        with open(path, "rb") as fh:
            data_start = member_data_offset(fh, info, path, cls)
            available = min(info.file_size, file_size - data_start)
            if available < 0:
                raise _error(cls, f"member {info.filename} lies outside the file", path)
            fh.seek(data_start)
            shape, dtype, fortran = read_npy_header(fh, info.filename, path, cls, available)
            offset = fh.tell()
    except OSError as exc:
        raise _error(cls, f"cannot read the file: {exc.strerror or exc}", path) from None
    if math.prod(shape) == 0:
        return np.zeros(shape, dtype)
    try:
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order="F" if fortran else "C")
    except (OSError, ValueError, OverflowError) as exc:
        raise _error(cls, f"member {info.filename} cannot be mapped: {_short(exc)}", path) from None


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path,
                cls: type[LogiCityError] = EpisodeFileError) -> np.ndarray:
    """A ``.npy`` member read into memory (stored or deflated), after the same header checks; the data read
    is bounded by the member's declared size, itself bounded by the file."""
    _check_member_bounds(zf, info, path, cls, _size(path, cls))
    if info.compress_type != zipfile.ZIP_STORED and info.file_size > _MAX_DEFLATE_RATIO * info.compress_size + 4096:
        raise _error(cls, f"member {info.filename} claims {info.file_size} bytes from {info.compress_size} "
                          f"compressed bytes (more than deflate can produce)", path)
    try:
        with zf.open(info) as fh:
            shape, dtype, fortran = read_npy_header(fh, info.filename, path, cls, info.file_size)
            out = np.empty(math.prod(shape), dtype=dtype)
            # read mode opens a ZipExtFile (typeshed declares IO[bytes], which has no readinto)
            got = cast(zipfile.ZipExtFile, fh).readinto(out.view(np.uint8).data)
    except LogiCityError:
        raise
    except _ZIP_ERRORS as exc:
        raise _error(cls, f"member {info.filename} cannot be read: {_short(exc)}", path) from None
    except OSError as exc:
        raise _error(cls, f"cannot read the file: {exc.strerror or exc}", path) from None
    if got != out.nbytes:
        raise _error(cls, f"member {info.filename} is truncated", path)
    return out.reshape(shape[::-1]).transpose() if fortran else out.reshape(shape)
