"""Study results: the paper's Table 4 layout, agreement, confusion matrices and long-format exports.

Per rater (each participant, each model run) and pooled over human participants: accuracy per true action
(Slow, Normal, Fast, Stop; the header carries the study's hardness marks) and overall, over the test questions
the rater answered; unanswered questions are counted (``n``) and an answer that is no option (a model's
unparseable reply, a time-out) counts as wrong and is counted separately (``none``). Fleiss' kappa is computed
over the human raters who finished (answered every test question), on the questions all of them answered with an
option (a time-out is no option).
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.io.fileio import atomic_write_text
from core.study.design import Study
from core.study.journal import Answer, answers_of, read_journal
from core.study.kappa import counts_table, fleiss_kappa
from core.study.source import ACTION_LETTERS, ACTION_WORDS

__all__ = ["Rater", "Score", "StudyReport", "load_raters", "score", "build_report", "EXPORT_FIELDS"]

EXPORT_FIELDS = ("participant", "kind", "question", "frame", "world", "step", "agent", "answer", "truth",
                 "correct", "rt_ms", "timestamp")


@dataclass
class Rater:
    name: str
    kind: str                      # human | llm
    answers: dict[str, Answer]     # test answers by question id


@dataclass
class Score:
    name: str
    kind: str
    correct: np.ndarray            # [4] per true action
    total: np.ndarray              # [4] answered questions per true action
    confusion: np.ndarray          # [4, 5]: true action × answer (A-D, none)
    none: int = 0
    rts: list[float] = field(default_factory=list)

    @property
    def per_action(self) -> list[float]:
        return [float(c / t) if t else float("nan") for c, t in zip(self.correct, self.total)]

    @property
    def overall(self) -> float:
        t = int(self.total.sum())
        return float(self.correct.sum() / t) if t else float("nan")

    @property
    def answered(self) -> int:
        return int(self.total.sum())


def load_raters(study: Study, skipped: list[Path] | None = None) -> list[Rater]:
    """Every journal of the study: humans from responses/, models from llm/ (sorted by name). A journal bound to
    another question bank is left out and appended to ``skipped``."""
    out = []
    for kind, folder in (("human", study.responses_dir), ("llm", study.llm_dir)):
        if not folder.is_dir():
            continue
        for p in sorted(folder.glob("*.jsonl")):
            recs = read_journal(p)
            if recs and recs[0].get("study_sha256") not in (None, study.bank_sha256):
                if skipped is not None:
                    skipped.append(p)
                continue   # a journal of another bank is never scored with this one
            out.append(Rater(p.stem, kind, answers_of(recs, "test")))
    return out


def score(study: Study, name: str, kind: str, answers: dict[str, Answer]) -> Score:
    truth = {q.id: q.truth for q in study.test}
    correct, total = np.zeros(4, np.int64), np.zeros(4, np.int64)
    conf = np.zeros((4, 5), np.int64)
    none = 0
    rts = []
    for qid, a in answers.items():
        t = truth.get(qid)
        if t is None:
            continue
        total[t] += 1
        j = ACTION_LETTERS.index(a.answer) if a.answer in ACTION_LETTERS else 4
        conf[t, j] += 1
        none += j == 4
        correct[t] += j == t
        if a.rt_ms is not None:
            rts.append(float(a.rt_ms))
    return Score(name, kind, correct, total, conf, none, rts)


@dataclass
class StudyReport:
    study: Study
    raters: list[Rater]
    scores: list[Score]            # one per rater, then "Humans (pooled)" when there are humans
    kappa: float
    kappa_items: int
    kappa_raters: int
    skipped: list[Path] = field(default_factory=list)    # journals of another bank, not scored

    def table_rows(self) -> list[list[str]]:
        """Header + one row per score: name, the four actions (with marks), overall, answered, none."""
        marks = self.study.hardness
        head = ["Rater"] + [f"{w}{marks.get(w, '')}" for w in ACTION_WORDS] + ["Overall", "n", "none"]
        rows = [head]
        for s in self.scores:
            n = str(s.answered) if s.kind == "pooled" else f"{s.answered}/{len(self.study.test)}"
            rows.append([s.name] + [_pct(v) for v in s.per_action] + [_pct(s.overall), n, str(s.none)])
        return rows

    def table_text(self) -> str:
        rows = self.table_rows()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in rows]
        lines.insert(1, "-" * len(lines[0]))
        k = "n/a (needs >= 2 human raters who finished)" if np.isnan(self.kappa) else \
            f"{self.kappa:.3f} ({self.kappa_raters} raters who finished, {self.kappa_items} common questions)"
        lines.append("")
        lines.append(f"Fleiss' kappa (humans): {k}")
        for p in self.skipped:
            lines.append(f"not scored: {p} belongs to another question bank")
        return "\n".join(lines)

    def long_rows(self) -> list[dict[str, Any]]:
        qs = {q.id: q for q in self.study.test}
        out = []
        for r in self.raters:
            for qid, a in r.answers.items():
                q = qs.get(qid)
                if q is None:
                    continue
                out.append({"participant": r.name, "kind": r.kind, "question": qid, "frame": f"{q.world}:{q.step}",
                            "world": q.world, "step": q.step, "agent": q.agent_name, "answer": a.answer or "",
                            "truth": q.truth_letter, "correct": int(a.answer == q.truth_letter),
                            "rt_ms": "" if a.rt_ms is None else a.rt_ms, "timestamp": a.timestamp})
        return out

    def export(self, csv_path: Path | None = None, jsonl_path: Path | None = None) -> None:
        rows = self.long_rows()
        if csv_path is not None:
            buf = io.StringIO()
            w = csv.DictWriter(buf, fieldnames=EXPORT_FIELDS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
            atomic_write_text(csv_path, buf.getvalue())
        if jsonl_path is not None:
            atomic_write_text(jsonl_path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))

    def to_dict(self) -> dict[str, Any]:
        return {"hardness": dict(self.study.hardness), "kappa": None if np.isnan(self.kappa) else self.kappa,
                "kappa_items": self.kappa_items, "kappa_raters": self.kappa_raters,
                "scores": [{"name": s.name, "kind": s.kind, "per_action": dict(zip(ACTION_WORDS, s.per_action)),
                            "overall": s.overall, "answered": s.answered, "none": s.none,
                            "confusion": s.confusion.tolist()} for s in self.scores]}


def _pct(v: float) -> str:
    return "-" if np.isnan(v) else f"{100 * v:.1f}"


def build_report(study: Study, raters: list[Rater] | None = None) -> StudyReport:
    skipped: list[Path] = []
    raters = load_raters(study, skipped) if raters is None else raters
    scores = [score(study, r.name, r.kind, r.answers) for r in raters]
    humans = [s for s in scores if s.kind == "human"]
    if humans:
        pooled = Score("Humans (pooled)", "pooled", np.sum([s.correct for s in humans], axis=0),
                       np.sum([s.total for s in humans], axis=0), np.sum([s.confusion for s in humans], axis=0),
                       sum(s.none for s in humans), [x for s in humans for x in s.rts])
        scores.append(pooled)
    # kappa over the raters who finished (answered every test question); a session still running or abandoned
    # would otherwise shrink the common questions to the few it reached
    n_test = len(study.test)
    human_answers = {r.name: {q: a.answer for q, a in r.answers.items()} for r in raters
                     if r.kind == "human" and len(r.answers) >= n_test}
    kappa, items = float("nan"), 0
    if len(human_answers) >= 2:
        table, common = counts_table(human_answers, ACTION_LETTERS)
        items = len(common)
        if items:
            kappa = fleiss_kappa(table)
    return StudyReport(study, raters, scores, kappa, items, len(human_answers), skipped)
