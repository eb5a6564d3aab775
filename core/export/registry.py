"""Dataset exporters in one registry: what each produces, its options, how it splits into shards.

Why a registry of specs rather than one function per format: every export shares the same machinery — option
checking, a manifest, resuming after an interruption, running shards on a local process pool or a Ray cluster, the
CLI (``python main.py export KIND``) and the studio's File ▸ Export dialog. An exporter only says *what* one shard
writes and what the last step (``finalize``) adds; :mod:`core.export.runner` does the rest.

Contract of an exporter (``ExporterSpec``):

* ``options``: the typed option schema (:class:`Option`); the CLI flags and the dialog's fields are built from it.
* ``plan(options) -> [Shard]``: the shards, a pure function of the options (never of the number of workers), each
  with its own seeds in ``params`` — so any backend, any worker count and any resume give the same shards.
* ``run_shard(options, shard, out) -> ShardResult``: writes the shard's files under ``out`` (atomically, with
  reproducible bytes: same options → same bytes) and returns the relative paths it wrote and its counts. It runs in
  another process (a pool worker, a Ray task): it must be a module-level function and touch only its own files.
* ``finalize(options, results, out) -> Finalized``: runs once in the driver after every shard is done (e.g. merge
  the shards into one Minari dataset); also reproducible.
* ``config_files(options) -> {role: path}``: the input files whose contents the manifest hashes.

Exporters register themselves at import; the modules named in :data:`EXPORTER_MODULES` are imported on first use
(a module that is not there yet is skipped). Heavy libraries are imported inside the functions, never here.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from core.base.errors import LogiCityError

__all__ = ["ExportError", "Option", "Shard", "ShardResult", "Finalized", "ExporterSpec", "register", "get_exporter",
           "exporter_names", "exporters", "EXPORTER_MODULES"]

#: modules that register exporters at import (order = listing order)
EXPORTER_MODULES: tuple[str, ...] = (
    "core.export.episodes", "core.export.spf", "core.export.parquet", "core.export.video", "core.export.pddl_export",
    "core.export.study_export", "core.export.vap_export", "core.export.runs_export",
)


class ExportError(LogiCityError):
    """A dataset export cannot run (bad option, output folder in use, a shard failed after its retries)."""


@dataclass(frozen=True)
class Option:
    """One exporter option. ``kind``: int, float, str, bool, choice or path; ``name`` is a Python identifier,
    the CLI flag is ``--name-with-dashes``."""

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def parse(self, value: Any, exporter: str) -> Any:
        """``value`` converted to this option's type and range; an :class:`ExportError` names the option."""
        where = f"export {exporter}: option {self.flag}"
        if value is None:
            return self.default
        try:
            if self.kind == "bool":
                if isinstance(value, str):
                    low = value.strip().lower()
                    if low not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                        raise ValueError(value)
                    value = low in ("1", "true", "yes", "on")
                elif not isinstance(value, bool):
                    raise ValueError(value)
            elif self.kind == "int":
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError(value)
                value = int(value)
            elif self.kind == "float":
                value = float(value)
            elif self.kind == "path":   # absolute: workers (other processes, Ray nodes) may run elsewhere
                value = os.path.abspath(os.path.expanduser(str(value))) if str(value) else ""
            elif self.kind in ("str", "choice"):
                value = str(value)
            else:  # pragma: no cover - a programming error in an exporter
                raise TypeError(f"unknown option kind {self.kind!r}")
        except (TypeError, ValueError):
            raise ExportError(f"{where} must be {'a whole number' if self.kind == 'int' else self.kind}, "
                              f"got {value!r:.60}") from None
        if self.kind == "choice" and value not in self.choices:
            raise ExportError(f"{where} must be one of {', '.join(self.choices)}, got {value!r:.60}")
        if self.minimum is not None and value < self.minimum:
            raise ExportError(f"{where} must be >= {self.minimum:g}, got {value}")
        if self.maximum is not None and value > self.maximum:
            raise ExportError(f"{where} must be <= {self.maximum:g}, got {value}")
        return value


@dataclass(frozen=True)
class Shard:
    """One unit of work: ``name`` (``shard-00003``), its position, and JSON-able parameters (seeds, indices)."""

    index: int
    name: str
    params: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "params": self.params}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Shard":
        return cls(int(d["index"]), str(d["name"]), dict(d["params"]))


def shard_name(index: int) -> str:
    return f"shard-{index:05d}"


@dataclass
class ShardResult:
    """What a shard wrote: paths relative to the output folder, and counts (episodes, steps, frames …)."""

    shard: str
    files: list[str]
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class Finalized:
    """What ``finalize`` wrote (relative paths), totals it adds, and extra manifest fields."""

    files: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def _no_finalize(options: Mapping[str, Any], results: list[ShardResult], out: Path) -> Finalized:
    return Finalized()


def _no_files(options: Mapping[str, Any]) -> dict[str, Path]:
    return {}


@dataclass(frozen=True)
class ExporterSpec:
    name: str
    title: str
    description: str
    options: tuple[Option, ...]
    plan: Callable[[Mapping[str, Any]], list[Shard]]
    run_shard: Callable[[Mapping[str, Any], Shard, Path], ShardResult]
    finalize: Callable[[Mapping[str, Any], list[ShardResult], Path], Finalized] = _no_finalize
    config_files: Callable[[Mapping[str, Any]], dict[str, Path]] = _no_files
    #: distributions whose versions the manifest records (besides Python, numpy and the studio)
    packages: tuple[str, ...] = ()
    #: bump when the bytes an exporter writes change: an unfinished export of another version is not resumed
    version: int = 1
    #: extra checks of the parsed options (raise ExportError), run before any work
    check: Callable[[Mapping[str, Any]], None] | None = None

    def option(self, name: str) -> Option:
        for o in self.options:
            if o.name == name:
                return o
        raise KeyError(name)

    def normalise(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every option with its default filled in and its value checked; unknown names are refused."""
        known = {o.name for o in self.options}
        unknown = sorted(set(given) - known)
        if unknown:
            raise ExportError(f"export {self.name}: unknown option {unknown[0]!r} (options: {', '.join(sorted(known))})")
        out = {o.name: o.parse(given.get(o.name), self.name) for o in self.options}
        if self.check is not None:
            self.check(out)
        return out


_REGISTRY: dict[str, ExporterSpec] = {}
_loaded = False


def register(spec: ExporterSpec, replace: bool = False) -> ExporterSpec:
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"an exporter named {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in EXPORTER_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:   # the exporter exists but something it needs does not: say so
                raise
            # an exporter whose module is not built yet (or that wraps a feature not built yet) is skipped


def exporters() -> list[ExporterSpec]:
    _load()
    return list(_REGISTRY.values())


def exporter_names() -> list[str]:
    return [s.name for s in exporters()]


def get_exporter(name: str) -> ExporterSpec:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ExportError(f"unknown exporter {name!r} (exporters: {', '.join(sorted(_REGISTRY))})") from None
