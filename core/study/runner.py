"""A participant's session as a Qt-free state machine (the studio's full-screen runner shows it).

Stages: ``consent`` → ``instructions`` → ``training`` (documents with answers) → ``practice`` (answered, with
feedback) → ``test`` (no answer shown) → ``done``; ``paused`` on top of any of them. Why here and not in the
widget: every transition that matters is a journal record (consent, instructions read, training done, each
answer, pause/resume), written before the state moves on, so reopening the journal rebuilds the exact position —
and a test can drive a whole session without a window.

Response time = time from the question being shown to the answer, minus time spent paused, from a monotonic
clock. With a time limit, :meth:`RunnerSession.tick` commits a time-out (answer None) when it runs out.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from core.study.design import Question, Study, participant_order
from core.study.journal import Journal, journal_path
from core.study.source import ACTION_LETTERS

__all__ = ["RunnerSession", "Feedback", "KEY_LETTERS"]

#: Keys a participant may press for each option.
KEY_LETTERS = {"1": "A", "2": "B", "3": "C", "4": "D", "A": "A", "B": "B", "C": "C", "D": "D"}


@dataclass(frozen=True)
class Feedback:
    """Shown after a practice answer."""

    question: Question
    answer: str | None
    correct: bool


class RunnerSession:
    def __init__(self, study: Study, participant: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.study = study
        self.clock = clock
        self.journal = Journal(journal_path(study.responses_dir, participant), participant, study.bank_sha256,
                               meta={"study": study.spec.name})
        self.participant = self.journal.participant
        self.order = participant_order(study, self.participant)
        self.training = study.by_role("training")
        self.practice = study.by_role("practice")
        self.training_index = 0
        self.feedback: Feedback | None = None
        self.paused = False
        self._shown_at: float | None = None
        self._paused_at: float | None = None
        self._paused_total = 0.0
        self._shown_id: str | None = None

    # ---- where are we ----------------------------------------------------------------------------------------
    @property
    def stage(self) -> str:
        j = self.journal
        if not j.has_event("consent"):
            return "consent"
        if not j.has_event("instructions"):
            return "instructions"
        if self.training and not j.has_event("training_done"):
            return "training"
        if self.feedback is not None:
            return "feedback"
        if j.next_unanswered([q.id for q in self.practice], "practice") is not None:
            return "practice"
        if j.next_unanswered(self.order) is not None:
            return "test"
        return "done"

    @property
    def resumed(self) -> bool:
        """Whether this session continues an earlier one (the journal was opened before)."""
        return sum(1 for r in self.journal.records if r.get("event") == "open") > 1

    def current(self) -> Question | None:
        """The document or question on screen (None on the consent, instructions and done screens)."""
        st = self.stage
        if st == "training":
            return self.training[min(self.training_index, len(self.training) - 1)]
        if st == "feedback":
            return self.feedback.question if self.feedback else None
        if st == "practice":
            qid = self.journal.next_unanswered([q.id for q in self.practice], "practice")
        elif st == "test":
            qid = self.journal.next_unanswered(self.order)
        else:
            return None
        q = self.study.question(qid) if qid else None
        if q is not None and q.id != self._shown_id:   # first time on screen: the response clock starts
            self._shown_id, self._shown_at, self._paused_total = q.id, self.clock(), 0.0
        return q

    def progress(self) -> tuple[int, int]:
        """(answered, total) of the test questions."""
        return len(self.journal.answers()), len(self.order)

    # ---- transitions --------------------------------------------------------------------------------------------
    def agree(self) -> None:
        if self.stage == "consent":
            self.journal.event("consent")

    def start(self) -> None:
        """Instructions read."""
        if self.stage == "instructions":
            self.journal.event("instructions")

    def next_document(self) -> None:
        if self.stage != "training":
            return
        self.training_index += 1
        if self.training_index >= len(self.training):
            self.journal.event("training_done")

    def previous_document(self) -> None:
        if self.stage == "training" and self.training_index > 0:
            self.training_index -= 1

    def answer(self, letter: str | None) -> Feedback | None:
        """Commit an answer (letter A-D, or None for a time-out) to the question on screen; returns the feedback
        for a practice question. Ignored while paused or when no question is shown."""
        if self.paused or letter not in (*ACTION_LETTERS, None):
            return None
        st = self.stage
        if st not in ("practice", "test"):
            return None
        q = self.current()
        assert q is not None
        rt = self.response_ms()
        self.journal.answer(st, q.id, letter, rt)
        self._shown_id = None
        if st == "practice":
            self.feedback = Feedback(q, letter, letter == q.truth_letter)
            return self.feedback
        if self.stage == "done":
            self.journal.event("finish")
        return None

    def dismiss_feedback(self) -> None:
        self.feedback = None

    def response_ms(self) -> int:
        if self._shown_at is None:
            return 0
        now = self._paused_at if self.paused and self._paused_at is not None else self.clock()
        return max(0, int(round(1000 * (now - self._shown_at - self._paused_total))))

    def remaining_s(self) -> float | None:
        tl = self.study.spec.time_limit_s
        if tl is None or self.stage not in ("practice", "test"):
            return None
        self.current()
        return max(0.0, tl - self.response_ms() / 1000)

    def tick(self) -> bool:
        """Commit a time-out when the time limit ran out; True when it did."""
        rem = self.remaining_s()
        if rem is not None and rem <= 0 and not self.paused:
            self.answer(None)
            return True
        return False

    def pause(self) -> None:
        if not self.paused and self.stage != "done":
            self.paused, self._paused_at = True, self.clock()
            self.journal.event("pause")

    def resume(self) -> None:
        if self.paused:
            self._paused_total += self.clock() - (self._paused_at or self.clock())
            self.paused, self._paused_at = False, None
            self.journal.event("resume")

    def close(self) -> None:
        self.journal.close()
