"""A hand edit of a saved project's ``project.yaml`` that loading must refuse with a located error."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def assert_manifest_edit_is_located(saved: Path, tmp_path: Path, old: str, new: str, fragment: str) -> None:
    """Copy the project ``saved`` into ``tmp_path``, replace ``old`` by ``new`` in its project.yaml: loading it raises
    a LogiCityError that says ``fragment`` and points at project.yaml, at a line holding a word of ``new``."""
    from core.base.errors import LogiCityError
    from core.project.load import load_project

    root = tmp_path / "p"
    shutil.copytree(saved, root)
    text = (root / "project.yaml").read_text()
    assert old in text, text
    edited = text.replace(old, new, 1)
    (root / "project.yaml").write_text(edited)
    with pytest.raises(LogiCityError) as ei:
        load_project(root)
    err = ei.value
    assert fragment in err.message and err.file.endswith("project.yaml"), err.message
    bad_line = edited.splitlines()[err.line - 1]
    assert any(w in bad_line for w in new.replace(":", " ").split()), (err.line, bad_line)
