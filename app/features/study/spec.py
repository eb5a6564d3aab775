"""The study feature: the Study menu (design a study, run a participant session, results, evaluate a language
model)."""
from __future__ import annotations

from app.features.study.controller import StudyController
from app.shell.features import FeatureSpec, register

register(FeatureSpec("study", StudyController))
