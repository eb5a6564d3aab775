"""File ▸ Export dataset… through the real menu action: the dialog runs an export as a job with progress, Cancel
stops it between shards (finished shards kept), and exporting again into the folder resumes to the same bytes."""
from __future__ import annotations

import json

import pytest

from tests.support.export import assert_same_export
from tests.support.studio import WAIT

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402


def _file_action(win):
    file_menu = next(a.menu() for a in win.window.menuBar().actions() if a.menu() and a.text().replace("&", "") == "File")
    return next(a for a in file_menu.actions() if a.objectName() == "exportDatasetAction")


def _dialog(qtbot, win):
    _file_action(win).trigger()
    dlg = win.window.findChild(QtWidgets.QDialog, "datasetExportDialog")
    qtbot.waitUntil(lambda: dlg is not None and dlg.isVisible(), timeout=WAIT)
    return dlg


def _fill(dlg, out, episodes, steps):
    dlg.kind.setCurrentIndex(dlg.kind.findData("episodes"))
    dlg.set_option("episodes", episodes)
    dlg.set_option("steps", steps)
    dlg.folder.setText(str(out))
    dlg.backend.setCurrentIndex(dlg.backend.findData("inline"))


def _export(qtbot, win, dlg):
    """Click Export; (the export controller, the list its finished reports are appended to)."""
    ctl = win.features["dataset_export"]
    seen = []
    ctl.finished.connect(seen.append)
    qtbot.mouseClick(dlg.export_button, QtCore.Qt.MouseButton.LeftButton)
    return ctl, seen


def test_menu_export_runs_with_progress_and_writes_a_manifest(studio, qtbot, tmp_path):
    dlg = _dialog(qtbot, studio)
    assert dlg.kind.count() >= 5 and {dlg.kind.itemData(i) for i in range(dlg.kind.count())} >= {
        "episodes", "spf", "parquet", "video", "pddl"}
    assert dlg.values()["mode"] == str(studio.project.config.source)   # the open mode file is proposed
    _fill(dlg, tmp_path / "eps", 2, 4)
    _ctl, seen = _export(qtbot, studio, dlg)
    assert not dlg.export_button.isEnabled() and dlg.cancel_button.text() == "Cancel"
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
    assert seen[0].status == "done", seen[0]
    manifest = json.loads((tmp_path / "eps" / "manifest.json").read_text())
    assert manifest["counts"]["episodes"] == 2 and manifest["options"]["steps"] == 4
    assert dlg.progress.value() == dlg.progress.maximum() == 2 and dlg.status.text().startswith("Done: 2 shards")
    assert dlg.export_button.isEnabled() and dlg.cancel_button.text() == "Close"
    assert "Done" in studio.last_message


def test_cancel_keeps_finished_shards_and_a_rerun_resumes(studio, qtbot, tmp_path):
    from core.export.runner import run_export

    dlg = _dialog(qtbot, studio)
    _fill(dlg, tmp_path / "run", 6, 150)
    ctl, seen = _export(qtbot, studio, dlg)
    qtbot.waitUntil(lambda: dlg.progress.value() >= 1, timeout=60_000)
    qtbot.mouseClick(dlg.cancel_button, QtCore.Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
    assert seen[0].status == "cancelled" and "resume" in dlg.status.text()
    done = sorted(p.name for p in (tmp_path / "run" / ".export").glob("shard-*.json"))
    assert 1 <= len(done) < 6 and not (tmp_path / "run" / "manifest.json").exists()
    seen.clear()
    qtbot.mouseClick(dlg.export_button, QtCore.Qt.MouseButton.LeftButton)   # same folder: resumes
    qtbot.waitUntil(lambda: bool(seen), timeout=120_000)
    assert seen[0].status == "done" and len(ctl.last_report.skipped) == len(done)
    run_export("episodes", {"episodes": 6, "steps": 150}, tmp_path / "clean", backend="inline")
    assert_same_export(tmp_path / "run", tmp_path / "clean")


def test_a_bad_export_shows_the_error_and_keeps_the_studio(studio, qtbot, tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "thesis.tex").write_text("mine")
    dlg = _dialog(qtbot, studio)
    _fill(dlg, tmp_path / "busy", 1, 2)
    _ctl, seen = _export(qtbot, studio, dlg)
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)
    assert seen[0].status == "failed" and "not empty" in dlg.status.text()
    assert (tmp_path / "busy" / "thesis.tex").read_text() == "mine"
