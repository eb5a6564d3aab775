"""The study file and its designer (docs/study.md "Study files").

A study is a folder: ``study.yaml`` (the design: source, sampling recipe, modality, training, practice, order,
time limit, texts) and ``questions.jsonl`` (the question bank: one question per line with its description, true
facts, answer and role), plus ``images/`` when the modality shows rendered frames. Participants' journals go to
``responses/`` and model runs to ``llm/`` (core/study/journal.py). Why a folder of text files: it can be
versioned and shared, and the YAML records the bank's SHA-256 so an edited or swapped bank is detected.

:func:`make_study` reproduces the paper's mini-test recipe by default: 117 questions about cars that are tiro or
reckless in the hard VAP mode, stratified by answer (as even a split over Slow/Normal/Fast/Stop as the pool
allows), plus training documents (shown with answers, covering every option) and practice questions (answered
with feedback), all disjoint from the test questions.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from core.base.errors import ConfigError
from core.io.fileio import atomic_write_bytes, atomic_write_text
from core.io.yamlio import dump_yaml, expect, is_mapping, load_yaml, reject_unknown_keys
from core.study.describe import TEMPLATE_VERSION, SceneFacts, describe
from core.study.images import FRAME_RGB, render_images
from core.study.source import ACTION_LETTERS, ACTION_WORDS, Candidate, SimulatedSource, concept_filter
from core.study.source_vap import VapDatasetSource

__all__ = ["StudySpec", "Question", "Study", "make_study", "load_study", "participant_order", "allocate", "parse_seeds",
           "hardness_marks", "question_text", "FRAME_RGB", "STUDY_FILE", "BANK_FILE", "MODALITIES"]

STUDY_FILE = "study.yaml"
BANK_FILE = "questions.jsonl"
MODALITIES = ("text", "image", "both")
FORMAT = "logicity-study"

DEFAULT_INSTRUCTIONS = (
    "You will read short descriptions of a moment in a city simulation. Each description lists what one agent "
    "(a car) sees: the other cars and pedestrians, their kinds and concepts (ambulance, bus, police, tiro = a "
    "novice driver, reckless, old, young), who is at or in an intersection, who is close to or next to whom "
    "('next to' is nearer than 'close'), who is on whose left or right, the priority order, and who is about to "
    "collide with whom. The city's traffic rules decide what the agent does next. For each question choose the "
    "agent's next action: A Slow, B Normal, C Fast or D Stop (keys A-D or 1-4). First you will read a few solved "
    "examples, then answer some practice questions with feedback; during the test no answer is shown.")

DEFAULT_CONSENT = (
    "This study records your answers and response times under the participant id you enter, and nothing else. "
    "You may stop at any time; your answers so far are kept. Press 'I agree' to take part.")


@dataclass(frozen=True)
class StudySpec:
    """What the designer asks for (the study.yaml keys besides the bank bookkeeping)."""

    name: str = "vap-mini-test"
    source: Any = field(default_factory=lambda: SimulatedSource("configs/modes/vap_hard.yaml"))  # or VapDatasetSource
    questions: int = 117
    concepts: tuple[str, ...] = ("tiro", "reckless")
    cars_only: bool = True
    sample_seed: int = 0
    modality: str = "text"
    training: int = 5
    practice: int = 4
    order_seed: int = 0
    per_participant_order: bool = True
    time_limit_s: float | None = None
    instructions: str = DEFAULT_INSTRUCTIONS
    consent: str = DEFAULT_CONSENT
    hardness: dict[str, str] | None = None      # None: derived from the pool (hardness_marks)

    def check(self) -> None:
        if self.modality not in MODALITIES:
            raise ConfigError(f"modality must be one of {', '.join(MODALITIES)}, got {self.modality!r}")
        if self.questions < 1:
            raise ConfigError(f"questions must be >= 1, got {self.questions}")
        if self.training < 0 or self.practice < 0:
            raise ConfigError("training and practice counts must be >= 0")
        if self.time_limit_s is not None and not self.time_limit_s > 0:
            raise ConfigError(f"time_limit_s must be > 0 seconds or absent, got {self.time_limit_s}")


@dataclass(frozen=True)
class Question:
    """One item of the bank. ``role``: test, training (shown with its answer) or practice (answered, with
    feedback, not scored). ``truth`` is 0..3 (Slow, Normal, Fast, Stop)."""

    id: str
    role: str
    world: str
    step: int
    agent: int
    agent_name: str
    concepts: tuple[str, ...]
    truth: int
    description: str
    facts: SceneFacts
    image: str | None = None

    @property
    def truth_word(self) -> str:
        return ACTION_WORDS[self.truth]

    @property
    def truth_letter(self) -> str:
        return ACTION_LETTERS[self.truth]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "role": self.role, "world": self.world, "step": self.step, "agent": self.agent,
                "agent_name": self.agent_name, "concepts": list(self.concepts), "truth": self.truth_word,
                "description": self.description, "facts": self.facts.to_dict(), "image": self.image,
                "template": TEMPLATE_VERSION}

    @classmethod
    def from_json(cls, d: dict[str, Any], where: str) -> "Question":
        try:
            truth = ACTION_WORDS.index(d["truth"])
            return cls(str(d["id"]), str(d["role"]), str(d["world"]), int(d["step"]), int(d["agent"]),
                       str(d["agent_name"]), tuple(d.get("concepts", ())), truth, str(d["description"]),
                       SceneFacts.from_dict(d["facts"]), d.get("image"))
        except (KeyError, ValueError, TypeError) as exc:
            raise ConfigError(f"bad question: {exc!r}", where) from None


def question_text(q: Question) -> str:
    """The question stem shown after the description (the same for humans and models)."""
    opts = " ".join(f"{l}) {w}" for l, w in zip(ACTION_LETTERS, ACTION_WORDS))
    return f"What is {q.agent_name}'s next action? {opts}"


@dataclass
class Study:
    """A loaded study folder."""

    folder: Path
    spec: StudySpec
    questions: list[Question]
    hardness: dict[str, str]
    created: str = ""
    bank_sha256: str = ""

    @property
    def path(self) -> Path:
        return self.folder / STUDY_FILE

    def by_role(self, role: str) -> list[Question]:
        return [q for q in self.questions if q.role == role]

    @property
    def test(self) -> list[Question]:
        return self.by_role("test")

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(qid)

    @property
    def responses_dir(self) -> Path:
        return self.folder / "responses"

    @property
    def llm_dir(self) -> Path:
        return self.folder / "llm"


# ---- sampling --------------------------------------------------------------------------------------------------

def parse_seeds(text: str) -> tuple[int, ...]:
    """The worlds of a study as typed: '0-4', '0,3,7' or '0-2,9'; a ValueError says what was expected."""
    out: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part[1:]:
                a, b = part.split("-", 1) if not part.startswith("-") else ("-" + part[1:].split("-", 1)[0],
                                                                             part[1:].split("-", 1)[1])
                out.extend(range(int(a), int(b) + 1))
            elif part:
                out.append(int(part))
    except ValueError:
        raise ValueError(f"seeds: expected e.g. 0-4 or 0,3,7, got {text!r}") from None
    if not out:
        raise ValueError("seeds: at least one seed")
    return tuple(out)


def allocate(total: int, available: Sequence[int]) -> list[int]:
    """Stratified quotas: as even a split of ``total`` over the strata as ``available`` allows. Equal shares
    first (the remainder to the first strata), then what a stratum cannot fill goes, one by one, to the strata
    that still have items, in stratum order. Raises when the pool is too small."""
    if total > sum(available):
        raise ConfigError(f"the source offers only {sum(available)} questions, {total} asked")
    k = len(available)
    quota = [total // k + (1 if i < total % k else 0) for i in range(k)]
    quota = [min(q, a) for q, a in zip(quota, available)]
    while sum(quota) < total:
        for i in range(k):
            if sum(quota) < total and quota[i] < available[i]:
                quota[i] += 1
    return quota


def hardness_marks(counts: Sequence[int]) -> dict[str, str]:
    """Marks for the table header, from how rare each answer is among all candidate (frame, agent) pairs of the
    source (before de-duplication, i.e. how often the rules decide it): '‡' under 1/8 of them,
    '†' under 1/4, none otherwise (rare answers are the hard ones for humans and models alike; a study file may
    set its own marks)."""
    total = max(1, sum(counts))
    out = {}
    for w, c in zip(ACTION_WORDS, counts):
        share = c / total
        out[w] = "‡" if share < 1 / 8 else "†" if share < 1 / 4 else ""
    return out


def _dedupe(cands: Sequence[Candidate]) -> list[tuple[Candidate, str]]:
    """Candidates with their description; a later candidate whose text and answer repeat an earlier one is
    dropped (consecutive frames often read the same and would be the same question twice)."""
    seen: set[tuple[str, int]] = set()
    out = []
    for c in cands:
        text = describe(c.facts)
        if (text, c.truth) not in seen:
            seen.add((text, c.truth))
            out.append((c, text))
    return out


def make_study(spec: StudySpec, folder: str | Path, *, base: Path | None = None,
               progress: Callable[[str, int, int], None] | None = None,
               cancelled: Callable[[], bool] | None = None) -> Study:
    """Build the question bank from ``spec`` and write the study folder (refuses a folder holding responses)."""
    spec.check()
    folder = Path(folder)
    if (folder / "responses").is_dir() and any((folder / "responses").iterdir()):
        raise ConfigError("this study folder already holds participants' responses; make the study in a new "
                          "folder", folder)
    snaps: dict = {}
    cands = spec.source.collect(concept_filter(spec.concepts, spec.cars_only), base=base,
                                progress=(lambda d, t: progress("simulating", d, t)) if progress else None,
                                cancelled=cancelled, snapshots=snaps if spec.modality != "text" else None)
    if cancelled is not None and cancelled():
        raise InterruptedError("cancelled")
    raw_counts = [sum(1 for c in cands if c.truth == a) for a in range(4)]
    pool = _dedupe(cands)
    by_action: list[list[tuple[Candidate, str]]] = [[p for p in pool if p[0].truth == a] for a in range(4)]
    counts = [len(b) for b in by_action]
    rng = np.random.default_rng(spec.sample_seed)
    order = [list(rng.permutation(len(b))) for b in by_action]
    picked: dict[int, list[int]] = {a: [] for a in range(4)}

    def take(a: int, n: int) -> list[tuple[Candidate, str]]:
        got = [by_action[a][i] for i in order[a][len(picked[a]):len(picked[a]) + n]]
        picked[a].extend(order[a][len(picked[a]):len(picked[a]) + n])
        return got

    # training documents cover every option first (the paper's demonstrations do), then round-robin
    roles: list[tuple[str, Candidate, str]] = []
    for role, n in (("training", spec.training), ("practice", spec.practice)):
        got = 0
        while got < n:
            before = got
            for a in range(4):
                if got < n:
                    items = take(a, 1)
                    if items:
                        roles.append((role, *items[0]))
                        got += 1
            if got == before:
                raise ConfigError(f"the source has too few questions for {n} {role} items")
    left = [counts[a] - len(picked[a]) for a in range(4)]
    quota = allocate(spec.questions, left)
    for a in range(4):
        roles.extend(("test", *item) for item in take(a, quota[a]))
    # stable bank order: role, then (world, step, agent); ids follow that order
    rank = {"training": 0, "practice": 1, "test": 2}
    roles.sort(key=lambda r: (rank[r[0]], r[1].world, r[1].step, r[1].agent))
    questions = []
    for k, (role, c, text) in enumerate(roles):
        prefix = {"training": "t", "practice": "p", "test": "q"}[role]
        questions.append(Question(f"{prefix}{k + 1:04d}", role, c.world, c.step, c.agent, c.agent_name, c.concepts,
                                  c.truth, text, c.facts))
    folder.mkdir(parents=True, exist_ok=True)
    if spec.modality != "text":
        questions = render_images(spec, questions, snaps, folder, base, progress)
    hardness = spec.hardness or hardness_marks(raw_counts)
    study = Study(folder, spec, questions, hardness, time.strftime("%Y-%m-%dT%H:%M:%S"))
    save_study(study, pool_counts=raw_counts)
    return load_study(folder)


# ---- saving and loading ----------------------------------------------------------------------------------------

def _bank_bytes(questions: Sequence[Question]) -> bytes:
    return "".join(json.dumps(q.to_json(), ensure_ascii=False, sort_keys=True) + "\n"
                   for q in questions).encode("utf-8")


def save_study(study: Study, pool_counts: Sequence[int] | None = None) -> None:
    """Write questions.jsonl then study.yaml (each atomically; the YAML names the bank's hash)."""
    bank = _bank_bytes(study.questions)
    atomic_write_bytes(study.folder / BANK_FILE, bank)
    s = study.spec
    doc: dict[str, Any] = {
        "format": FORMAT, "version": 1, "name": s.name, "created": study.created,
        "source": s.source.to_dict(),
        "sampling": {"questions": s.questions, "concepts": list(s.concepts), "cars_only": s.cars_only,
                     "stratify": "action", "seed": s.sample_seed},
        "modality": s.modality,
        "training": {"count": s.training}, "practice": {"count": s.practice, "feedback": True},
        "order": {"seed": s.order_seed, "per_participant": s.per_participant_order},
        "time_limit_s": s.time_limit_s,
        "hardness": dict(study.hardness),
        "instructions": s.instructions, "consent": s.consent,
        "bank": {"file": BANK_FILE, "sha256": hashlib.sha256(bank).hexdigest(),
                 "counts": {w: sum(1 for q in study.test if q.truth == a) for a, w in enumerate(ACTION_WORDS)}},
    }
    if pool_counts is not None:
        doc["bank"]["pool_counts"] = {w: int(c) for w, c in zip(ACTION_WORDS, pool_counts)}
    atomic_write_text(study.path, "# LogiCity Studio study (docs/study.md)\n" + dump_yaml(doc))


def load_study(path: str | Path) -> Study:
    """Load a study folder (or its study.yaml); errors name the file and line."""
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    yml = folder / STUDY_FILE
    if not yml.is_file():
        raise ConfigError(f"no {STUDY_FILE} in this folder", folder)
    d = load_yaml(yml)
    if not is_mapping(d) or d.get("format") != FORMAT:
        raise ConfigError(f"not a study file (expected 'format: {FORMAT}')", yml, 1)
    reject_unknown_keys(d, ("format", "version", "name", "created", "source", "sampling", "modality", "training",
                            "practice", "order", "time_limit_s", "hardness", "instructions", "consent", "bank"))
    src = expect(d, "source", dict)
    source: Any
    if src.get("kind") == "simulated":
        source = SimulatedSource(str(expect(src, "mode", str)), src.get("split"),
                                 tuple(int(x) for x in expect(src, "seeds", list)), int(expect(src, "steps", int)),
                                 int(expect(src, "min_step", int)))
    elif src.get("kind") == "vap":
        source = VapDatasetSource(str(expect(src, "path", str)), str(expect(src, "split", str)),
                                  int(expect(src, "min_step", int)))
    else:
        raise src.error(f"unknown source kind {src.get('kind')!r} (expected 'simulated' or 'vap')", "kind")
    smp = expect(d, "sampling", dict)
    order = expect(d, "order", dict)
    tl = d.get("time_limit_s")
    if tl is not None and (isinstance(tl, bool) or not isinstance(tl, (int, float))):
        raise d.error("time_limit_s must be a number of seconds or null", "time_limit_s")
    spec = StudySpec(str(expect(d, "name", str)), source, int(expect(smp, "questions", int)),
                     tuple(str(c) for c in expect(smp, "concepts", list)), bool(smp.get("cars_only", True)),
                     int(expect(smp, "seed", int)), str(expect(d, "modality", str)),
                     int(expect(expect(d, "training", dict), "count", int)),
                     int(expect(expect(d, "practice", dict), "count", int)),
                     int(expect(order, "seed", int)), bool(order.get("per_participant", True)),
                     float(tl) if tl is not None else None, str(d.get("instructions", DEFAULT_INSTRUCTIONS)),
                     str(d.get("consent", DEFAULT_CONSENT)), dict(d.get("hardness") or {}) or None)
    try:
        spec.check()
    except ConfigError as exc:
        raise ConfigError(exc.message, yml) from None
    bank_meta = expect(d, "bank", dict)
    bank_path = folder / str(expect(bank_meta, "file", str))
    try:
        raw = bank_path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the question bank: {exc.strerror}", bank_path) from None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != bank_meta.get("sha256"):
        raise bank_meta.error(f"{bank_path.name} does not match the SHA-256 recorded here (the bank was edited or "
                              "replaced); refusing to run a study on a different bank", "sha256")
    questions = []
    for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if line.strip():
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"not JSON: {exc.msg}", bank_path, n, exc.colno) from None
            questions.append(Question.from_json(obj, f"{bank_path}:{n}"))
    ids = [q.id for q in questions]
    if len(set(ids)) != len(ids):
        raise ConfigError("question ids repeat", bank_path)
    hard = spec.hardness or {w: "" for w in ACTION_WORDS}
    return Study(folder, spec, questions, hard, str(d.get("created", "")), digest)


def participant_order(study: Study, participant: str) -> list[str]:
    """The test question ids in the order ``participant`` sees them: a permutation seeded by the study's order
    seed and (when per-participant) the participant id, so reopening a session gives the same order."""
    ids = [q.id for q in study.test]
    key = f"{study.spec.order_seed}:{participant if study.spec.per_participant_order else ''}"
    seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")
    perm = np.random.default_rng(seed).permutation(len(ids))
    return [ids[i] for i in perm]
