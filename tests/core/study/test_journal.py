"""Participant journals: fsync'd appends survive kill -9, resume at the next question, torn tails, locks."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys

import pytest

from core.study.design import load_study, participant_order
from core.study.journal import Journal, JournalError, journal_path, read_journal
from tests.support.paths import ROOT
from tests.support.study_answerer import answer_for


def test_kill_9_loop_loses_no_committed_answer(small_study):
    """Start a real answering process, kill -9 it at a random moment, reopen; again until every question is
    answered. Every answer the child reported as committed must be in the journal, once, with its value."""
    study = load_study(small_study)
    order = participant_order(study, "P1")
    path = journal_path(study.responses_dir, "P1")
    rng = random.Random(7)
    committed: list[str] = []
    kills = 0
    for round_ in range(60):
        child = subprocess.Popen([sys.executable, "-m", "tests.support.study_answerer", str(small_study), "P1"],
                                 cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        limit = rng.randint(0, 3)   # answers to let through before the kill (0: kill during start-up/first one)
        seen = 0
        finished = False
        for line in child.stdout:
            if line.startswith("committed "):
                committed.append(line.split()[1])
                seen += 1
            if line.strip() == "done":
                finished = True
                break
            if seen >= limit and line.startswith(("committed", "ready")):
                break
        if not finished:
            os.kill(child.pid, signal.SIGKILL)
            kills += 1
        child.wait()
        # drain what the child printed before dying: those were committed too
        rest = child.stdout.read()
        committed.extend(x.split()[1] for x in rest.splitlines() if x.startswith("committed "))
        finished = finished or "done" in rest.split()
        if round_ == 2:   # a write torn by a kill leaves half a line: the next open must drop it
            with open(path, "ab") as fh:
                fh.write(b'{"kind": "answer", "phase": "test", "quest')
        answers = {r["question"]: r for r in read_journal(path) if r.get("kind") == "answer"}
        assert set(committed) <= set(answers), "a committed answer was lost"
        if finished:
            break
    assert finished and kills >= 3
    records = read_journal(path)
    qs = [r["question"] for r in records if r.get("kind") == "answer"]
    assert sorted(qs) == sorted(order)                    # every question exactly once
    assert qs == order                                    # in the participant's order (resume = next unanswered)
    assert all(r["answer"] == answer_for(r["question"]) for r in records if r.get("kind") == "answer")
    assert path.read_bytes().endswith(b"\n")


def test_resume_at_next_unanswered_and_torn_tail(small_study):
    study = load_study(small_study)
    order = participant_order(study, "R1")
    path = journal_path(study.responses_dir, "R1")
    with Journal(path, "R1", study.bank_sha256) as j:
        for q in order[:3]:
            j.answer("test", q, "A", 100)
    with open(path, "ab") as fh:
        fh.write(b'{"kind": "answer", "question": "x"')   # torn: no newline
    with Journal(path, "R1", study.bank_sha256) as j:
        assert j.next_unanswered(order) == order[3]
        assert list(j.answers()) == order[:3]
    assert b'"question": "x"' not in path.read_bytes()


def test_damaged_middle_line_is_an_error_and_changes_nothing(small_study):
    study = load_study(small_study)
    path = journal_path(study.responses_dir, "D1")
    with Journal(path, "D1", study.bank_sha256) as j:
        j.answer("test", "q0001", "B", 10)
    data = path.read_bytes().replace(b'"answer": "B"', b'"answer": B"')
    path.write_bytes(data)
    with pytest.raises(JournalError) as ei:
        Journal(path, "D1", study.bank_sha256)
    assert ei.value.line == 3 and path.read_bytes() == data


def test_one_session_per_participant_and_bank_binding(small_study):
    study = load_study(small_study)
    path = journal_path(study.responses_dir, "L1")
    with Journal(path, "L1", study.bank_sha256):
        with pytest.raises(JournalError, match="another window"):
            Journal(path, "L1", study.bank_sha256)
    with pytest.raises(JournalError, match="another question bank"):
        Journal(path, "L1", "0" * 64)
    with pytest.raises(JournalError, match="participant id"):
        journal_path(study.responses_dir, "../evil")
