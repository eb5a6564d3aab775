"""Policy files the loader fuzzer (tools/fuzz, docs/fuzzing.md) found crashing: each must be a PolicyError naming
the file, never a traceback."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from core.base.errors import PolicyError
from core.tasks.spf.policy_files import load_policy


def _npz(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=False)
    return buf.getvalue()


def test_a_member_that_is_no_npy_array_is_refused(tmp_path):
    """numpy hands back a member without the .npy magic as raw bytes: the MLP check must not take them for an array
    (calling .dtype on bytes is an AttributeError)."""
    p = tmp_path / "policy.npz"
    p.write_bytes(_npz({"W0.npy": b"not an array", "b0.npy": _npy(np.zeros(4, np.float32))}))
    with pytest.raises(PolicyError, match=r"member 'W0' of the archive is not a \.npy array") as ei:
        load_policy(p)
    assert ei.value.file == str(p)
