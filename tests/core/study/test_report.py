"""Results: Fleiss' kappa on known values, Table 4 arithmetic, confusion matrix, long exports."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from core.study.design import load_study, participant_order
from core.study.journal import Journal, journal_path
from core.study.kappa import counts_table, fleiss_kappa
from core.study.report import EXPORT_FIELDS, build_report

#: The worked example of the Wikipedia article "Fleiss' kappa": 10 items, 14 raters, 5 categories, kappa 0.210.
WIKIPEDIA = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]


def test_fleiss_kappa_known_values():
    assert fleiss_kappa(WIKIPEDIA) == pytest.approx(0.20993, abs=5e-5)
    assert fleiss_kappa([[3, 0], [0, 3], [3, 0]]) == pytest.approx(1.0)        # perfect agreement
    assert fleiss_kappa([[1, 1], [1, 1]]) == pytest.approx(-1.0)              # systematic disagreement
    assert math.isnan(fleiss_kappa([[2, 0], [2, 0]]))                          # one category only: undefined
    with pytest.raises(ValueError):
        fleiss_kappa([[2, 0], [1, 0]])


def test_counts_table_uses_common_answered_items():
    table, items = counts_table({"a": {"q1": "A", "q2": "B", "q3": None}, "b": {"q1": "A", "q2": "C", "q3": "A"}},
                                ["A", "B", "C", "D"])
    assert items == ["q1", "q2"] and table.tolist() == [[2, 0, 0, 0], [0, 1, 1, 0]]


def _answer_all(study, pid, choose, rt=1000):
    with Journal(journal_path(study.responses_dir, pid), pid, study.bank_sha256) as j:
        for qid in participant_order(study, pid):
            j.answer("test", qid, choose(study.question(qid)), rt)


def test_report_arithmetic_and_exports(small_study, tmp_path):
    study = load_study(small_study)
    test = study.test
    # H1 always right; H2 always says Stop; H3 right except on Slow, where it gives no option
    _answer_all(study, "H1", lambda q: q.truth_letter, 800)
    _answer_all(study, "H2", lambda q: "D", 1200)
    _answer_all(study, "H3", lambda q: None if q.truth == 0 else q.truth_letter)
    with Journal(journal_path(study.responses_dir, "H4"), "H4", study.bank_sha256) as j:   # left after 2 answers
        for qid in participant_order(study, "H4")[:2]:
            j.answer("test", qid, "A", 500)
    rep = build_report(study)
    by = {s.name: s for s in rep.scores}
    assert by["H4"].answered == 2 and rep.kappa_raters == 3      # an unfinished session is left out of kappa
    n_per = np.bincount([q.truth for q in test], minlength=4)
    assert by["H1"].overall == 1.0 and by["H1"].per_action == [1.0] * 4
    assert by["H2"].per_action == [0.0, 0.0, 0.0, 1.0]
    assert by["H2"].overall == pytest.approx(n_per[3] / len(test))
    assert by["H3"].none == n_per[0] and by["H3"].per_action[0] == 0.0
    pooled = by["Humans (pooled)"]
    h4 = by["H4"]
    assert (pooled.total - h4.total).tolist() == (3 * n_per).tolist()
    assert (pooled.correct - h4.correct).tolist() == [n_per[0], 2 * n_per[1], 2 * n_per[2], 3 * n_per[3]]
    assert by["H2"].confusion[:, 3].tolist() == n_per.tolist()
    assert by["H3"].confusion[0, 4] == n_per[0]
    # kappa over the three humans on the questions all answered with an option (H3 gave none on Slow ones)
    table, _ = counts_table({n: {q: a.answer for q, a in r.answers.items()} for n, r in
                             ((r.name, r) for r in rep.raters) if n != "H4"}, ["A", "B", "C", "D"])
    assert rep.kappa_items == len(test) - n_per[0] and rep.kappa == pytest.approx(fleiss_kappa(table))
    text = rep.table_text()
    assert "Humans (pooled)" in text and "Fleiss' kappa (humans):" in text
    for w in ("Slow", "Normal", "Fast", "Stop"):
        assert f"{w}{study.hardness[w]}" in text
    rep.export(tmp_path / "a.csv", tmp_path / "a.jsonl")
    rows = list(csv.DictReader(open(tmp_path / "a.csv")))
    assert len(rows) == 3 * len(test) + 2 and tuple(rows[0]) == EXPORT_FIELDS
    j = [json.loads(x) for x in open(tmp_path / "a.jsonl")]
    assert j[0]["participant"] == "H1" and j[0]["rt_ms"] == 800 and j[0]["frame"].startswith("seed")
    assert sum(r["correct"] for r in j) == int(pooled.correct.sum())


def test_a_journal_of_another_bank_is_not_scored(small_study):
    study = load_study(small_study)
    with Journal(journal_path(study.responses_dir, "X1"), "X1", "f" * 64) as j:
        j.answer("test", study.test[0].id, "A", 100)
    _answer_all(study, "H1", lambda q: q.truth_letter)
    rep = build_report(study)
    assert [r.name for r in rep.raters] == ["H1"]
    assert [p.name for p in rep.skipped] == ["X1.jsonl"] and "X1.jsonl belongs to another question bank" in \
        rep.table_text()
    recs = open(study.responses_dir / "H1.jsonl").read()
    assert '"t": "' in recs and 'Z"' in recs                    # timestamps are UTC
