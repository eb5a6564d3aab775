"""Small studio fixes of issue 13 item 6, each driven the way a user does it (the real QAction, its shortcut's
signal or the dialog's buttons, with the event loop running): Ctrl+E, Reset after Set seed, the status-line hint
while playing, the Docks menu raising a tabbed dock, export captions and the remembered export folder, and the
inspector's true-predicates table in sight at 1440x900."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtGui, QtWidgets  # noqa: E402


def _trigger(qtbot, win, name: str) -> None:
    """What a menu click or the shortcut does: the action's triggered(checked=False), then the event loop runs."""
    win.actions_by_name[name].trigger()
    qtbot.wait(20)


# ---- no action passes its `checked` argument to a slot ------------------------------------------------------------
def test_ctrl_e_exports_the_view_as_png(studio, qtbot, tmp_path, monkeypatch):
    out = tmp_path / "view.png"
    asked = []

    def save_dialog(parent, title, start, filters):
        asked.append(start)
        return str(out), filters

    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", staticmethod(save_dialog))
    action = studio.actions_by_name["export_png"]
    assert action.shortcut() == QtGui.QKeySequence("Ctrl+E")
    _trigger(qtbot, studio, "export_png")
    assert studio.last_error is None, studio.last_error      # was: "expected str … not bool" (checked=False as path)
    assert asked and out.exists() and out.stat().st_size > 1000
    assert studio.last_message == f"Saved {out}"


def test_a_plain_actions_slot_never_receives_checked(studio, qtbot):
    got = []

    def slot(value="untouched"):
        got.append(value)

    act = studio._act("probe", slot)
    act.trigger()
    assert got == ["untouched"]


def test_reset_restarts_from_the_seed_the_user_set(studio, qtbot, monkeypatch):
    monkeypatch.setattr(QtWidgets.QInputDialog, "getInt", staticmethod(lambda *a, **k: (7, True)))
    studio.answers["reset"] = "reset"
    _trigger(qtbot, studio, "seed")                       # Simulation ▸ Set seed… 7
    qtbot.waitUntil(lambda: studio.history is not None and studio.history.meta.get("seed") == 7, timeout=WAIT)
    simulate(qtbot, studio, 3)
    first = studio.history
    _trigger(qtbot, studio, "reset")                      # Ctrl+R: must keep seed 7 (was: seed 0)
    qtbot.waitUntil(lambda: studio.history is not first and studio.history is not None, timeout=WAIT)
    assert studio.history.meta["seed"] == 7 and studio.project.seed == 7
    assert "seed 7" in studio.last_message


# ---- status line --------------------------------------------------------------------------------------------------
def test_press_space_hint_is_gone_once_playing(studio, qtbot):
    bar = studio.statusBar()
    assert "Press Space to play" in bar.currentMessage()
    _trigger(qtbot, studio, "play")
    try:
        assert studio.playing
        assert "Press Space" not in bar.currentMessage() and "Press Space" not in studio.last_message
        assert bar.currentMessage().startswith("Ready: 18 agents, seed 0")
    finally:
        studio.pause()


# ---- docks --------------------------------------------------------------------------------------------------------
def test_view_docks_render_comes_to_the_front(studio, qtbot):
    render, stats = studio.docks["render"], studio.docks["statistics"]
    assert not render.isVisible()
    entry = next(a for a in studio.docks_menu.actions() if a.text().startswith("Render"))
    entry.trigger()                                       # View ▸ Docks ▸ Render (icon generation)
    qtbot.waitUntil(lambda: render.isVisible(), timeout=WAIT)
    qtbot.wait(50)
    assert render in studio.tabifiedDockWidgets(stats)   # it shares a tab group with Statistics
    assert not render.visibleRegion().isEmpty()           # in front of its tab group, not hidden behind Statistics
    assert stats.visibleRegion().isEmpty()


# ---- export -------------------------------------------------------------------------------------------------------
def _open_export_dialog(qtbot, win):
    _trigger(qtbot, win, "export_anim")                  # File ▸ Export steps as GIF / images… (Ctrl+Shift+E)
    dlg = win.findChildren(QtWidgets.QDialog, "exportDialog")[-1]
    qtbot.waitUntil(dlg.isVisible, timeout=WAIT)
    return dlg


def _ok(dlg):
    box = dlg.findChild(QtWidgets.QDialogButtonBox)
    box.button(QtWidgets.QDialogButtonBox.StandardButton.Ok).click()


def _wait_export(qtbot, win):
    exp = win.exporter.current
    done = []
    exp.finished.connect(lambda ok, msg: done.append(ok))
    qtbot.waitUntil(lambda: bool(done) or exp.done >= len(exp.steps) and not exp._timer.isActive(), timeout=WAIT)
    qtbot.waitUntil(lambda: win.exporter.current is exp and not exp._timer.isActive(), timeout=WAIT)


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
    exp = studio.exporter.start([1, 2], "images", tmp_path / "plain", width=300, show_progress=False)
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
    _trigger(qtbot, studio, "export_png")
    assert asked == [str((tmp_path / "gifs").resolve() / "map.png")]


# ---- inspector ----------------------------------------------------------------------------------------------------
def test_true_predicates_table_is_in_sight_at_1440x900(studio, qtbot):
    studio.resize(1440, 900)
    simulate(qtbot, studio, 5)
    studio.select_agent_by_name("Car_3")
    studio.flush_redraw()
    qtbot.wait(100)
    table = studio.inspector.table
    assert table.topLevelItemCount() > 0
    seen = table.visibleRegion().boundingRect()
    assert seen.height() >= 60, f"only {seen.height()} px of the true-predicates table are visible"


# ---- Safe Path Following window -----------------------------------------------------------------------------------
def test_spf_window_reads_step_of_budget(qtbot):
    from tests.support.spf import open_spf_window

    w = open_spf_window(qtbot)
    w.start("easy", "test", 3)
    budget = w.session.max_steps
    assert w.panel.steps_label.text() == f"step 0 of {budget}"     # was "138 / 138 left"
    w.act(2)                                                        # one step (key 2: Normal)
    assert w.panel.steps_label.text() == f"step 1 of {budget}"
