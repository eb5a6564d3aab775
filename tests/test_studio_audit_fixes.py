"""Studio defects found in the GUI audit: breakpoint resume, colour-by validation, Save As over another project,
export failures and cancel, project.yaml ``studio:`` validation, unsaved-change tracking of breakpoints, quitting
with the Safe Path Following window open, overlays, Help shortcuts, --select, the render dock without a model."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from .studio_support import DEFAULT_MODE, ROOT, default_config, run_sim  # noqa: E402
from .test_studio_gui import WAIT, _close, _open_window, _simulate  # noqa: E402


@pytest.fixture
def settings_path(tmp_path):
    return tmp_path / "studio.ini"


@pytest.fixture
def studio(qtbot, settings_path):
    win = _open_window(qtbot, settings_path)
    yield win
    _close(win)


# ---- 1. Play resumes past the breakpoint that just fired ------------------------------------------------------

def test_check_breakpoints_skips_the_state_playback_resumes_from():
    from core.sim.events import Breakpoint, check_breakpoints

    ep = run_sim(default_config(), steps=60).buffer
    bp = Breakpoint("goal")
    k = next(k for k in range(ep.num_steps) if bp.check(ep, k) is not None)
    assert check_breakpoints([bp], ep, k).show == k
    assert check_breakpoints([bp], ep, k, resume_from=k) is None        # the hit we resume from
    assert check_breakpoints([bp], ep, k, resume_from=k - 1) is not None
    step_bp = Breakpoint("step", step=k + 1)                               # shows k + 1: still fires
    assert check_breakpoints([bp, step_bp], ep, k, resume_from=k).breakpoint == step_bp


@pytest.mark.parametrize("bp_args", [dict(kind="action", agent="Car_3", action="Stop"), dict(kind="goal")])
def test_play_continues_past_an_action_or_goal_breakpoint(studio, qtbot, bp_args):
    from core.sim.events import Breakpoint

    win = studio
    win.add_breakpoint(Breakpoint(**bp_args))
    win.set_speed(0)
    win.status("")
    win.play()
    qtbot.waitUntil(lambda: not win.playing and win.last_message.startswith("Breakpoint:"), timeout=WAIT)
    first = win.cursor
    assert first < win.num_steps
    seen = [first]
    win.set_speed(50)
    for _ in range(3):            # each Play moves on: to a later hit of the same breakpoint, never the same one
        win.status("")
        win.play()
        qtbot.waitUntil(lambda: win.cursor > seen[-1] or not win.playing, timeout=WAIT)
        qtbot.waitUntil(lambda: not win.playing or win.cursor > seen[-1] + 3, timeout=WAIT)
        win.pause()
        assert win.cursor > seen[-1], (seen, win.cursor, win.last_message)
        seen.append(win.cursor)
    # scrubbing back to the first hit and pressing Play also moves on
    win.set_cursor(first)
    win.play()
    qtbot.waitUntil(lambda: win.cursor > first or not win.playing, timeout=WAIT)
    win.pause()
    assert win.cursor > first


# ---- 2. colour-by: validated on the command line, bad remembered values fall back; unattended runs never ask ----

def _run_main(args, tmp_path, timeout=240):
    import os
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LOGICITY_DATA_DIR=str(tmp_path / "data"))
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_unknown_colour_by_on_the_command_line_is_an_error(tmp_path):
    out = tmp_path / "shot.png"
    res = _run_main(["--colour-by", "action", "--screenshot", str(out), "--steps", "5"], tmp_path, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "--colour-by" in res.stderr and "'action'" in res.stderr
    assert "Action (next)" in res.stderr and "Type" in res.stderr      # the choices
    assert not out.exists()


def test_bad_colour_by_from_settings_falls_back_to_the_default(qtbot, settings_path):
    from app.settings import make_settings

    s = make_settings(settings_path)
    s.setValue("view/colour_by", "Concept: IsNonexistent")
    s.sync()
    win = _open_window(qtbot, settings_path)
    try:
        assert win.scheme == "Type"
        assert win.colour_combo.currentText() == "Type"
        win.flush_redraw()                                   # was a KeyError on every redraw
        assert win.map.scene_data is not None
        win.scheme = "Nonsense"                              # however it gets there, a redraw never fails
        win.flush_redraw()
        assert win.scheme == "Type" and "Nonsense" in win.last_message
    finally:
        _close(win)


def test_unattended_window_never_shows_a_modal_question(qtbot, settings_path):
    win = _open_window(qtbot, settings_path)
    shown = []

    def close_modal():
        w = QtWidgets.QApplication.activeModalWidget()
        if w is not None:
            shown.append(w.windowTitle())
            w.close()

    timer = QtCore.QTimer()
    timer.timeout.connect(close_modal)
    timer.start(50)
    try:
        _simulate(qtbot, win, 2)
        win.answers.clear()
        win.non_interactive = True
        assert win.dirty
        win.close()                                          # what the screenshot give-up timer's quit does
        assert not win.isVisible()
        assert win.controller.thread.wait(10_000)
        assert shown == []
    finally:
        timer.stop()


def test_unknown_select_on_the_command_line_is_an_error(tmp_path):
    res = _run_main(["--select", "car_3", "--screenshot", str(tmp_path / "s.png")], tmp_path)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "'car_3'" in res.stderr and "did you mean 'Car_3'" in res.stderr and "Pedestrian" in res.stderr


# ---- 4. / 6. export: an unwritable image folder is reported; Cancel while encoding writes no GIF ------------------

def test_image_sequence_into_an_unwritable_folder_shows_an_error(studio, qtbot, tmp_path):
    from app.export import ExportDialog

    _simulate(qtbot, studio, 3)
    blocker = tmp_path / "afile"
    blocker.write_text("x")                  # a folder below a regular file can never be created (even by root)
    dlg = ExportDialog(studio)
    dlg.kind.setCurrentIndex(1)
    dlg.out_edit.setText(str(blocker / "seq"))
    dlg._start()                             # what OK does; raised OSError out of the slot before
    qtbot.waitUntil(lambda: studio.last_error is not None, timeout=WAIT)
    title, file, problem = studio.last_error
    assert title == "Could not export the steps" and str(blocker / "seq") in file and "folder" in problem
    prog = studio.findChild(QtWidgets.QProgressDialog, "exportProgress")
    assert prog is None or not prog.isVisible()
    from app.export import start_export

    studio.last_error = None                 # a GIF there fails in the encoder thread: also a dialog
    start_export(studio, [0, 1], "gif", blocker / "x.gif", width=100)
    qtbot.waitUntil(lambda: studio.last_error is not None, timeout=WAIT)
    assert studio.last_error[0] == "Could not export the steps"


def test_gif_builder_save_honours_cancel_before_committing(tmp_path):
    import numpy as np

    from core.view.export import GifBuilder

    gb = GifBuilder(5)
    gb.add(np.zeros((8, 8, 3), np.uint8))
    out = tmp_path / "a.gif"
    out.write_bytes(b"old")
    assert gb.save(out, cancelled=lambda: True) is None
    assert out.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["a.gif"]
    assert gb.save(out, cancelled=lambda: False) == out and out.read_bytes()[:3] == b"GIF"


def test_cancel_while_encoding_the_gif_writes_nothing(studio, qtbot, tmp_path, monkeypatch):
    import threading

    from app.export import start_export
    from core.view.export import GifBuilder

    _simulate(qtbot, studio, 4)
    release = threading.Event()
    real_encode = GifBuilder.encode
    monkeypatch.setattr(GifBuilder, "encode", lambda self: (release.wait(20), real_encode(self))[1])
    out = tmp_path / "c.gif"
    done = []
    exp = start_export(studio, list(range(5)), "gif", out, width=200)
    exp.finished.connect(lambda ok, m: done.append((ok, m)))
    qtbot.waitUntil(lambda: exp._thread is not None, timeout=WAIT)
    assert studio._export_progress.labelText() == "Encoding the GIF…"
    studio._export_progress.findChild(QtWidgets.QPushButton).click()     # Cancel
    release.set()
    qtbot.waitUntil(lambda: bool(done), timeout=WAIT)
    exp._thread.join(10)
    assert done[0][0] is False and "cancelled" in done[0][1]
    assert not out.exists() and list(tmp_path.glob("c.gif*")) == []
    assert "cancelled" in studio.last_message


# ---- 3. Save As into another project's folder asks, then replaces it cleanly -------------------------------------

def test_save_project_refuses_or_cleanly_replaces_another_project(tmp_path):
    from core.errors import ConfigError
    from core.project import load_project, manifest_files, new_project, save_project
    from core.sim.config import load_mode

    other = tmp_path / "other"
    easy = load_mode(ROOT / "configs" / "modes" / "sim_easy.yaml")
    save_project(new_project(easy, name="Easy"), other, episode=run_sim(easy, steps=3).buffer)
    (other / "notes.txt").write_text("mine")
    old = manifest_files(other)
    assert "mode.yaml" in old and "map.yaml" in old and any(f.startswith("episodes/") for f in old)
    cfg = default_config()
    with pytest.raises(ConfigError, match=r"already holds another project \('Easy'\)"):
        save_project(new_project(cfg, name="Default"), other)
    assert load_project(other).name == "Easy"
    save_project(new_project(cfg, name="Default"), other, episode=run_sim(cfg, steps=2).buffer, replace=True)
    q = load_project(other)
    assert q.name == "Default" and q.config.agents == cfg.agents
    used = manifest_files(other)
    files = {p.relative_to(other).as_posix() for p in other.rglob("*") if p.is_file()}
    assert files == used | {"project.yaml", "notes.txt"}            # nothing of "Easy" is left, notes stay


def test_save_as_over_another_project_asks_first(qtbot, tmp_path, settings_path):
    win = _open_window(qtbot, settings_path, ROOT / "configs" / "modes" / "sim_easy.yaml")
    other = tmp_path / "other"
    try:
        _simulate(qtbot, win, 4)
        assert win.save_to(other)
    finally:
        _close(win)
    before = (other / "project.yaml").read_text()
    win = _open_window(qtbot, settings_path)                 # the default city, unsaved
    try:
        _simulate(qtbot, win, 3)
        win.answers["overwrite"] = "cancel"
        assert not win.save_to(other)
        assert (other / "project.yaml").read_text() == before and win.project.root is None
        win.answers["overwrite"] = "replace"
        assert win.save_to(other)
        from core.project import load_project, manifest_files

        q = load_project(other)
        assert q.config.agents == win.project.config.agents
        files = {p.relative_to(other).as_posix() for p in other.rglob("*") if p.is_file()}
        assert files == manifest_files(other) | {"project.yaml"}
        # a non-empty folder that is no project is still refused
        junk = tmp_path / "junk"
        junk.mkdir()
        (junk / "a.txt").write_text("x")
        win.last_error = None
        assert not win.save_to(junk) and win.last_error is not None
        assert sorted(p.name for p in junk.iterdir()) == ["a.txt"]
    finally:
        _close(win)


# ---- 5. project.yaml: unknown or badly typed studio: entries are errors naming file and line ---------------------

_MANIFEST_EDITS = [
    ("studio:\n", "studio:\n  bogus: 1\n", "unknown key 'bogus' in studio"),
    ("  step: 7\n", "  step: abc\n", "'step' must be int"),
    ("  step: 7\n", "  step: -2\n", "step must be 0 or more"),
    ("  selected: Car_3\n", "  selected: 5\n", "'selected' must be str"),
    ("  selected: Car_3\n", "  selected: car_3\n", "no agent 'car_3' in this city (did you mean 'Car_3'?)"),
    ("  colour_by: Type\n", "  colour_by: Nonsense\n", "unknown colour-by scheme 'Nonsense'"),
    ("  name: main\n", "  name: main\n  bogus: 2\n", "unknown key 'bogus' in episode #1"),
    ("    step: 40\n", "    step: forty\n", "'step' must be int"),
    ("    step: 40\n", "    step: 40\n    when: later\n", "unknown key 'when' in breakpoint #1"),
    ("  - kind: step\n", "  - kind: sometimes\n", "unknown breakpoint kind 'sometimes'"),
    ("  breakpoints:\n  - kind: step\n    step: 40\n", "  breakpoints: 3\n", "breakpoints must be a list"),
    ("  breakpoints:\n  - kind: step\n    step: 40\n", "  breakpoints:\n  - 3\n", "breakpoint #1 must be a mapping"),
    ("studio:\n  colour_by: Type\n  step: 7\n  selected: Car_3\n  breakpoints:\n  - kind: step\n    step: 40\n",
     "studio: []\n", "studio must be a mapping"),
]


@pytest.fixture(scope="module")
def saved_project(tmp_path_factory):
    from core.project import new_project, save_project

    cfg = default_config()
    p = new_project(cfg)
    p.studio = {"colour_by": "Type", "step": 7, "selected": "Car_3", "breakpoints": [{"kind": "step", "step": 40}]}
    root = tmp_path_factory.mktemp("proj") / "base"
    save_project(p, root, episode=run_sim(cfg, steps=10).buffer)
    return root


@pytest.mark.parametrize("old, new, fragment", _MANIFEST_EDITS)
def test_malformed_studio_entries_are_located_errors(saved_project, tmp_path, old, new, fragment):
    import shutil

    from core.errors import LogiCityError
    from core.project import load_project

    root = tmp_path / "p"
    shutil.copytree(saved_project, root)
    text = (root / "project.yaml").read_text()
    assert old in text, text
    edited = text.replace(old, new, 1)
    (root / "project.yaml").write_text(edited)
    with pytest.raises(LogiCityError) as ei:
        load_project(root)
    err = ei.value
    assert fragment in err.message and err.file.endswith("project.yaml")
    bad_line = edited.splitlines()[err.line - 1]
    assert any(w in bad_line for w in new.replace(":", " ").split()), (err.line, bad_line)


def test_malformed_studio_entry_in_the_studio_shows_an_error(studio, saved_project, tmp_path):
    import shutil

    root = tmp_path / "p"
    shutil.copytree(saved_project, root)
    text = (root / "project.yaml").read_text()
    (root / "project.yaml").write_text(text.replace("  step: 7\n", "  step: abc\n"))
    before = studio.project
    assert not studio.open_path(root, ask_save=False)
    title, file, problem = studio.last_error
    assert file.endswith("project.yaml:" + str(text.splitlines().index("  step: 7") + 1) + ":3")
    assert "step" in problem and studio.project is before


# ---- 7. every breakpoint edit (dock checkbox, undo, redo) counts as an unsaved change ----------------------------

def test_breakpoint_edits_mark_the_project_modified(studio, qtbot, tmp_path):
    from core.sim.events import Breakpoint

    win = studio
    _simulate(qtbot, win, 3)
    win.add_breakpoint(Breakpoint("step", step=50))
    assert win.dirty
    assert win.save_to(tmp_path / "p") and not win.dirty and not win.isWindowModified()
    win.bp_list.item(0).setCheckState(QtCore.Qt.CheckState.Unchecked)      # disable it in the dock
    assert not win.breakpoints[0].enabled
    assert win.dirty and win.isWindowModified()
    win.answers["unsaved"] = "cancel"
    assert not win.open_path(tmp_path / "p")                               # the unsaved-changes question came
    win.undo.undo()                                                        # back to the saved state
    assert win.breakpoints[0].enabled and not win.dirty and not win.isWindowModified()
    win.undo.redo()
    assert not win.breakpoints[0].enabled and win.dirty
    assert win.save_to(tmp_path / "p") and not win.dirty
    win.undo.undo()                                                        # undo past the save point
    assert win.breakpoints[0].enabled and win.dirty and win.isWindowModified()
    assert win.save_to(tmp_path / "p") and not win.dirty
    _simulate(qtbot, win, win.num_steps + 1)                               # other changes stay unsaved
    win.add_breakpoint(Breakpoint("goal"))
    win.undo.undo()
    assert win.dirty


# ---- 8. File ▸ Quit closes the Safe Path Following window too, asking about its run --------------------------------

def test_quit_closes_the_spf_window_and_asks_about_its_run(qtbot, settings_path):
    win = _open_window(qtbot, settings_path, path=None)
    win.spf_play_action.trigger()
    spf = win.spf_play_window
    qtbot.addWidget(spf)
    spf.start("easy", "val", 0)
    spf.act(1)
    asked = []
    answer = ["cancel"]
    spf.ask = lambda key, *a, **k: (asked.append(key), answer[0])[1]
    win.actions_by_name["quit"].trigger()                  # Cancel in the SPF question: nothing closes
    assert asked == ["unsaved_run"] and spf.isVisible() and win.isVisible()
    answer[0] = "discard"
    win.actions_by_name["quit"].trigger()
    assert asked == ["unsaved_run", "unsaved_run"]
    assert not spf.isVisible() and not win.isVisible()
    assert win.controller.thread.wait(10_000)
    assert not [w for w in QtWidgets.QApplication.topLevelWidgets() if w.isVisible() and w.isWindow()
                and w in (win, spf)]


# ---- 9. the intersection overlay shows in icon-art mode too -----------------------------------------------------

def test_intersection_overlay_shows_over_icon_art(studio, qtbot):
    import numpy as np

    from app.export import qimage_to_rgb

    win = studio
    _simulate(qtbot, win, 2)
    for icons in (False, True):
        win.actions_by_name["icons"].setChecked(icons)
        assert win.map.style == ("icons" if icons else "glyphs"), win.last_error
        shots = []
        for on in (False, True):
            win.actions_by_name["intersections"].setChecked(on)
            win.flush_redraw()
            QtWidgets.QApplication.processEvents()
            shots.append(qimage_to_rgb(win.map.render_image(600)).astype(int))
        changed = np.abs(shots[0] - shots[1]).sum(axis=2) > 30
        assert changed.mean() > 0.01, (icons, changed.mean())      # the overlay is visible in both styles
    assert win.map.inter_item.zValue() > win.map.icon_item.zValue()


# ---- 10. Help ▸ Keyboard shortcuts lists every action's shortcut ------------------------------------------------

def test_help_lists_every_shortcut_of_the_window(studio):
    from PySide6 import QtGui

    listed = studio.shortcuts_html()
    rows = studio.shortcut_rows()
    keys_listed = {k for keys, _, _ in rows for k in keys.split(", ")}
    actions = studio.findChildren(QtGui.QAction)
    with_keys = [a for a in actions if a.shortcuts()]
    assert studio.spf_play_action in with_keys
    for a in with_keys:
        for seq in a.shortcuts():
            k = seq.toString(QtGui.QKeySequence.SequenceFormat.NativeText)
            assert k in keys_listed, (a.text(), k)
    assert "Ctrl+Shift+F" in listed and "Safe Path Following" in listed
    assert len({id(a) for a in studio.all_actions()}) == len(studio.all_actions())


# ---- 11. Render dock without a model; View ▸ Reset layout keeps the Render dock hidden ----------------------------

def test_generate_without_a_model_says_how_to_configure_one(studio, monkeypatch):
    monkeypatch.delenv("LOGICITY_ICON_MODEL", raising=False)
    win = studio
    win.docks["render"].show()
    rd = win.render_dock
    rd.model_edit.setText("")
    rd.tabs.setCurrentIndex(0)
    rd.generate_btn.click()
    assert not rd.is_generating()
    text = rd.status_label.text()
    assert "no text-to-image model is configured" in text and "Model tab" in text and rd.status_label.isVisible()
    assert rd.tabs.currentWidget() is rd.model_tab


def test_reset_layout_restores_the_default_dock_visibility(studio):
    win = studio
    assert not win.docks["render"].isVisible() and win.docks["timeline"].isVisible()
    win.docks["render"].show()
    win.docks["legend"].hide()
    win.reset_layout()
    assert not win.docks["render"].isVisible()
    assert all(win.docks[n].isVisible() for n in ("timeline", "inspector", "statistics"))
    assert not win.docks["legend"].isHidden()
