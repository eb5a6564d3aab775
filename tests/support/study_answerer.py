"""A participant that answers a study's questions as fast as it can (the kill -9 test's subprocess).

``python -m tests.support.study_answerer STUDY_DIR PARTICIPANT``: opens the participant's journal, resumes at the
next unanswered question, answers it with the letter :func:`answer_for` gives, and prints ``committed <qid>``
only after the journal call returned (i.e. after fsync) — so every printed id must survive a kill.
"""
from __future__ import annotations

import hashlib
import sys


def answer_for(qid: str) -> str:
    return "ABCD"[hashlib.sha256(qid.encode()).digest()[0] % 4]


def main(argv: list[str]) -> int:
    from core.study.design import load_study, participant_order
    from core.study.journal import Journal, journal_path

    study = load_study(argv[0])
    pid = argv[1]
    order = participant_order(study, pid)
    with Journal(journal_path(study.responses_dir, pid), pid, study.bank_sha256) as j:
        print("ready", flush=True)
        while (qid := j.next_unanswered(order)) is not None:
            j.answer("test", qid, answer_for(qid), 5)
            print(f"committed {qid}", flush=True)
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
