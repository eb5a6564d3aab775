"""Exporter ``study``: a human/LLM study question bank (docs/study.md) through the export machinery.

The bank is one stratified sample over every candidate question of the source episodes, so it cannot be split: the
export is a single shard running :func:`core.study.design.make_study` into ``study/`` (``study.yaml``,
``questions.jsonl``, images for image modalities). What this adds: the manifest (options, file hashes, versions),
resume (a finished bank is not rebuilt), the CLI/dialog and the backends. The ``created:`` line of study.yaml is
set to a fixed text so that two exports of the same options are byte-identical (the bank's SHA-256 in study.yaml
covers questions.jsonl and is unaffected).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from core.base.paths import ROOT
from core.export.common import mode_files
from core.export.registry import ExporterSpec, Option, Shard, ShardResult, register, shard_name
from core.io.fileio import atomic_write_text
from core.study.design import StudySpec, make_study
from core.study.source import SimulatedSource

FIXED_CREATED = "reproducible export"


def _spec(options: Mapping[str, Any]):
    seeds = tuple(int(options["seed"]) + i for i in range(int(options["worlds"])))
    source = SimulatedSource(str(options["mode"]), split=options["split"] or None, seeds=seeds,
                             steps=int(options["steps"]))
    concepts = tuple(c.strip() for c in str(options["concepts"]).split(",") if c.strip())
    return StudySpec(name=str(options["name"]), source=source, questions=int(options["questions"]),
                     concepts=concepts, cars_only=bool(options["cars_only"]), sample_seed=int(options["sample_seed"]),
                     modality=options["modality"], training=int(options["training"]),
                     practice=int(options["practice"]))


def plan(options: Mapping[str, Any]) -> list[Shard]:
    return [Shard(0, shard_name(0), {"seeds": [int(options["seed"]) + i for i in range(int(options["worlds"]))]})]


def run_shard(options: Mapping[str, Any], shard: Shard, out: Path) -> ShardResult:
    folder = out / "study"
    study = make_study(_spec(options), folder)
    yaml_path = study.path
    text = yaml_path.read_text(encoding="utf-8")
    atomic_write_text(yaml_path, re.sub(r"(?m)^created:.*$", f"created: {FIXED_CREATED}", text, count=1))
    files = sorted(p.relative_to(out).as_posix() for p in folder.rglob("*") if p.is_file())
    return ShardResult(shard.name, files, {"questions": len(study.test), "items": len(study.questions)})


def config_files(options: Mapping[str, Any]) -> dict[str, Path]:
    return mode_files({"mode": options["mode"], "split": options["split"], "engine": ""})


# registered only when the generator it wraps is part of this checkout (checked by file: importing its package
# would pull gymnasium into every CLI start-up)
_AVAILABLE = (Path(__file__).resolve().parents[1] / "study/design.py").is_file()

if _AVAILABLE:
    SPEC = register(ExporterSpec(
        name="study", title="Study question bank",
        description="A stratified question bank for human or LLM studies (docs/study.md): scene descriptions of "
                    "simulated states and the rule-derived action as the answer.",
        options=(
            Option("mode", "path", str(ROOT / "configs" / "modes" / "vap_hard.yaml"), "mode file of the source"),
            Option("split", "choice", "test", "agent set split", choices=("", "train", "val", "test")),
            Option("name", "str", "vap-mini-test", "study name"),
            Option("worlds", "int", 2, "simulated worlds (seeds seed..seed+worlds-1)", minimum=1),
            Option("seed", "int", 0, "first world seed", minimum=0),
            Option("steps", "int", 60, "steps per world", minimum=12),
            Option("questions", "int", 40, "test questions (stratified by action)", minimum=1),
            Option("concepts", "str", "tiro,reckless", "comma-separated concepts the asked agent must have"),
            Option("cars_only", "bool", True, "ask about cars only"),
            Option("sample_seed", "int", 0, "seed of the stratified sample", minimum=0),
            Option("modality", "choice", "text", "text, image or both", choices=("text", "image", "both")),
            Option("training", "int", 5, "training items", minimum=0),
            Option("practice", "int", 4, "practice items", minimum=0),
        ),
        plan=plan, run_shard=run_shard, config_files=config_files))
