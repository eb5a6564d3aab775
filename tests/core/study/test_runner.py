"""The participant session state machine: stages, response times net of pauses, time-outs, resume."""
from __future__ import annotations

from core.study.design import load_study, participant_order
from core.study.journal import read_journal
from core.study.runner import RunnerSession


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_full_session_and_resume(small_study):
    study = load_study(small_study)
    clock = Clock()
    s = RunnerSession(study, "S1", clock)
    assert s.stage == "consent" and s.current() is None
    s.agree()
    s.start()
    assert s.stage == "training"
    seen = []
    while s.stage == "training":
        seen.append(s.current().id)
        s.next_document()
    assert seen == [q.id for q in study.by_role("training")]
    fb = None
    while s.stage == "practice":
        q = s.current()
        clock.t += 2.0
        fb = s.answer(q.truth_letter)
        assert s.stage == "feedback" and fb.correct
        s.dismiss_feedback()
    assert fb is not None and s.stage == "test"
    q1 = s.current()
    assert q1.id == participant_order(study, "S1")[0]
    clock.t += 1.5
    s.pause()
    clock.t += 30.0                     # paused time is not response time
    assert s.answer("A") is None and s.progress() == (0, len(study.test))   # no answering while paused
    s.resume()
    clock.t += 0.5
    s.answer("B")
    s.close()
    # reopen: resumes at the second test question, consent/instructions/training/practice not repeated
    s2 = RunnerSession(study, "S1", clock)
    assert s2.resumed and s2.stage == "test" and s2.current().id == participant_order(study, "S1")[1]
    while s2.stage == "test":
        s2.current()
        clock.t += 1.0
        s2.answer("D")
    assert s2.stage == "done"
    s2.close()
    recs = read_journal(study.responses_dir / "S1.jsonl")
    test = [r for r in recs if r.get("kind") == "answer" and r["phase"] == "test"]
    assert test[0]["rt_ms"] == 2000 and test[0]["answer"] == "B"
    assert all(r["rt_ms"] == 1000 for r in test[1:])
    assert [r["question"] for r in test] == participant_order(study, "S1")
    assert [r["event"] for r in recs if r.get("kind") == "session"].count("pause") == 1
    assert recs[-1]["event"] == "finish"


def test_time_limit_commits_a_timeout(small_study):
    import dataclasses

    study = load_study(small_study)
    study.spec = dataclasses.replace(study.spec, time_limit_s=5.0)
    clock = Clock()
    s = RunnerSession(study, "T1", clock)
    s.agree()
    s.start()
    while s.stage == "training":
        s.next_document()
    while s.stage in ("practice", "feedback"):
        if s.stage == "feedback":
            s.dismiss_feedback()
            continue
        s.current()
        s.answer("A")
    q = s.current()
    clock.t += 4.0
    assert not s.tick() and s.remaining_s() == 1.0
    clock.t += 1.5
    assert s.tick()
    a = s.journal.answers()[q.id]
    assert a.answer is None and a.rt_ms == 5500
    s.close()
