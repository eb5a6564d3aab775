"""Reading the reference simulator's pickles without running their code: a restricted unpickler.

Why: the reference writes its episode caches with ``pickle`` (plain pickles whose tensors embed legacy
``torch.save`` blobs, or ``torch.save`` zip archives), and ``pickle.load`` / ``torch.load`` would call any function
a crafted file names (``os.system`` …). Here :class:`RestrictedUnpickler` resolves only the globals needed to
rebuild tensors and builtin containers — each mapped to *our* function, never the named one — and refuses every
other global with :class:`UnsafePickleError` naming the file and the global. Tensors come back as numpy arrays
(torch is not needed, nor imported). Sizes are checked against the bytes present, so a crafted stride or storage
size cannot read outside its data.
"""
from __future__ import annotations

import collections
import io
import pickle
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Callable

import numpy as np

from core.base.errors import EpisodeFileError

__all__ = ["UnsafePickleError", "RestrictedUnpickler", "load_restricted", "ALLOWED_GLOBALS"]

#: torch storage class → numpy dtype ("bfloat16" is widened to float32)
STORAGE_DTYPES: dict[str, str] = {
    "FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2", "BFloat16Storage": "bfloat16",
    "LongStorage": "<i8", "IntStorage": "<i4", "ShortStorage": "<i2", "CharStorage": "i1", "ByteStorage": "u1",
    "BoolStorage": "?",
}
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
#: largest number of elements of one rebuilt tensor (a crafted shape with stride 0 could ask for anything)
MAX_ELEMENTS = 1 << 31


class UnsafePickleError(EpisodeFileError):
    """The pickle names a global outside the allowed set (or is malformed); nothing of it was executed."""


class _Storage:
    """A storage type marker (``torch.FloatStorage``) resolved to a dtype."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = STORAGE_DTYPES[name]


def _as_numpy(raw: bytes, dtype: str) -> np.ndarray:
    if dtype == "bfloat16":   # the upper half of a float32
        u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return u.view(np.float32)
    return np.frombuffer(raw, dtype=np.dtype(dtype)).copy()


def _rebuild_tensor(storage: Any, offset: int, size: Any, stride: Any, *rest: Any) -> np.ndarray:
    """Our stand-in for ``torch._utils._rebuild_tensor(_v2)``: a numpy array, bounds-checked."""
    if not isinstance(storage, np.ndarray) or storage.ndim != 1:
        raise ValueError("tensor storage is not a storage")
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    offset = int(offset)
    if len(size) != len(stride) or any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
        raise ValueError(f"invalid tensor geometry size={size} stride={stride} offset={offset}")
    count = int(np.prod(size, dtype=np.int64)) if size else 1
    if count > MAX_ELEMENTS:
        raise ValueError(f"tensor of {count} elements is too large")
    if count == 0:
        return np.zeros(size, storage.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= len(storage):
        raise ValueError(f"tensor reads element {last} of a storage of {len(storage)}")
    item = storage.dtype.itemsize
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size, strides=[s * item for s in stride])
    return np.array(view)


def _ordered_dict(*args: Any) -> collections.OrderedDict:
    return collections.OrderedDict(*args)


class RestrictedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that admits tensor reconstruction and builtin containers only.

    ``storages``: for a ``torch.save`` zip archive, a function reading the raw bytes of storage ``key``."""

    def __init__(self, fh: BinaryIO, path: Path, storages: Callable[[str], bytes] | None = None) -> None:
        super().__init__(fh)
        self.path = path
        self._storages = storages
        self.legacy_keys: dict[str, tuple[str, np.ndarray | None]] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module in ("torch", "torch.storage") and name in STORAGE_DTYPES:
            return _Storage(name)
        fn = ALLOWED_GLOBALS.get((module, name))
        if fn is None:
            raise UnsafePickleError(f"refused to load: the pickle names the global {module}.{name}, which is not "
                                    f"a tensor or container constructor (nothing was executed)", self.path)
        if fn == "load_from_bytes":
            return self._load_from_bytes
        return fn

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise UnsafePickleError(f"refused to load: unknown persistent id {pid!r:.80}", self.path)
        kind, key, numel = pid[1], str(pid[2]), pid[4]
        if not isinstance(kind, _Storage) or not isinstance(numel, int) or numel < 0:
            raise UnsafePickleError(f"refused to load: malformed storage reference {pid!r:.80}", self.path)
        if self._storages is not None:   # zip archive: data/<key>
            raw = self._storages(key)
            item = 2 if kind.dtype == "bfloat16" else np.dtype(kind.dtype).itemsize
            if len(raw) < numel * item:
                raise UnsafePickleError(f"storage {key} holds {len(raw)} bytes, {numel * item} needed", self.path)
            return _as_numpy(raw[: numel * item], kind.dtype)
        # legacy format: the data follow the object pickle; hand out a placeholder filled in later
        self.legacy_keys.setdefault(key, (kind.dtype, None))
        return _LegacyRef(key)

    def _load_from_bytes(self, data: bytes) -> np.ndarray:
        """Stand-in for ``torch.storage._load_from_bytes``: a storage saved with ``torch.save`` (legacy or zip)."""
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError("storage bytes expected")
        return _load_any(io.BytesIO(bytes(data)), self.path, want_storage=True)


