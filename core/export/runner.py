"""Running an export: shards on a backend, resume after an interruption, the manifest.

Why it is resumable and reproducible: the shard plan is a pure function of the options, each shard writes its
files atomically with reproducible bytes, and only after a shard's files are complete does the driver record it
(``.export/shard-NNNNN.json``, atomically, with every file's SHA-256). A rerun after a crash, a kill or a cancel
re-plans, checks that the folder belongs to the same export (``.export/plan.json`` holds the configuration hash),
skips the shards whose record and files agree, runs the rest, finalizes and writes ``manifest.json`` last. So the
output of an interrupted-then-resumed export is byte-identical to an uninterrupted one, whatever the backend or
the number of workers (tests/core/export/test_resume.py kills a real export mid-way).

Layout of an output folder::

    manifest.json          written last: kind, options, configuration hash, seeds, versions, counts, files
    <the exporter's files> (episodes/, data/, minari/, videos/, pddl/ …)
    .export/               resume state: plan.json, one record per finished shard, runs.jsonl (a log of each
                           run: backend, workers, seconds, retried failures; the only file that differs by run)

Backends (:mod:`core.export.backends`): ``inline`` (this process), ``local`` (a process pool, the default) and
``ray`` (shards as Ray tasks, local or on a cluster). A shard that raises is retried up to ``retries`` times; every
failure is reported (``ExportReport.failures``, the run log); a shard that still fails ends the export with an
:class:`ExportError` naming it, and what was finished stays recorded for the next run.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping

from core.export.backends import make_backend
from core.export.registry import ExportError, ExporterSpec, Finalized, Shard, ShardResult, get_exporter
from core.export.shards import ShardFailure, run_shard_in_worker, sha256_file
from core.io.fileio import atomic_write_text, clean_stale_temps, host_tag, pid_alive

__all__ = ["run_export", "ExportReport", "ShardFailure", "config_hash", "sha256_file", "run_shard_in_worker",
           "STATE_DIR", "MANIFEST", "Cancelled"]

STATE_DIR = ".export"
MANIFEST = "manifest.json"
FORMAT = "logicity-export"
FORMAT_VERSION = 1


class Cancelled(Exception):
    """The export was cancelled; finished shards stay recorded, a rerun resumes."""


@dataclass
class ExportReport:
    kind: str
    out: Path
    manifest: dict[str, Any]
    ran: list[str] = field(default_factory=list)        # shards run by this call
    skipped: list[str] = field(default_factory=list)    # shards found finished
    failures: list[ShardFailure] = field(default_factory=list)
    seconds: float = 0.0
    backend: str = "local"
    workers: int = 1


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def config_hash(spec: ExporterSpec, options: Mapping[str, Any]) -> tuple[str, dict[str, dict[str, str]]]:
    """SHA-256 of the exporter, its version, the options and the contents of its input files."""
    files: dict[str, dict[str, str]] = {}
    for role, path in sorted(spec.config_files(options).items()):
        p = Path(path)
        try:
            files[role] = {"path": str(p), "sha256": sha256_file(p)}
        except OSError as exc:
            raise ExportError(f"cannot read the {role} file: {exc.strerror or exc}", p) from None
    text = _canonical({"kind": spec.name, "exporter_version": spec.version, "options": dict(options),
                       "files": {r: f["sha256"] for r, f in files.items()}})
    return hashlib.sha256(text.encode()).hexdigest(), files


def _versions(spec: ExporterSpec) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("logicity-studio", "numpy", *spec.packages):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


# ---- the driver side ---------------------------------------------------------------------------------------------

def _record_ok(out: Path, record: Mapping[str, Any]) -> bool:
    """A finished shard's record still matches its files (sizes and hashes)."""
    try:
        for f in record["files"]:
            p = out / f["path"]
            if not p.is_file() or p.stat().st_size != f["bytes"] or sha256_file(p) != f["sha256"]:
                return False
    except (OSError, KeyError, TypeError):
        return False
    return True


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _prepare_folder(out: Path, spec: ExporterSpec, chash: str, shards: list[Shard], overwrite: bool) -> None:
    """Claim ``out`` for this export: empty, or an export of the same configuration (resume)."""
    if out.exists() and not out.is_dir():
        raise ExportError("the output is a file, not a folder", out)
    out.mkdir(parents=True, exist_ok=True)
    state = out / STATE_DIR
    plan_path = state / "plan.json"
    plan = _read_json(plan_path) if plan_path.exists() else None
    if plan is not None and plan.get("config_hash") != chash:
        if not overwrite:
            raise ExportError(f"the folder holds another export ({plan.get('kind')}, configuration "
                              f"{str(plan.get('config_hash'))[:12]}…, this one is {chash[:12]}…); choose another "
                              f"folder, or overwrite it (--overwrite)", out)
        _clear_previous(out, plan)
        plan = None
    if plan is None:
        entries = [e.name for e in out.iterdir() if e.name != STATE_DIR]
        if entries and not overwrite:
            raise ExportError(f"the folder is not empty ({', '.join(sorted(entries)[:3])}…) and holds no export; "
                              f"choose an empty or new folder", out)
        state.mkdir(exist_ok=True)
        atomic_write_text(plan_path, json.dumps({"kind": spec.name, "config_hash": chash,
                                                 "shards": [s.to_json() for s in shards]}, indent=1))
    _lock(state, out)
    for folder in [out, state, *[p for p in out.rglob("*") if p.is_dir()]]:
        clean_stale_temps(folder)


