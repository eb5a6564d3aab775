"""The studio's save path keeps a user's files safe: File ▸ Save project as… over a
project whose files lead outside its folder, or that names the studio's own files, is refused with an error
dialog before anything is written or deleted, even when the user answered Replace; a project whose mode file
names files elsewhere does not open."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402

from tests.support.studio import save_default_project, simulate  # noqa: E402


def _snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath) / n
            out[p.relative_to(root).as_posix()] = b"<link>" if p.is_symlink() else p.read_bytes()
    return out


def _save_as_from_the_menu(win, monkeypatch, folder: Path) -> None:
    """File ▸ Save project as…, the folder dialog answered with ``folder``."""
    file_menu = next(a.menu() for a in win.window.menuBar().actions() if a.text().replace("&", "") == "File")
    action = next(a for a in file_menu.actions() if a.text().replace("&", "").startswith("Save project as"))
    asked = []
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: asked.append(a) or str(folder)))
    action.trigger()
    assert asked, "the Save As action did not ask for a folder"


@pytest.fixture
def other(tmp_path):
    """Another project in ``tmp_path/other`` (the default city, a recorded episode)."""
    return save_default_project(tmp_path / "other")


def test_save_as_replace_never_deletes_through_a_symlinked_folder(studio, qtbot, monkeypatch, other, tmp_path):
    outside = tmp_path / "precious"
    (other / "episodes").rename(outside)                      # the other project's episodes live elsewhere
    (other / "episodes").symlink_to(outside, target_is_directory=True)
    keep, before = _snapshot(outside), _snapshot(other)
    simulate(qtbot, studio, 3)
    studio.answers["overwrite"] = "replace"                   # even a user who would say Replace is protected
    studio.last_error = None
    _save_as_from_the_menu(studio, monkeypatch, other)
    assert studio.last_error is not None
    title, file, problem = studio.last_error
    assert title in ("Could not replace the project", "Could not save the project")
    assert Path(file.split(":")[0]).name == "project.yaml"
    assert "outside the project folder" in problem and "episodes" in problem
    assert _snapshot(outside) == keep and _snapshot(other) == before
    assert studio.project.root is None and studio.dirty


def test_save_as_replace_refuses_a_manifest_naming_project_yaml(studio, qtbot, monkeypatch, other):
    text = (other / "project.yaml").read_text()
    (other / "project.yaml").write_text(text.replace("episodes:\n", "episodes:\n- file: project.yaml\n", 1))
    before = _snapshot(other)
    simulate(qtbot, studio, 2)
    studio.answers["overwrite"] = "replace"
    studio.last_error = None
    _save_as_from_the_menu(studio, monkeypatch, other)
    assert studio.last_error is not None and "reserved for the studio's own files" in studio.last_error[2]
    assert _snapshot(other) == before and studio.project.root is None


def test_save_as_replace_of_a_sound_project_still_works(studio, qtbot, monkeypatch, other):
    (other / "notes.txt").write_text("mine")
    simulate(qtbot, studio, 2)
    studio.answers["overwrite"] = "replace"
    _save_as_from_the_menu(studio, monkeypatch, other)
    from core.project.load import load_project, manifest_files

    assert studio.project.root == other and not studio.dirty
    assert set(_snapshot(other)) == manifest_files(other) | {"project.yaml", "notes.txt"}
    assert load_project(other).episodes[0].steps == studio.num_steps


def test_a_project_whose_mode_names_a_file_outside_does_not_open(studio, other, tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "rules.rules").write_bytes((other / "rules.rules").read_bytes())
    text = (other / "mode.yaml").read_text()
    (other / "mode.yaml").write_text(text.replace("rules: rules.rules", "rules: ../shared/rules.rules"))
    studio.last_error = None
    assert not studio.open_path(other, ask_save=False)
    title, file, problem = studio.last_error
    assert Path(file.split(":")[0]).name == "mode.yaml" and "must be inside its folder" in problem


def test_an_export_removes_what_a_killed_export_left_and_writes_frames_atomically(studio, qtbot, tmp_path,
                                                                                   monkeypatch):
    """Leftovers made the way a killed export leaves them (a temporary file of a process that is gone) are removed
    by the next export into that folder; an editor's backup and other files stay; no frame is written in place."""
    import subprocess
    import sys

    from core.io.fileio import TEMP_MARK, host_tag
    from tests.support.studio import WAIT

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    seq = tmp_path / "seq"
    seq.mkdir()
    stale = seq / f"frame_00001.png{TEMP_MARK}{host_tag()}-{p.pid}-a1b2c3d4.tmp"
    stale.write_bytes(b"half a PNG")
    keep = [seq / "frame_00001.png.a1b2c3d4.tmp", seq / "notes.tmp", seq / "mine.png"]
    for f in keep:
        f.write_text("the user's")
    simulate(qtbot, studio, 2)
    done = []
    exp = studio.feature("export").start([0, 1], "images", seq, width=120, show_progress=False)
    exp.finished.connect(lambda ok, msg: done.append(ok))
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
    assert done == [True]
    assert sorted(f.name for f in seq.iterdir()) == sorted(["frame_00000.png", "frame_00001.png"] +
                                                           [f.name for f in keep])
    assert all(f.read_text() == "the user's" for f in keep)
