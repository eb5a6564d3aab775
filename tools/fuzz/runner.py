"""Running the loader fuzzer: inputs, crash and hang detection, reproducers and the per-family report.

A *crash* is any exception that is not a :class:`~core.base.errors.LogiCityError` (the loaders' contract: bad input
gives a located user error, never a traceback), also a ``MemoryError`` under the memory limit and a worker process
killed by a signal. A *hang* is an input that takes longer than ``timeout`` seconds (it is interrupted by an alarm).
Crashes are grouped by signature (exception type and the innermost frame in this repository's code); the first
input of each signature is written to ``out/<family>/`` with its traceback, so it can be replayed with
``python -m tools.fuzz --replay FILE --family NAME``.

``make fuzz`` runs every family in its own worker process (``--jobs`` at a time) under an address-space limit, so
an input that would exhaust memory is caught as a ``MemoryError`` instead of taking the machine down; a worker
that dies anyway is restarted after the input that killed it. The small fixed-seed slice in the test suite
(tests/tools/test_fuzz.py) calls :func:`run_family` in-process.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tools.fuzz.families import FAMILIES, ROOT, Family, prepare
from tools.fuzz.mutate import mutate_bytes, mutate_npz, mutate_text, rng_for

#: Default seconds after which an input counts as a hang.
HANG_SECONDS = 10.0
#: Address-space limit of a worker process (bytes): far above a legitimate load of the small seed files.
MEMORY_LIMIT = 6 << 30


@dataclass
class Finding:
    """One crash signature (or hang) with the first input index that showed it and how many inputs did."""

    kind: str                 # "crash" or "hang"
    signature: str
    message: str
    index: int
    count: int = 1
    reproducer: str | None = None


@dataclass
class FamilyReport:
    family: str
    inputs: int = 0
    crashes: int = 0          # inputs that crashed
    hangs: int = 0            # inputs that took longer than the limit
    rejected: int = 0         # inputs refused with a LogiCityError (the expected outcome of most)
    accepted: int = 0         # inputs that loaded
    unlocated: int = 0        # LogiCityErrors that name no file (informative)
    seconds: float = 0.0
    slowest: float = 0.0
    findings: list[Finding] = field(default_factory=list)

    def merge(self, other: "FamilyReport") -> None:
        for k in ("inputs", "crashes", "hangs", "rejected", "accepted", "unlocated", "seconds"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.slowest = max(self.slowest, other.slowest)
        known = {(f.kind, f.signature): f for f in self.findings}
        for f in other.findings:
            if (f.kind, f.signature) in known:
                known[(f.kind, f.signature)].count += f.count
            else:
                self.findings.append(f)
                known[(f.kind, f.signature)] = f


class _Hang(BaseException):
    """Raised by the alarm inside a slow input (a BaseException, so loaders' ``except Exception`` let it pass)."""


def _on_alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise _Hang()


def make_input(family: Family, seeds: list[tuple[str, bytes]], seed: int, index: int) -> tuple[str, bytes]:
    """Input ``index`` of ``family``: a seed with 1-4 mutations, a pure function of its arguments."""
    rng = rng_for(seed, family.name, index)
    ext, data = seeds[rng.randrange(len(seeds))]
    if family.kind == "npz":
        for _ in range(rng.choice([1, 1, 2, 3])):
            data = mutate_npz(data, rng)
        return ext, data
    texts = [s.decode("utf-8", "surrogateescape") for _, s in seeds]
    vocab = sorted({w for t in texts for w in _words(t)})
    text = data.decode("utf-8", "surrogateescape")
    for _ in range(rng.choice([1, 1, 2, 3, 4])):
        if rng.random() < 0.12:
            text = mutate_bytes(text.encode("utf-8", "surrogateescape"), rng).decode("utf-8", "surrogateescape")
        else:
            text = mutate_text(text, rng, texts, vocab)
    return ext, text.encode("utf-8", "surrogateescape")


_vocab_cache: dict[int, list[str]] = {}


def _words(text: str) -> list[str]:
    key = hash(text)
    if key not in _vocab_cache:
        import re

        _vocab_cache[key] = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)))
    return _vocab_cache[key]


def _signature(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f.filename.startswith(str(ROOT)) and "/tools/fuzz/" not in f.filename]
    where = ours[-1] if ours else (frames[-1] if frames else None)
    loc = f"{Path(where.filename).relative_to(ROOT) if where and where.filename.startswith(str(ROOT)) else (where.filename if where else '?')}:{where.lineno if where else '?'}"
    return f"{type(exc).__name__} at {loc}"


