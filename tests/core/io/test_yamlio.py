"""core.io.yamlio: syntax errors point at the problem *and* at where the unfinished construct started."""
from __future__ import annotations

import pytest

from core.base.errors import ConfigError
from core.io.yamlio import loads_yaml
from tests.support.paths import ROOT


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


# ---- aliases, merge keys, byte-order marks (audit: RecursionError / ConstructorError / billion laughs) -------------

def test_recursive_alias_is_a_located_error():
    with pytest.raises(ConfigError) as ei:
        loads_yaml("name: &a [*a]\n", "m.yaml")
    assert ei.value.file == "m.yaml" and ei.value.line == 1 and "recursive YAML alias" in ei.value.message


def test_self_merge_and_merge_overrides_behave_as_in_yaml():
    import yaml

    for text in ("a: &a {b: 1, <<: *a}\n", "b: &b {x: 1, y: 2}\nu: {<<: *b, x: 5}\nv: {x: 0, <<: [*b, {y: 9, w: 1}]}\n"):
        assert loads_yaml(text) == yaml.safe_load(text)
    with pytest.raises(ConfigError, match="duplicate key 'b'"):
        loads_yaml("a: {b: 1, b: 2}\n")


def test_bad_merge_key_is_a_located_error():
    with pytest.raises(ConfigError) as ei:
        loads_yaml("name: t\nx: {<<: 5}\n", "m.yaml")
    assert ei.value.line == 2 and "merge" in ei.value.message


def test_alias_expansion_is_capped_quickly():
    import time

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 7):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    t = time.perf_counter()
    with pytest.raises(ConfigError, match="aliases expand to too many values"):
        loads_yaml("\n".join(lines), "laughs.yaml")
    assert time.perf_counter() - t < 5


def test_ordinary_aliases_and_merge_keys_still_work():
    data = loads_yaml("base: &b {x: 1, y: 2}\nuse: {<<: *b, z: 3}\nlist: [*b, *b]\n")
    assert data["use"] == {"x": 1, "y": 2, "z": 3} and data["list"] == [{"x": 1, "y": 2}] * 2


def test_yaml_and_rule_files_with_a_byte_order_mark(tmp_path):
    from core.io.yamlio import load_yaml
    from core.logic.lang.ontology import load_ontology
    from core.logic.lang.program import load_rules

    root = ROOT
    p = tmp_path / "bom.yaml"
    p.write_bytes("\ufeffa: 1\n".encode("utf-8"))
    assert load_yaml(p) == {"a": 1}
    onto = load_ontology(root / "configs" / "ontologies" / "easy.yaml")
    text = (root / "configs" / "rules" / "sim_easy.rules").read_text(encoding="utf-8")
    r = tmp_path / "bom.rules"
    r.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert load_rules(r, onto).to_text() == load_rules(root / "configs" / "rules" / "sim_easy.rules", onto).to_text()


def test_mode_file_negative_steps_names_the_file_and_line(tmp_path):
    from core.sim.config import load_mode

    base = ROOT / "configs" / "modes"
    lines = []
    for ln in (base / "sim_easy.yaml").read_text(encoding="utf-8").splitlines():
        key, _, value = ln.partition(": ")
        if key in ("map", "agents", "ontology", "rules"):
            ln = f"{key}: {(base / value.strip()).resolve()}"
        if key != "steps":
            lines.append(ln)
    m = tmp_path / "mode.yaml"
    m.write_text("\n".join(lines) + "\nsteps: -4\n", encoding="utf-8")
    with pytest.raises(ConfigError) as ei:
        load_mode(m)
    assert ei.value.file == str(m) and ei.value.line == len(lines) + 1 and "steps" in ei.value.message