LOCK = "lock"


def _lock(state: Path, out: Path) -> None:
    """One run per folder: ``.export/lock`` names the running process (host tag and pid); a lock whose process is
    gone (a killed run) is taken over."""
    path = state / LOCK
    try:
        host, pid = path.read_text().split()
        pid_i = int(pid)
    except (OSError, ValueError):
        host, pid_i = "", -1
    if host == host_tag() and pid_i != os.getpid() and pid_alive(pid_i):
        raise ExportError(f"another export (process {pid_i}) is writing into this folder; wait for it or cancel it",
                          out)
    atomic_write_text(path, f"{host_tag()} {os.getpid()}\n")


def _unlock(state: Path) -> None:
    try:
        (state / LOCK).unlink()
    except OSError:
        pass


def _clear_previous(out: Path, plan: Mapping[str, Any]) -> None:
    """``--overwrite`` of another export: remove the files its records and manifest list (nothing else)."""
    state = out / STATE_DIR
    listed: set[str] = set()
    for rec in state.glob("shard-*.json"):
        data = _read_json(rec) or {}
        listed.update(f.get("path", "") for f in data.get("files", []) if isinstance(f, dict))
        rec.unlink(missing_ok=True)
    man = _read_json(out / MANIFEST) or {}
    listed.update(f.get("path", "") for f in man.get("files", []) if isinstance(f, dict))
    for rel in listed:
        p = (out / rel).resolve()
        if rel and out.resolve() in p.parents and p.is_file():
            p.unlink()
    (out / MANIFEST).unlink(missing_ok=True)
    (state / "plan.json").unlink(missing_ok=True)


