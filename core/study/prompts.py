"""k-shot prompts for language models and robust parsing of their answers (docs/study.md "LLM evaluation").

The prompt follows the paper's multiple-choice setting: an instruction, ``k`` solved demonstrations (the study's
training documents, which cover every option when k >= 4), then the question, each item being the scene
description, the question stem with options A Slow / B Normal / C Fast / D Stop, and ``Answer:``. The same text
goes to every back-end, so a batch export, an HTTP run and a local model see identical prompts.
"""
from __future__ import annotations

import re
from typing import Sequence

from core.study.design import Question, Study
from core.study.source import ACTION_LETTERS, ACTION_WORDS

__all__ = ["build_prompt", "demos_for", "parse_answer", "INSTRUCTION"]

INSTRUCTION = (
    "The following are multiple choice questions about the traffic rules of a simulated city. Each scene lists "
    "what one car sees; choose the car's next action. Reply with the letter of the answer.")


def demos_for(study: Study, k: int) -> list[Question]:
    """The first ``k`` training documents in an order that covers every option first (A, B, C, D, then the
    rest in bank order)."""
    train = study.by_role("training")
    if k > len(train):
        raise ValueError(f"{k}-shot needs {k} training documents; the study has {len(train)}")
    first: list[Question] = []
    for a in range(4):
        q = next((t for t in train if t.truth == a and t not in first), None)
        if q is not None:
            first.append(q)
    rest = [t for t in train if t not in first]
    return (first + rest)[:k]


def _item(q: Question) -> str:
    opts = "\n".join(f"{l}. {w}" for l, w in zip(ACTION_LETTERS, ACTION_WORDS))
    return f"{q.description}\nQuestion: What is {q.agent_name}'s next action?\n{opts}\nAnswer:"


def build_prompt(question: Question, demos: Sequence[Question]) -> str:
    parts = [INSTRUCTION, ""]
    for d in demos:
        parts += [f"{_item(d)} {d.truth_letter}", ""]
    parts.append(_item(question))
    return "\n".join(parts)


_WORD = {w.lower(): l for w, l in zip(ACTION_WORDS, ACTION_LETTERS)}
_ANSWER_IS = re.compile(r"answer\s*(?:is|:|=)?\s*[:\-]?\s*\(?\**\s*([ABCD])\b", re.I)
_LEADING = re.compile(r"^[\s\*\"'`\(\[]*([ABCD])(?:$|[\.\):\]\*\"'`,-]|\s+(?![a-z]))")  # not "A car ..."
_WORDS = re.compile(r"\b(slow|normal|fast|stop)\b", re.I)
_LETTERS = re.compile(r"(?<![A-Za-z])([ABCD])(?![A-Za-z])")


def parse_answer(text: str | None) -> str | None:
    """The option letter a reply gives, or None when it gives none or several.

    Accepted, in this order: "Answer: C" / "the answer is (C)"; a reply starting with the letter ("C", "C.",
    "(C) Fast"); option words ("Fast", "it will stop") when only one of them appears; a lone letter when exactly
    one distinct letter A-D stands on its own in a short reply.
    """
    if not text:
        return None
    t = text.strip()
    m = _ANSWER_IS.search(t)
    if m:
        return m.group(1).upper()
    m = _LEADING.match(t)
    if m:
        return m.group(1)
    words = {w.lower() for w in _WORDS.findall(t)}
    if len(words) == 1:
        return _WORD[words.pop()]
    if len(t.split()) <= 4:
        letters = set(_LETTERS.findall(t))
        if len(letters) == 1 and not words:
            return letters.pop()
    return None