def _save_reproducer(out: Path | None, family: str, finding: Finding, ext: str, data: bytes, detail: str) -> None:
    if out is None:
        return
    folder = out / family
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{finding.kind}-{hashlib.sha1(finding.signature.encode()).hexdigest()[:10]}"
    (folder / f"{stem}{ext}").write_bytes(data)
    (folder / f"{stem}.txt").write_text(f"{finding.kind}: {finding.signature}\ninput index {finding.index}\n\n"
                                        f"{detail}\n")
    finding.reproducer = str(folder / f"{stem}{ext}")


def run_one(family: Family, ext: str, data: bytes, work: Path, timeout: float) -> tuple[str, BaseException | None,
                                                                                         float]:
    """Run one input: ("ok" | "rejected" | "crash" | "hang", the exception, seconds)."""
    from core.base.errors import LogiCityError

    use_alarm = timeout > 0 and hasattr(signal, "setitimer")
    old = signal.signal(signal.SIGALRM, _on_alarm) if use_alarm else None
    t0 = time.perf_counter()
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                family.target(data, ext, work)
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
        outcome, exc = "ok", None
    except _Hang as e:
        outcome, exc = "hang", e
    except LogiCityError as e:
        outcome, exc = "rejected", e
    except RecursionError as e:   # before BaseException: a deep structure must be a located error too
        outcome, exc = "crash", e
    except Exception as e:  # noqa: BLE001 - this is what the fuzzer looks for
        outcome, exc = "crash", e
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    seconds = time.perf_counter() - t0
    if outcome != "hang" and timeout > 0 and seconds > timeout:
        outcome = "hang"
    return outcome, exc, seconds


def run_family(name: str, inputs: int, seed: int = 0, *, start: int = 0, timeout: float = HANG_SECONDS,
               work: Path | None = None, out: Path | None = None, progress: Path | None = None) -> FamilyReport:
    """Fuzz one family with inputs ``start .. start+inputs-1`` (in this process); see the module docstring."""
    family = FAMILIES[name]
    own_work = work is None
    work = Path(tempfile.mkdtemp(prefix="logicity-fuzz-")) if work is None else work
    try:
        prepare(work)
        seeds = family.seeds(work)
        report = FamilyReport(name)
        findings: dict[tuple[str, str], Finding] = {}
        t_start = time.perf_counter()
        for index in range(start, start + inputs):
            if progress is not None:
                progress.write_text(str(index))
            ext, data = make_input(family, seeds, seed, index)
            outcome, exc, seconds = run_one(family, ext, data, work, timeout)
            report.inputs += 1
            report.slowest = max(report.slowest, seconds)
            if outcome == "ok":
                report.accepted += 1
            elif outcome == "rejected":
                report.rejected += 1
                if getattr(exc, "file", None) is None:
                    report.unlocated += 1
            else:
                if outcome == "crash":
                    report.crashes += 1
                    sig = _signature(exc)
                    message = f"{type(exc).__name__}: {str(exc)[:300]}"
                    detail = "".join(traceback.format_exception(exc))[-6000:]
                else:
                    report.hangs += 1
                    sig = f"hang in {family.name} (> {timeout:g} s)"
                    message = f"took {seconds:.1f} s"
                    detail = message
                key = (outcome, sig)
                if key in findings:
                    findings[key].count += 1
                else:
                    f = Finding(outcome, sig, message, index)
                    findings[key] = f
                    _save_reproducer(out, name, f, ext, data, detail)
        report.seconds = time.perf_counter() - t_start
        report.findings = list(findings.values())
        return report
    finally:
        if own_work:
            import shutil

            shutil.rmtree(work, ignore_errors=True)


# ---- worker processes ----------------------------------------------------------------------------------------

def _limit_memory(limit: int) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):   # pragma: no cover - not on this platform
        pass


def _worker_main(args: argparse.Namespace) -> None:
    _limit_memory(args.memory)
    report = run_family(args.family, args.inputs, args.seed, start=args.start, timeout=args.timeout,
                        work=Path(args.work), out=Path(args.out), progress=Path(args.progress))
    Path(args.result).write_text(json.dumps(asdict(report)))


def _load_report(path: Path) -> FamilyReport:
    d = json.loads(path.read_text())
    findings = [Finding(**f) for f in d.pop("findings")]
    return FamilyReport(**d, findings=findings)


