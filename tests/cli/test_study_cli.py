"""``main.py study make|report|llm`` end to end in fresh interpreters."""
from __future__ import annotations

import csv
import json

from core.study.design import load_study, participant_order
from core.study.journal import Journal, journal_path
from tests.support.cli import run_main


def test_make_answer_report_and_llm_export_import(tmp_path):
    folder = tmp_path / "st"
    r = run_main("study", "make", "--out", str(folder), "--seeds", "0", "--steps", "60", "--questions", "8",
                 "--training", "4", "--practice", "2", "--time-limit", "30")
    assert r.returncode == 0, r.stderr
    assert "8 test questions (Slow 2, Normal 2, Fast 2, Stop 2), 4 training, 2 practice" in r.stdout
    study = load_study(folder)
    assert study.spec.time_limit_s == 30 and study.spec.source.seeds == (0,)
    for pid, pick in (("P1", lambda q: q.truth_letter), ("P2", lambda q: "D")):
        with Journal(journal_path(study.responses_dir, pid), pid, study.bank_sha256) as j:
            for qid in participant_order(study, pid):
                j.answer("test", qid, pick(study.question(qid)), 900)
    out_csv, out_jsonl = tmp_path / "long.csv", tmp_path / "long.jsonl"
    r = run_main("study", "report", "--study", str(folder), "--csv", str(out_csv), "--jsonl", str(out_jsonl),
                 "--confusion")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    p1 = next(x for x in lines if x.startswith("P1 "))
    assert p1.split()[1:6] == ["100.0"] * 5
    p2 = next(x for x in lines if x.startswith("P2 "))
    assert p2.split()[1:6] == ["0.0", "0.0", "0.0", "100.0", "25.0"]
    assert any(x.startswith("Humans (pooled)") and "62.5" in x for x in lines)
    assert "Fleiss' kappa (humans):" in r.stdout
    assert len(list(csv.DictReader(open(out_csv)))) == 16 and len(out_jsonl.read_text().splitlines()) == 16
    req = tmp_path / "req.jsonl"
    r = run_main("study", "llm", "--study", str(folder), "--backend", "jsonl-export", "--model", "m1", "--k", "4",
                 "--out", str(req))
    assert r.returncode == 0, r.stderr
    res = tmp_path / "res.jsonl"
    res.write_text("".join(json.dumps({"custom_id": json.loads(x)["custom_id"], "answer": "Stop"}) + "\n"
                           for x in req.read_text().splitlines()))
    r = run_main("study", "llm", "--study", str(folder), "--backend", "jsonl-import", "--input", str(res),
                 "--name", "m1-4shot")
    assert r.returncode == 0, r.stderr
    assert "8 new answers (0 unparseable)" in r.stdout
    assert any(x.startswith("m1-4shot ") and x.split()[5] == "25.0" for x in r.stdout.splitlines())


def test_errors_are_clean(tmp_path):
    r = run_main("study", "report", "--study", str(tmp_path))
    assert r.returncode == 1 and "no study.yaml" in r.stderr and "Traceback" not in r.stderr
    r = run_main("study", "make", "--out", str(tmp_path / "x"), "--seeds", "0", "--steps", "15",
                 "--questions", "500")
    assert r.returncode == 1 and "questions" in r.stderr and "Traceback" not in r.stderr
