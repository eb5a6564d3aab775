"""YAML inputs that must be refused quickly and with their location: deep nesting and undecodable bytes are reported
at file:line:col, a repeated key is refused as soon as it is read, and texts beyond the size limit are refused
before parsing."""
from __future__ import annotations

import pytest

from core.base.errors import ConfigError
from core.io import yamlio
from core.io.yamlio import MAX_YAML_CHARS, MAX_YAML_DEPTH, load_yaml, loads_yaml


@pytest.mark.parametrize("text, line, col", [
    ("a: " + "[" * 5000 + "]" * 5000, 1, 3 + MAX_YAML_DEPTH),                    # flow nesting
    ("a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 300)), MAX_YAML_DEPTH, 2 * MAX_YAML_DEPTH - 1),
    ("x:\n" + "".join("  " * i + "- \n" for i in range(300)), None, None),         # block sequences
])
def test_deep_nesting_is_located(text, line, col):
    with pytest.raises(ConfigError) as err:
        loads_yaml(text, "deep.yaml")
    assert err.value.file == "deep.yaml" and "nesting is too deep" in err.value.message
    assert err.value.line is not None and err.value.col is not None
    if line is not None:
        assert (err.value.line, err.value.col) == (line, col)


def test_nesting_up_to_the_limit_loads():
    depth = MAX_YAML_DEPTH - 1  # the mapping is one level, the lists the others
    value = loads_yaml("a: " + "[" * depth + "]" * depth)["a"]
    levels = 1
    while value:
        value, levels = value[0], levels + 1
    assert levels == depth


def test_undecodable_bytes_are_located(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_bytes("name: café\nmap: ok\nagents: a\xe9b\n".encode("utf-8").replace(b"a\xc3\xa9b", b"a\xe9b"))
    with pytest.raises(ConfigError) as err:
        load_yaml(p)
    assert (err.value.file, err.value.line, err.value.col) == (str(p), 3, 10)
    assert "not UTF-8" in err.value.message and "0xe9" in err.value.message


def test_a_repeated_key_is_refused_before_the_rest_is_read(monkeypatch):
    """The rest of the document is never composed, so a long file with an early repeated key is refused at once."""
    composed = []
    original = yamlio._depth_loader

    def counting(fname):
        cls = original(fname)

        class Counting(cls):
            def compose_node(self, parent, index):
                composed.append(1)
                return super().compose_node(parent, index)
        return Counting

    monkeypatch.setattr(yamlio, "_depth_loader", counting)
    text = "name: a\nrules: r\nmap: m\nrules: again\n" + "".join(f"k{i}: [1, 2, 3]\n" for i in range(5000))
    with pytest.raises(ConfigError) as err:
        loads_yaml(text, "mode.yaml")
    assert (err.value.line, err.value.col) == (4, 1) and "duplicate key 'rules'" in err.value.message
    assert len(composed) < 20


def test_merge_keys_may_still_be_overridden():
    data = loads_yaml("base: &b {x: 1, y: 2}\nitem:\n  <<: *b\n  x: 5\n")
    assert dict(data["item"]) == {"x": 5, "y": 2}


def test_oversized_texts_and_files(tmp_path):
    text = "a: 1\n" + "# pad\n" * (MAX_YAML_CHARS // 6 + 1)
    with pytest.raises(ConfigError, match="YAML text too long") as err:
        loads_yaml(text, "big.yaml")
    assert (err.value.line, err.value.col) == (1, 1)
    p = tmp_path / "big.yaml"
    p.write_text("a: 1\n" + "#" * (4 * MAX_YAML_CHARS + 1))
    with pytest.raises(ConfigError, match="YAML file too large"):
        load_yaml(p)


@pytest.mark.parametrize("text", ["rules: !!int\n", "a: !!float\n", "a: !!bool\n", "a: !!timestamp x\n",
                                  "a: !!int _\n"])
def test_explicitly_tagged_empty_scalars(text):
    """PyYAML's constructors raised IndexError/KeyError/AttributeError for these (found by the fuzz suite)."""
    with pytest.raises(ConfigError) as err:
        loads_yaml(text, "mode.yaml")
    assert (err.value.file, err.value.line) == ("mode.yaml", 1) and "YAML value" in err.value.message
