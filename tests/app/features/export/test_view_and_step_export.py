"""Exporting what the map shows, driven through the real actions and dialog buttons: Ctrl+E saves the view as
PNG, the step-range dialog starts in the last used folder, captions frames with their step, and remembers an
unticked caption."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtGui, QtWidgets  # noqa: E402


def _trigger(qtbot, win, *menu: str) -> None:
    """What a click on the menu entry ``menu`` or its shortcut does: the action's triggered(checked=False), then
    the event loop runs."""
    win.trigger(*menu)
    qtbot.wait(20)


def test_ctrl_e_exports_the_view_as_png(studio, qtbot, tmp_path, monkeypatch):
    out = tmp_path / "view.png"
    asked = []

    def save_dialog(parent, title, start, filters):
        asked.append(start)
        return str(out), filters

    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", staticmethod(save_dialog))
    action = studio.action("File", "Export view as PNG…")
    assert action.shortcut() == QtGui.QKeySequence("Ctrl+E")
    _trigger(qtbot, studio, "File", "Export view as PNG…")
    assert studio.last_error is None, studio.last_error      # the action's checked=False never reaches the path
    assert asked and out.exists() and out.stat().st_size > 1000
    assert studio.last_message == f"Saved {out}"


def _open_export_dialog(qtbot, win):
    _trigger(qtbot, win, "File", "Export steps as GIF / images…")                  # File ▸ Export steps as GIF / images… (Ctrl+Shift+E)
    dlg = win.window.findChildren(QtWidgets.QDialog, "exportDialog")[-1]
    qtbot.waitUntil(dlg.isVisible, timeout=WAIT)
    return dlg


def _ok(dlg):
    box = dlg.findChild(QtWidgets.QDialogButtonBox)
    box.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).click()


def _wait_export(qtbot, win):
    exp = win.feature("export").current
    done = []
    exp.finished.connect(lambda ok, msg: done.append(ok))
    qtbot.waitUntil(lambda: bool(done) or exp.done >= len(exp.steps) and not exp._timer.isActive(), timeout=WAIT)
    qtbot.waitUntil(lambda: win.feature("export").current is exp and not exp._timer.isActive(), timeout=WAIT)


def test_export_dialog_starts_in_the_last_used_folder_and_captions_frames(studio, qtbot, tmp_path, monkeypatch):
    from PIL import Image

    monkeypatch.setattr(Path, "cwd", classmethod(lambda cls: tmp_path / "launch"))
    simulate(qtbot, studio, 3)
    dlg = _open_export_dialog(qtbot, studio)
    assert not dlg.out_edit.text().startswith(str(tmp_path / "launch"))       # not the launch folder
    assert Path(dlg.out_edit.text()).parent == Path.home()   # no project folder, nothing remembered yet
    assert dlg.caption.isChecked()                                              # step captions by default
    dlg.kind.setCurrentIndex(1)                                                 # PNG image sequence
    dlg.range_edit.setText("1-2")
    dlg.out_edit.setText(str(tmp_path / "runs" / "captioned"))
    dlg.width_spin.setValue(300)
    _ok(dlg)
    qtbot.waitUntil(lambda: (tmp_path / "runs" / "captioned" / "frame_00002.png").exists(), timeout=WAIT)
    _wait_export(qtbot, studio)
    # the same frames without the caption: they differ only in the top-left corner, where "step k" is written
    done = []
    exp = studio.feature("export").start([1, 2], "images", tmp_path / "plain", width=300, show_progress=False)
    exp.finished.connect(lambda ok, msg: done.append(ok))
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
    for k in (1, 2):
        a = np.asarray(Image.open(tmp_path / "runs" / "captioned" / f"frame_{k:05d}.png").convert("RGB"), int)
        b = np.asarray(Image.open(tmp_path / "plain" / f"frame_{k:05d}.png").convert("RGB"), int)
        diff = np.argwhere(np.abs(a - b).sum(axis=2) > 30)
        assert len(diff) > 20, "no caption drawn"
        assert diff[:, 0].max() < a.shape[0] // 4 and diff[:, 1].max() < a.shape[1] // 2
    # the next dialog starts where the last export went and remembers that the caption was wanted
    assert Path(studio.settings.value("export/folder")) == (tmp_path).resolve()
    dlg = _open_export_dialog(qtbot, studio)
    assert Path(dlg.out_edit.text()).parent == tmp_path.resolve()
    assert dlg.caption.isChecked()
    dlg.caption.setChecked(False)
    dlg.reject()


def test_unticked_caption_is_remembered_and_png_export_uses_the_folder(studio, qtbot, tmp_path, monkeypatch):
    simulate(qtbot, studio, 2)
    dlg = _open_export_dialog(qtbot, studio)
    dlg.caption.setChecked(False)
    dlg.range_edit.setText("0-1")
    dlg.out_edit.setText(str(tmp_path / "gifs" / "a.gif"))
    (tmp_path / "gifs").mkdir()
    _ok(dlg)
    qtbot.waitUntil(lambda: (tmp_path / "gifs" / "a.gif").exists(), timeout=WAIT)
    _wait_export(qtbot, studio)
    assert _open_export_dialog(qtbot, studio).caption.isChecked() is False
    asked = []
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName",
                        staticmethod(lambda parent, title, start, filters: (asked.append(start), ("", ""))[1]))
    _trigger(qtbot, studio, "File", "Export view as PNG…")
    assert asked == [str((tmp_path / "gifs").resolve() / "map.png")]
