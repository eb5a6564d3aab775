"""Mode and SPF configuration errors that could crash or lose their location: file names longer
than the file system allows (OSError), ``eval_actions: [[Stop]]`` (TypeError), a split the mode lacks (no file
name), and a policy array name of thousands of digits (ValueError) are located LogiCityErrors."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from core.base.errors import ConfigError, PolicyError
from core.sim.config import load_mode
from core.tasks.spf.policy_files import load_policy
from core.tasks.spf.settings import load_spf_mode, mode_path
from tests.support.paths import ROOT

MODES = ROOT / "configs" / "modes"


def spf_copy(tmp_path, edit) -> "Path":  # noqa: F821 - a pathlib.Path
    """configs/modes/spf_easy.yaml copied with its relative file names made absolute, then edited."""
    text = (MODES / "spf_easy.yaml").read_text()
    for key in ("map", "agents_train", "agents_val", "agents_test", "ontology", "rules"):
        line = next(t for t in text.splitlines() if t.startswith(f"{key}: "))
        text = text.replace(line, f"{key}: {(MODES / line.split(': ', 1)[1]).resolve()}")
    p = tmp_path / "spf_mine.yaml"
    p.write_text(edit(text))
    return p


def line_of(path, prefix: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if t.lstrip().startswith(prefix))


@pytest.mark.parametrize("value", ["[[Stop]]", "[{a: 1}]", "[Stop, [Slow]]"])
def test_eval_actions_that_are_not_names(tmp_path, value):
    p = spf_copy(tmp_path, lambda t: t.replace("eval_actions: [Stop]", f"eval_actions: {value}"))
    with pytest.raises(ConfigError) as err:
        load_spf_mode(p, "train")
    assert err.value.file == str(p.resolve()) and err.value.line == line_of(p, "eval_actions")
    assert "unknown action" in err.value.message and "in eval_actions" in err.value.message


def test_a_missing_split_names_the_file(tmp_path):
    p = spf_copy(tmp_path, lambda t: "\n".join(x for x in t.splitlines() if not x.lstrip().startswith("val:")))
    with pytest.raises(ConfigError) as err:
        load_spf_mode(p, "val")
    assert err.value.file == str(p.resolve()) and err.value.line == line_of(p, "splits:")
    assert "has no split 'val' (splits: train, test)" in err.value.message


def test_a_file_name_longer_than_the_file_system_allows(tmp_path):
    long = "x" * 300 + ".yaml"
    p = spf_copy(tmp_path, lambda t: t.replace(next(x for x in t.splitlines() if x.startswith("map: ")),
                                               f"map: {long}"))
    with pytest.raises(ConfigError) as err:
        load_mode(p)
    assert (err.value.file, err.value.line) == (str(p), line_of(p, "map:"))
    assert "cannot be opened" in err.value.message
    with pytest.raises(ConfigError, match="cannot be opened"):
        mode_path(str(tmp_path / ("y" * 300)))


@pytest.mark.parametrize("digits", [400, 5000])
def test_policy_array_names_with_thousands_of_digits(tmp_path, digits):
    buf = io.BytesIO()
    arrays = {"W0": np.zeros((3, 4), np.float32), "b0": np.zeros(4, np.float32),
              "W" + "9" * digits: np.zeros((4, 4), np.float32)}
    with zipfile.ZipFile(buf, "w") as zf:
        for name, arr in arrays.items():
            b = io.BytesIO()
            np.save(b, arr)
            zf.writestr(name + ".npy", b.getvalue())
    p = tmp_path / "policy.npz"
    p.write_bytes(buf.getvalue())
    with pytest.raises(PolicyError) as err:
        load_policy(p)
    assert err.value.file == str(p) and "unexpected array 'W999" in err.value.message
    assert len(err.value.message) < 400


def test_a_high_layer_number_names_the_missing_layer(tmp_path):
    p = tmp_path / "policy.npz"
    np.savez(p, W0=np.zeros((3, 4), np.float32), b0=np.zeros(4, np.float32),
             W999999=np.zeros((4, 4), np.float32), b999999=np.zeros(4, np.float32))
    with pytest.raises(PolicyError, match=r"W999999 without W1;"):
        load_policy(p)
