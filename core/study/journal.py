"""Participant journals: every answer on disk (fsync) before the next question appears (docs/study.md "Journals").

Why append-only JSON lines with fsync: a study session can be killed at any moment (a crash, a power cut, an
impatient participant closing the laptop). Each answer is one line written with a single ``write`` on a file
opened for appending, then ``os.fsync``; the runner shows the next question only after :meth:`Journal.append`
returns. So a kill loses at most the answer being given, and never an earlier one. A kill in the middle of a
write can leave a torn last line: reopening drops it (truncating the file back to the last complete line) and
resumes at the next unanswered question.

One journal per participant (``responses/<id>.jsonl``; models: ``llm/<name>.jsonl``): raters never see each
other's files, and an exclusive lock (``fcntl.flock``) keeps two runners from writing the same participant.
The first line binds the journal to the question bank's SHA-256, so answers are never mixed across banks.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from core.base.errors import LogiCityError

__all__ = ["Journal", "JournalError", "check_participant_id", "journal_path", "read_journal", "Answer"]

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class JournalError(LogiCityError):
    """A journal that cannot be opened or read (locked, corrupted in the middle, other bank)."""


def check_participant_id(pid: str) -> str:
    """The id itself, or a :class:`JournalError` saying what is wrong (it becomes a file name)."""
    pid = pid.strip()
    if not _ID_RE.match(pid):
        raise JournalError(f"participant id {pid!r}: use 1-64 letters, digits, '_', '.' or '-', starting with a "
                           "letter or digit")
    return pid


def journal_path(folder: str | Path, pid: str) -> Path:
    return Path(folder) / f"{check_participant_id(pid)}.jsonl"


@dataclass(frozen=True)
class Answer:
    """One committed answer. ``answer`` is a letter A-D, or None (time ran out / model reply unparseable);
    ``raw`` keeps a model's reply text."""

    participant: str
    phase: str
    question: str
    answer: str | None
    rt_ms: int | None
    timestamp: str
    raw: str | None = None

    @classmethod
    def from_record(cls, r: dict[str, Any]) -> "Answer":
        return cls(str(r["participant"]), str(r["phase"]), str(r["question"]), r.get("answer"), r.get("rt_ms"),
                   str(r.get("t", "")), r.get("raw"))


def _parse(data: bytes, path: Path) -> tuple[list[dict[str, Any]], int]:
    """Records of a journal's bytes and the length of its complete part. A line is complete when its newline
    (the last byte of every write) is on disk; a tail without one is a write cut by a kill and is left out. A
    complete line that is not a JSON object is damage, not a crash: an error naming the line."""
    records: list[dict[str, Any]] = []
    pos, n = 0, 0
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            return records, pos
        n += 1
        line = data[pos:nl]
        if line.strip():
            try:
                rec = json.loads(line.decode("utf-8"))
                if not isinstance(rec, dict):
                    raise ValueError("not a JSON object")
            except (ValueError, UnicodeDecodeError) as exc:
                raise JournalError(f"damaged journal line ({exc}); the file was edited or the disk is failing. "
                                   "Nothing was changed; move the file away to start over", path, n) from None
            records.append(rec)
        pos = nl + 1


def read_journal(path: str | Path) -> list[dict[str, Any]]:
    """The complete records of a journal (read-only; the torn tail of a killed write is ignored)."""
    path = Path(path)
    return _parse(path.read_bytes(), path)[0]


class Journal:
    """An open, locked journal. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path, participant: str, bank_sha256: str, *, kind: str = "human",
                 meta: dict[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.participant = check_participant_id(participant)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            self._lock()
            data = _read_all(self._fd)
            self.records, good = _parse(data, self.path)
            if good < len(data):            # a torn tail from a killed write: drop it
                os.ftruncate(self._fd, good)
                os.fsync(self._fd)
            if created:
                _fsync_dir(self.path.parent)
            head = self.records[0] if self.records else None
            if head is None:
                self.append({"kind": "session", "event": "create", "study_sha256": bank_sha256,
                             "participant_kind": kind, **(meta or {})})
            elif head.get("study_sha256") != bank_sha256:
                raise JournalError("this journal belongs to another question bank (its study_sha256 differs); "
                                   "answers from two banks are never mixed", self.path, 1)
            self.append({"kind": "session", "event": "open"})
        except BaseException:
            os.close(self._fd)
            self._fd = -1
            raise

    def _lock(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory lock
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise JournalError(f"participant {self.participant!r} has a session open in another window or process",
                               self.path) from None

    # ---- writing --------------------------------------------------------------------------------------------
    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Write one record and fsync it; returns it (with ``t``, ``participant`` and ``seq`` filled in)."""
        if self._fd < 0:
            raise JournalError("journal is closed", self.path)
        now = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"   # UTC
        rec = {"seq": len(self.records), "participant": self.participant, "t": stamp, **record}
        line = (json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        n = os.write(self._fd, line)
        if n != len(line):   # a short write (disk full): never leave half a line behind
            raise JournalError("the disk did not take the whole answer (disk full?)", self.path)
        os.fsync(self._fd)
        self.records.append(rec)
        return rec

    def answer(self, phase: str, question: str, answer: str | None, rt_ms: int | None, **extra: Any) -> Answer:
        rec = self.append({"kind": "answer", "phase": phase, "question": question, "answer": answer,
                           "rt_ms": rt_ms, **extra})
        return Answer.from_record(rec)

    def event(self, event: str, **extra: Any) -> None:
        self.append({"kind": "session", "event": event, **extra})

    # ---- reading ----------------------------------------------------------------------------------------------
    def answers(self, phase: str = "test") -> dict[str, Answer]:
        return answers_of(self.records, phase)

    def next_unanswered(self, order: Sequence[str], phase: str = "test") -> str | None:
        done = self.answers(phase)
        return next((q for q in order if q not in done), None)

    def has_event(self, event: str) -> bool:
        return any(r.get("kind") == "session" and r.get("event") == event for r in self.records)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)   # closing releases the lock
            self._fd = -1

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - safety net
        try:
            self.close()
        except Exception:
            pass


def answers_of(records: Iterable[dict[str, Any]], phase: str = "test") -> dict[str, Answer]:
    """question id -> the first committed answer of ``phase`` (a later duplicate, which the runner never writes,
    would not overwrite it)."""
    out: dict[str, Answer] = {}
    for r in records:
        if r.get("kind") == "answer" and r.get("phase") == phase and r.get("question") not in out:
            out[str(r["question"])] = Answer.from_record(r)
    return out


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def _fsync_dir(folder: Path) -> None:
    """Make a new file's directory entry durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