def run_export(kind: str, options: Mapping[str, Any], out: str | Path, *, backend: str = "local",
               workers: int | None = None, ray_address: str | None = None, retries: int = 2,
               overwrite: bool = False, progress: Callable[[int, int, str], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> ExportReport:
    """Run (or resume) the export ``kind`` into the folder ``out``.

    ``progress(done, total, text)`` is called in this thread after each shard and at the end; ``cancelled()`` is
    polled between shards (running pool workers or Ray tasks are stopped; their partial files are temporary files
    that the next run removes). Returns what was done; raises :class:`ExportError` or :class:`Cancelled`.
    """
    t0 = time.perf_counter()
    spec = get_exporter(kind)
    opts = spec.normalise(options)
    shards = spec.plan(opts)
    if retries < 0:
        raise ExportError(f"retries must be >= 0, got {retries}")
    chash, files = config_hash(spec, opts)
    out = Path(out)
    _prepare_folder(out, spec, chash, shards, overwrite)
    state = out / STATE_DIR
    try:
        records: dict[str, dict[str, Any]] = {}
        for s in shards:
            rec = _read_json(state / f"{s.name}.json")
            if rec is not None and _record_ok(out, rec):
                records[s.name] = rec
        report = ExportReport(kind, out, {}, skipped=sorted(records), backend=backend)
        pending = [s for s in shards if s.name not in records]
        total = len(shards)
        if progress:
            progress(len(records), total, f"{len(records)} of {total} shards already done" if records else "starting")
        if pending:
            runner = make_backend(backend, workers=workers, ray_address=ray_address, retries=retries)
            report.workers = runner.workers

            def on_done(result: dict[str, Any]) -> None:
                rec = {"shard": result["shard"], "files": result["files"], "counts": result["counts"]}
                atomic_write_text(state / f"{result['shard']}.json", json.dumps(rec, indent=1, sort_keys=True))
                records[result["shard"]] = rec
                report.ran.append(result["shard"])
                if progress:
                    progress(len(records), total, f"{result['shard']} done")

            def on_failure(failure: ShardFailure) -> None:
                report.failures.append(failure)
                if progress:
                    progress(len(records), total, f"{failure.shard} failed (attempt {failure.attempt}), retrying: "
                                                  f"{failure.error}")

            try:
                runner.run(kind, opts, [s.to_json() for s in pending], str(out), on_done, on_failure,
                           cancelled or (lambda: False))
            except BaseException as exc:
                _log_run(state, report, backend, time.perf_counter() - t0, complete=False, error=str(exc)[:300])
                raise
        if cancelled and cancelled():
            _log_run(state, report, backend, time.perf_counter() - t0, complete=False, error="cancelled")
            raise Cancelled(f"cancelled with {len(records)} of {total} shards done")
        results = [ShardResult(s.name, [f["path"] for f in records[s.name]["files"]], dict(records[s.name]["counts"]))
                   for s in shards]
        if progress:
            progress(total, total, "finalizing")
        fin = spec.finalize(opts, results, out)
        report.manifest = _write_manifest(out, spec, opts, chash, files, shards, records, fin)
        report.seconds = time.perf_counter() - t0
        _log_run(state, report, backend, report.seconds, complete=True)
        if progress:
            progress(total, total, "done")
        return report
    finally:
        _unlock(state)


def _write_manifest(out: Path, spec: ExporterSpec, opts: Mapping[str, Any], chash: str,
                    files: Mapping[str, Any], shards: list[Shard], records: Mapping[str, Any],
                    fin: Finalized) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for s in shards:
        for k, v in records[s.name]["counts"].items():
            counts[k] = counts.get(k, 0) + int(v)
    counts.update(fin.counts)
    final_files = [{"path": rel, "bytes": (out / rel).stat().st_size, "sha256": sha256_file(out / rel)}
                   for rel in fin.files]
    all_files = [{"path": f["path"], "bytes": f["bytes"], "sha256": f["sha256"]}
                 for s in shards for f in records[s.name]["files"]] + final_files
    counts["shards"] = len(shards)
    counts["files"] = len(all_files)
    counts["bytes"] = int(sum(f["bytes"] for f in all_files))
    manifest = {
        "format": FORMAT, "version": FORMAT_VERSION, "kind": spec.name, "title": spec.title,
        "exporter_version": spec.version, "options": dict(opts), "config_hash": chash, "config_files": dict(files),
        "seeds": {s.name: s.params.get("seeds", s.params.get("seed")) for s in shards},
        "versions": _versions(spec), "counts": dict(sorted(counts.items())),
        "shards": [{"name": s.name, "params": s.params, "counts": records[s.name]["counts"],
                    "files": [f["path"] for f in records[s.name]["files"]]} for s in shards],
        "files": all_files, **fin.extra,
    }
    atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=1, sort_keys=False) + "\n")
    return manifest


def _log_run(state: Path, report: ExportReport, backend: str, seconds: float, complete: bool,
             error: str | None = None) -> None:
    """Append one line to ``.export/runs.jsonl`` (best effort: the log never fails an export)."""
    line = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "backend": backend, "workers": report.workers,
            "ran": len(report.ran), "skipped": len(report.skipped), "seconds": round(seconds, 3),
            "complete": complete, "failures": [f.__dict__ for f in report.failures]}
    if error:
        line["stopped"] = error
    try:
        with open(state / "runs.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    except OSError:
        pass