def fuzz_family_in_workers(name: str, inputs: int, seed: int, timeout: float, out: Path, memory: int) -> FamilyReport:
    """Run a family in a worker process; a worker killed by a signal (or out of memory despite the limit) counts
    as a crash of the input it was on, and a new worker continues after it."""
    total = FamilyReport(name)
    work = Path(tempfile.mkdtemp(prefix=f"logicity-fuzz-{name}-"))
    start = 0
    failed_starts = 0
    t0 = time.perf_counter()
    try:
        while start < inputs:
            progress, result = work / "progress", work / "result.json"
            for p in (progress, result):
                p.unlink(missing_ok=True)
            cmd = [sys.executable, "-m", "tools.fuzz", "--worker", "--family", name, "--inputs", str(inputs - start),
                   "--start", str(start), "--seed", str(seed), "--timeout", str(timeout), "--work", str(work),
                   "--out", str(out), "--progress", str(progress), "--result", str(result), "--memory", str(memory)]
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if proc.returncode == 0 and result.exists():
                total.merge(_load_report(result))
                break
            if not progress.exists():   # died before its first input (setup, an import): not an input's fault
                failed_starts += 1
                if failed_starts > 3:
                    raise RuntimeError(f"the {name} fuzz worker cannot start:\n{proc.stderr[-3000:]}")
                time.sleep(5)
                continue
            at = int(progress.read_text())
            part = FamilyReport(name, inputs=at - start + 1, crashes=1)
            f = Finding("crash", f"worker died ({proc.returncode}) in {name}", (proc.stderr or "")[-300:], at)
            fam = FAMILIES[name]
            prepare(work)
            ext, data = make_input(fam, fam.seeds(work), seed, at)
            _save_reproducer(out, name, f, ext, data, proc.stderr[-6000:] if proc.stderr else "")
            part.findings.append(f)
            total.merge(part)
            start = at + 1
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    total.seconds = time.perf_counter() - t0
    return total


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}, {os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}"


def format_report(reports: list[FamilyReport], seed: int, timeout: float, wall: float) -> str:
    lines = [f"Loader fuzzing: seed {seed}, hang limit {timeout:g} s, wall time {wall:.0f} s", f"Machine: {machine()}",
             "", "| family | inputs | crashes | hangs | rejected | loaded | unlocated errors | time (s) | slowest (s) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in reports:
        lines.append(f"| {r.family} | {r.inputs} | {r.crashes} | {r.hangs} | {r.rejected} | {r.accepted} | "
                     f"{r.unlocated} | {r.seconds:.0f} | {r.slowest:.2f} |")
    for r in reports:
        for f in sorted(r.findings, key=lambda f: -f.count):
            lines.append(f"- {r.family}: {f.kind} x{f.count}: {f.signature} — {f.message[:160]!r} "
                         f"(first input #{f.index}{', ' + f.reproducer if f.reproducer else ''})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.fuzz", description="Fuzz every loader family (make fuzz).")
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES), help="only these families (repeatable)")
    ap.add_argument("--inputs", type=int, default=10_000, help="inputs per family (default 10000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=HANG_SECONDS, help="seconds after which an input is a hang")
    ap.add_argument("--jobs", type=int, default=max(1, min(4, (os.cpu_count() or 2))), help="families at a time")
    ap.add_argument("--out", default="fuzz-out", help="folder for reproducers and report.json")
    ap.add_argument("--memory", type=int, default=MEMORY_LIMIT, help="address-space limit per worker (bytes)")
    ap.add_argument("--replay", help="run one input file through --family and show the outcome")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--start", "--work", "--progress", "--result"):
        ap.add_argument(hidden, help=argparse.SUPPRESS, default="0" if hidden == "--start" else None)
    args = ap.parse_args(argv)
    if args.worker:
        args.family = args.family[0]
        args.start = int(args.start)
        _worker_main(args)
        return 0
    if args.replay:
        fam = FAMILIES[(args.family or [""])[0]]
        path = Path(args.replay)
        with tempfile.TemporaryDirectory(prefix="logicity-fuzz-replay-") as tmp:
            prepare(Path(tmp))
            outcome, exc, seconds = run_one(fam, path.suffix, path.read_bytes(), Path(tmp), args.timeout)
        print(f"{outcome} in {seconds:.2f} s")
        if exc is not None:
            print("".join(traceback.format_exception(exc)) if outcome == "crash" else exc)
        return 1 if outcome in ("crash", "hang") else 0
    names = args.family or list(FAMILIES)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    from concurrent.futures import ThreadPoolExecutor

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {n: pool.submit(fuzz_family_in_workers, n, args.inputs, args.seed, args.timeout, out, args.memory)
                   for n in names}
        reports = []
        for n in names:
            r = futures[n].result()
            reports.append(r)
            print(f"{n}: {r.inputs} inputs, {r.crashes} crashes, {r.hangs} hangs, {r.seconds:.0f} s", flush=True)
    wall = time.perf_counter() - t0
    text = format_report(reports, args.seed, args.timeout, wall)
    (out / "report.json").write_text(json.dumps({"seed": args.seed, "timeout": args.timeout, "wall": wall,
                                                 "machine": machine(), "families": [asdict(r) for r in reports]},
                                                indent=1))
    (out / "report.md").write_text(text + "\n")
    print()
    print(text)
    return 1 if any(r.crashes or r.hangs for r in reports) else 0
