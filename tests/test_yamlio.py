"""core.yamlio: syntax errors point at the problem *and* at where the unfinished construct started."""
from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.yamlio import loads_yaml


@pytest.mark.parametrize("text, at, started, hint", [
    ("a: 1\nb: [1, 2\nc: 3\n", (3, 2), "the flow sequence started at line 2, column 4", "a closing ']'"),
    ("a: {x: 1\nb: 2\n", (2, 2), "the flow mapping started at line 1, column 4", "a closing '}'"),
    ('a: "abc\nb: 2\n', (3, 1), "the quoted scalar started at line 1, column 4", "a closing quote"),
    ("a:\n  - 1\n  b: 2\n", (3, 3), "the block collection started at line 2, column 3", None),
    ("a: [1, b: 2, c: 3: 4]\n", (1, 18), "the flow sequence started at column 4 of this line", "a closing ']'"),
])
def test_syntax_error_names_where_the_construct_started(text, at, started, hint):
    with pytest.raises(ConfigError) as info:
        loads_yaml(text, "f.yaml")
    err = info.value
    assert (err.file, err.line, err.col) == ("f.yaml", *at)  # still located at the problem
    assert started in err.message
    assert (f"is {hint} missing?" in err.message) if hint else "missing" not in err.message


def test_error_without_a_context_is_unchanged():
    with pytest.raises(ConfigError) as info:
        loads_yaml("a: b: c\n", "f.yaml")
    assert str(info.value) == "f.yaml:1:5: YAML syntax error: mapping values are not allowed here"


def test_prompt_bank_unclosed_bracket_mentions_its_line(tmp_path):
    """The QA case: an unclosed '[' on line 34 of the prompt bank was reported only at 52:17."""
    from core.icongen.prompts import DEFAULT_PROMPT_FILE, PromptBank

    lines = DEFAULT_PROMPT_FILE.read_text(encoding="utf-8").splitlines()
    lines[33] = "      - [light grey square concrete sidewalk slabs, thin joints"
    bank = tmp_path / "icon_prompts.yaml"
    bank.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        PromptBank.load(bank)
    assert info.value.file == str(bank) and "started at line 34" in str(info.value)
