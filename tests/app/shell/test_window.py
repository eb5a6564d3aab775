"""The studio window as a whole (pytest-qt, offscreen): launch, keyboard shortcuts and the Help list, dock layout
memory and reset, clean shutdown, the event-loop stall check, the command line (screenshot, --size, --colour-by,
--select), remembered settings, unattended runs, quitting with the Safe Path Following window open, timeline
marker lanes.

Timing-robust: every wait is ``qtbot.waitUntil`` with generous timeouts; the only timing assertion is the
stall measurement itself.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.support.studio import ROOT, WAIT, close_window, open_window, shown_positions, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402


def test_launch_opens_the_default_city_ready_to_play(studio):
    cfg = studio.project.config
    assert studio.history.num_states == 1 and len(studio.history.agents) == len(cfg.agents) == 18
    assert studio.map.city is cfg.city
    assert np.array_equal(shown_positions(studio), studio.history.snapshot(0).positions)
    assert set(studio.docks) >= {"timeline", "inspector", "statistics", "legend", "breakpoints"}
    titles = [a.text().replace("&", "") for a in studio.window.menuBar().actions()]
    assert titles[:6] == ["File", "Edit", "View", "Simulation", "Timeline", "Breakpoints"] and titles[-1] == "Help"
    # (features of app/shell/features.py add their menus, e.g. City, Tools, between Breakpoints and Help)
    assert "18 agents" in studio.status_labels.agents_label.text() and "Step 0 / 0" in studio.status_labels.step_label.text()
    assert "Speed" in studio.status_labels.speed_label.text()
    assert [lab for lab, _, _ in studio.legend.agent_rows] == ["Pedestrian", "Car"]


def test_keyboard_shortcuts(studio, qtbot):
    studio.map.setFocus()
    studio.set_speed(0)
    qtbot.keyClick(studio.window, QtCore.Qt.Key.Key_Right)            # at the newest state: simulate one step
    qtbot.waitUntil(lambda: studio.num_steps == 1, timeout=WAIT)
    qtbot.keyClick(studio.window, QtCore.Qt.Key.Key_Space)            # play
    qtbot.waitUntil(lambda: studio.num_steps >= 8, timeout=WAIT)
    qtbot.keyClick(studio.window, QtCore.Qt.Key.Key_Space)            # pause
    qtbot.waitUntil(lambda: not studio.simulation.worker.playing, timeout=WAIT)
    qtbot.wait(50)
    t = studio.num_steps
    qtbot.keyClick(studio.window, QtCore.Qt.Key.Key_Home)
    assert studio.cursor == 0
    qtbot.keyClick(studio.window, QtCore.Qt.Key.Key_Right)
    qtbot.keyClick(studio.window, QtCore.Qt.Key.Key_Right)
    assert studio.cursor == 2 and studio.num_steps == t          # navigation only, nothing simulated
    qtbot.keyClick(studio.window, QtCore.Qt.Key.Key_Left)
    assert studio.cursor == 1
    qtbot.keyClick(studio.window, QtCore.Qt.Key.Key_End)
    assert studio.cursor == t
    # every shortcut is listed in Help
    studio.trigger("Help", "Keyboard shortcuts")
    dlg = studio.window.findChild(QtWidgets.QDialog, "shortcutsDialog")
    text = dlg.findChild(QtWidgets.QTextBrowser).toPlainText()
    for keys, name, _ in studio.shortcut_rows():
        assert name in text and keys.split(",")[0] in text
    assert {"Space", "Left", "Right", "Home", "End"} <= {k for keys, _, _ in studio.shortcut_rows()
                                                        for k in keys.split(", ")}
    assert dlg.isVisible()
    dlg.close()


def test_help_lists_every_shortcut_of_the_window(studio):
    from PySide6 import QtGui

    studio.trigger("Help", "Keyboard shortcuts")
    dlg = studio.window.findChild(QtWidgets.QDialog, "shortcutsDialog")
    listed = dlg.findChild(QtWidgets.QTextBrowser).toPlainText()
    dlg.close()
    rows = studio.shortcut_rows()
    keys_listed = {k for keys, _, _ in rows for k in keys.split(", ")}
    actions = studio.window.findChildren(QtGui.QAction)
    with_keys = [a for a in actions if a.shortcuts()]
    assert studio.action("Simulation", "Safe Path Following: drive the ego car…") in with_keys
    for a in with_keys:
        for seq in a.shortcuts():
            k = seq.toString(QtGui.QKeySequence.SequenceFormat.NativeText)
            assert k in keys_listed, (a.text(), k)
    assert "Ctrl+Shift+F" in listed and "Safe Path Following" in listed
    assert len({id(a) for a in studio.window.all_actions()}) == len(studio.window.all_actions())


def test_dock_layout_is_remembered(qtbot, settings_path):
    win = open_window(qtbot, settings_path, path=None)
    win.docks["statistics"].hide()
    win.set_colour_scheme("Priority")
    close_window(win)
    win2 = open_window(qtbot, settings_path, path=None)
    try:
        assert not win2.docks["statistics"].isVisible() and win2.docks["inspector"].isVisible()
        assert win2.scheme == "Priority"
    finally:
        close_window(win2)


def test_reset_layout_restores_the_default_dock_visibility(studio):
    win = studio
    assert not win.docks["render"].isVisible() and win.docks["timeline"].isVisible()
    win.docks["render"].show()
    win.docks["legend"].hide()
    win.reset_layout()
    assert not win.docks["render"].isVisible()
    assert all(win.docks[n].isVisible() for n in ("timeline", "inspector", "statistics"))
    assert not win.docks["legend"].isHidden()


def test_closing_while_playing_stops_the_worker_cleanly(qtbot, settings_path):
    win = open_window(qtbot, settings_path)
    win.set_speed(0)
    win.play()
    qtbot.waitUntil(lambda: win.num_steps >= 3, timeout=WAIT)
    thread = win.simulation.thread
    close_window(win)
    assert not thread.isRunning()


def test_gui_event_loop_keeps_running_while_playing(tmp_path):
    """A 5 ms GUI timer keeps firing while the worker simulates as fast as it can and the GUI draws every frame it
    can, with an agent selected (inspector and statistics refreshing too): the window never freezes.

    The responsiveness *target* (worst gap < 50 ms) is a speed figure and lives in bench/gui.py ("worst GUI gap
    ms"), not here: on a shared 2-core machine a timed assertion fails on load, not on code. This test catches a
    GUI that blocks on the worker (a gap of a quarter second or more, or a timer that hardly fires).

    Measured in a fresh interpreter (tests/support/studio_stall_probe.py): threads that other tests leave running in
    this process (torch's OpenMP pool, icon workers) would otherwise compete for the two CPUs."""
    import json
    import os

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LOGICITY_DATA_DIR=str(tmp_path / "data"))
    probe = ROOT / "tests" / "support" / "studio_stall_probe.py"
    res = subprocess.run([sys.executable, str(probe), "3"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    r = json.loads(res.stdout.strip().splitlines()[-1])
    assert r["played"] >= 20, f"the simulation did not play during the measurement: {r}"
    assert r["ticks"] > 100, f"the GUI timer hardly fired while playing: {r}"
    assert r["worst_ms"] < 250.0, f"the GUI froze while playing: {r}"


def test_screenshot_command_line(tmp_path):
    out = tmp_path / "shot.png"
    env = dict(__import__("os").environ, QT_QPA_PLATFORM="offscreen", LOGICITY_DATA_DIR=str(tmp_path / "data"))
    res = subprocess.run([sys.executable, str(ROOT / "main.py"), "--screenshot", str(out), "--steps", "3",
                          "--select", "Car_3", "--size", "1000x700"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    from PIL import Image

    with Image.open(out) as im:
        assert im.size == (1000, 700), im.size


def test_screenshot_size_is_validated(capsys):
    from app.shell.studio import _parser

    with pytest.raises(SystemExit):
        _parser().parse_args(["--screenshot", "o.png", "--size", "abc"])
    assert "WIDTHxHEIGHT" in capsys.readouterr().err
    assert _parser().parse_args(["--size", "800x600"]).size == (800, 600)


def run_main(args, tmp_path, timeout=240):
    import os
    import subprocess
    import sys

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LOGICITY_DATA_DIR=str(tmp_path / "data"))
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_unknown_colour_by_on_the_command_line_is_an_error(tmp_path):
    out = tmp_path / "shot.png"
    res = run_main(["--colour-by", "action", "--screenshot", str(out), "--steps", "5"], tmp_path, timeout=120)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "--colour-by" in res.stderr and "'action'" in res.stderr
    assert "Action (next)" in res.stderr and "Type" in res.stderr      # the choices
    assert not out.exists()


def test_unknown_select_on_the_command_line_is_an_error(tmp_path):
    res = run_main(["--select", "car_3", "--screenshot", str(tmp_path / "s.png")], tmp_path)
    assert res.returncode == 2, res.stderr[-2000:]
    assert "'car_3'" in res.stderr and "did you mean 'Car_3'" in res.stderr and "Pedestrian" in res.stderr


def test_bad_colour_by_from_settings_falls_back_to_the_default(qtbot, settings_path):
    from app.shell.settings import make_settings

    s = make_settings(settings_path)
    s.setValue("view/colour_by", "Concept: IsNonexistent")
    s.sync()
    win = open_window(qtbot, settings_path)
    try:
        assert win.scheme == "Type"
        assert win.feature("view").colour_combo.currentText() == "Type"
        win.flush_redraw()                                   # was a KeyError on every redraw
        assert win.map.scene_data is not None
        win.scheme = "Nonsense"                              # however it gets there, a redraw never fails
        win.flush_redraw()
        assert win.scheme == "Type" and "Nonsense" in win.last_message
    finally:
        close_window(win)


def test_unattended_window_never_shows_a_modal_question(qtbot, settings_path):
    win = open_window(qtbot, settings_path, unattended=True)
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
        simulate(qtbot, win, 2)
        assert win.dirty
        win.window.close()                                          # what the screenshot give-up timer's quit does
        assert not win.window.isVisible()
        assert win.simulation.thread.wait(10_000)
        assert shown == []
    finally:
        timer.stop()


def test_quit_closes_the_spf_window_and_asks_about_its_run(qtbot, settings_path):
    win = open_window(qtbot, settings_path, path=None)
    win.action("Simulation", "Safe Path Following: drive the ego car…").trigger()
    spf = win.feature("spf").launcher.window
    qtbot.addWidget(spf)
    spf.start("easy", "val", 0)
    spf.act(1)
    asked = []
    answer = ["cancel"]
    spf.ask = lambda key, *a, **k: (asked.append(key), answer[0])[1]
    win.action("File", "Quit").trigger()                  # Cancel in the SPF question: nothing closes
    assert asked == ["unsaved_run"] and spf.isVisible() and win.window.isVisible()
    answer[0] = "discard"
    win.action("File", "Quit").trigger()
    assert asked == ["unsaved_run", "unsaved_run"]
    assert not spf.isVisible() and not win.window.isVisible()
    assert win.simulation.thread.wait(10_000)
    assert not [w for w in QtWidgets.QApplication.topLevelWidgets() if w.isVisible() and w.isWindow()
                and w in (win, spf)]


def test_a_registered_marker_kind_gets_its_own_lane(studio, qtbot):
    from core.sim.events import _KINDS, Event, EventKind, register_event_kind

    def every_tenth(episode, start, stop, ctx):
        return [Event(k, "tenth", -1, f"step {k}") for k in range(start, stop) if k % 10 == 0]

    register_event_kind(EventKind("tenth", "Every tenth step", (0, 0, 0), every_tenth))
    try:
        studio.select_agent(None)          # rebuilds markers and lanes
        simulate(qtbot, studio, 21)
        assert ("tenth", "Every tenth step", (0, 0, 0)) in studio.timeline.bar.lanes
        tenth = sorted(m.step for m in studio.timeline.bar.markers if m.lane == "tenth")
        assert tenth == list(range(0, studio.num_steps, 10))
        studio.set_cursor(0)
        studio.next_marker()
        assert studio.cursor == min(m.step for m in studio.markers.events if m.step > 0)
    finally:
        _KINDS.pop("tenth", None)
