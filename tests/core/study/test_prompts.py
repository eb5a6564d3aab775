"""LLM prompts (k-shot, demos cover every option) and robust answer parsing."""
from __future__ import annotations

import pytest

from core.study.design import load_study
from core.study.prompts import build_prompt, demos_for, parse_answer


@pytest.mark.parametrize("reply,letter", [
    ("C", "C"), ("C.", "C"), (" (B) Normal", "B"), ("D) Stop", "D"), ("**A**", "A"),
    ("Answer: D", "D"), ("The answer is (C).", "C"), ("answer is b", "B"), ("Answer:\nA. Slow", "A"),
    ("Fast", "C"), ("It will stop.", "D"), ("normal", "B"), ("SLOW because of the pedestrian", "A"),
    ("B\n\nExplanation: the car is not at an intersection", "B"),
])
def test_parses_letters_and_words(reply, letter):
    assert parse_answer(reply) == letter


@pytest.mark.parametrize("reply", [
    "", None, "I am not sure.", "Either Slow or Fast", "A car at the crossing must slow or stop", "E",
    "The scene has a police car", "42",
])
def test_unparseable_replies_give_none(reply):
    assert parse_answer(reply) is None


def test_five_shot_prompt_covers_every_option(mini_study_dir):
    study = load_study(mini_study_dir)
    demos = demos_for(study, 5)
    assert len(demos) == 5 and {d.truth for d in demos} == {0, 1, 2, 3}
    q = study.test[0]
    p = build_prompt(q, demos)
    assert p.count("Answer:") == 6 and p.endswith("Answer:")
    assert q.description in p and all(d.description in p for d in demos)
    for d in demos:
        assert f"Answer: {d.truth_letter}\n" in p
    assert "A. Slow\nB. Normal\nC. Fast\nD. Stop" in p
    assert build_prompt(q, demos) == p          # deterministic
    with pytest.raises(ValueError):
        demos_for(study, 6)