class _LegacyRef:
    def __init__(self, key: str) -> None:
        self.key = key


ALLOWED_GLOBALS: dict[tuple[str, str], Any] = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch.storage", "_load_from_bytes"): "load_from_bytes",
    ("collections", "OrderedDict"): _ordered_dict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "complex"): complex,
    ("_codecs", "encode"): lambda s, enc="latin1": str(s).encode(str(enc)),
}


def _read_legacy(fh: BinaryIO, path: Path, want_storage: bool) -> Any:
    """The legacy ``torch.save`` layout: magic, protocol, system info, the object, storage keys, then raw data."""
    def plain() -> Any:
        return RestrictedUnpickler(fh, path).load()

    magic = plain()
    if magic != _LEGACY_MAGIC:
        raise UnsafePickleError("not a torch.save stream (bad magic number)", path)
    plain()   # protocol version
    plain()   # system info (endianness, type sizes)
    up = RestrictedUnpickler(fh, path)
    obj = up.load()
    keys = RestrictedUnpickler(fh, path).load()
    if not isinstance(keys, list):
        raise UnsafePickleError("malformed torch.save stream (storage key list)", path)
    data: dict[str, np.ndarray] = {}
    for key in keys:
        key = str(key)
        head = fh.read(8)
        if len(head) != 8 or key not in up.legacy_keys:
            raise UnsafePickleError(f"malformed torch.save stream (storage {key})", path)
        numel = struct.unpack("<q", head)[0]
        dtype = up.legacy_keys[key][0]
        item = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
        raw = fh.read(numel * item) if 0 <= numel <= MAX_ELEMENTS else b""
        if numel < 0 or len(raw) != numel * item:
            raise UnsafePickleError(f"storage {key} is truncated", path)
        data[key] = _as_numpy(raw, dtype)
    return _resolve(obj, data, path)


def _resolve(obj: Any, data: dict[str, np.ndarray], path: Path) -> Any:
    if isinstance(obj, _LegacyRef):
        if obj.key not in data:
            raise UnsafePickleError(f"storage {obj.key} missing", path)
        return data[obj.key]
    return obj


def _load_any(fh: BinaryIO, path: Path, want_storage: bool = False) -> Any:
    head = fh.read(4)
    fh.seek(0)
    if head.startswith(b"PK"):
        return _load_zip(fh, path)
    if want_storage:
        return _read_legacy(fh, path, want_storage)
    return RestrictedUnpickler(fh, path).load()


def _load_zip(fh: BinaryIO, path: Path) -> Any:
    """A ``torch.save`` zip archive: ``<root>/data.pkl`` plus ``<root>/data/<key>`` storages."""
    try:
        zf = zipfile.ZipFile(fh)
    except zipfile.BadZipFile as exc:
        raise UnsafePickleError(f"not a valid torch zip archive: {exc}", path) from None
    with zf:
        names = zf.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
        if len(pkl) != 1:
            raise UnsafePickleError("torch zip archive without a single data.pkl", path)
        root = pkl[0][: -len("data.pkl")]
        limit = sum(i.file_size for i in zf.infolist())

        def storage(key: str) -> bytes:
            name = f"{root}data/{key}"
            if name not in names:
                raise UnsafePickleError(f"storage {key} missing from the archive", path)
            return zf.read(name)

        if limit > 1 << 34:
            raise UnsafePickleError("archive too large", path)
        with zf.open(pkl[0]) as inner:
            return RestrictedUnpickler(io.BytesIO(inner.read()), path, storage).load()


def load_restricted(path: str | Path) -> Any:
    """Load a pickle (or a ``torch.save`` file) admitting only tensors (as numpy arrays) and plain data.

    Raises :class:`UnsafePickleError` (a refused global, a malformed stream) naming the file."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            return _load_any(fh, path)
    except UnsafePickleError:
        raise
    except FileNotFoundError:
        raise EpisodeFileError("file not found", path) from None
    except OSError as exc:
        raise EpisodeFileError(f"cannot read the file: {exc.strerror or exc}", path) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError,
            struct.error, RecursionError, MemoryError, UnicodeDecodeError, zipfile.BadZipFile, zipfile.LargeZipFile,
            zlib.error, NotImplementedError, OverflowError, RuntimeError) as exc:
        raise UnsafePickleError(f"not a readable pickle: {type(exc).__name__}: {str(exc)[:200]}", path) from None
