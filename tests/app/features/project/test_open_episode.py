"""Opening an episode written by ``python main.py simulate --out ep.npz``: File ▸ Open and
``main.py ep.npz`` show it as a read-only replay (inspector, statistics, no simulating past its end, a status message
saying so), it joins the recent files, Save As turns it into a project that can be continued, and a damaged episode
gives the located error dialog while the studio keeps what it had."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from tests.support.paths import ROOT
from tests.support.studio import WAIT

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402

STEPS, SEED = 25, 3


@pytest.fixture(scope="module")
def episode_file(tmp_path_factory):
    """An episode written by the real tool."""
    out = tmp_path_factory.mktemp("episode") / "ep.npz"
    run = subprocess.run([sys.executable, "main.py", "simulate", "--steps", str(STEPS), "--seed", str(SEED), "--quiet",
                          "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return out


def _open_from_menu(qtbot, win, path, monkeypatch):
    """File ▸ Open… with the file dialog answered by ``path``."""
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName",
                        staticmethod(lambda *a, **k: (str(path), "Episodes (*.npz)")))
    win.action("File", "Open project…").trigger()
    qtbot.wait(20)


def _trigger(qtbot, win, *menu: str) -> None:
    """What a click on the menu entry ``menu`` or its shortcut does: the action's triggered(checked=False), then
    the event loop runs."""
    win.trigger(*menu)
    qtbot.wait(20)


def test_file_open_shows_an_episode_as_a_read_only_replay(studio, qtbot, episode_file, monkeypatch):
    from app.shell.settings import recent_files
    from core.sim.episode import load_episode

    _open_from_menu(qtbot, studio, episode_file, monkeypatch)
    qtbot.waitUntil(lambda: studio.session.read_only is not None, timeout=WAIT)
    assert studio.last_error is None, studio.last_error
    ep = load_episode(episode_file)
    assert studio.num_steps == STEPS and studio.project.name == "ep" and studio.project.seed == SEED
    assert np.array_equal(studio.history.array("positions"), ep.array("positions"))
    assert np.array_equal(studio.history.array("fired"), ep.array("fired"))
    assert "Read-only replay of ep.npz" in studio.last_message and "Save project as" in studio.last_message
    assert "read-only replay" in studio.window.windowTitle() and not studio.dirty
    # inspector and statistics work on it
    studio.set_cursor(10)
    studio.select_agent_by_name("Car_3")
    studio.flush_redraw()
    assert "Car_3" in studio.inspector.summary.parts.title and "step 10" in studio.inspector.summary.parts.title
    assert studio.inspector.table.topLevelItemCount() > 0
    assert f"{STEPS} steps" in studio.stats.summary.text()
    # nothing is simulated past its end: Play, Step, Reset, Branch and Force say why and change nothing
    studio.set_cursor(STEPS)
    for menu in (("Simulation", "Play"), ("Simulation", "Step (simulate one)"), ("Timeline", "Step forward"),
                 ("Simulation", "Reset simulation")):
        studio.window.status("")
        _trigger(qtbot, studio, *menu)
        qtbot.wait(100)
        assert not studio.playing and studio.num_steps == STEPS, menu
        assert "read-only replay" in studio.last_message, (menu, studio.last_message)
    studio.set_cursor(5)
    _trigger(qtbot, studio, "Simulation", "Branch here")
    assert studio.num_steps == STEPS and "Cannot branch" in studio.last_message
    studio.force_action(3)
    assert studio.session.interventions == () and "Cannot force" in studio.last_message
    # Play from the past replays the recording and stops at its end
    studio.set_speed(50)
    _trigger(qtbot, studio, "Simulation", "Play")
    assert studio.replaying
    qtbot.waitUntil(lambda: not studio.playing, timeout=WAIT)
    assert studio.cursor == STEPS and studio.num_steps == STEPS
    assert "Cannot play past the end" in studio.last_message
    # listed in File ▸ Open recent
    assert recent_files(studio.settings)[0] == str(episode_file.resolve())
    recent = studio.window.menuBar().findChild(QtWidgets.QMenu, "menu_file_recent")
    recent.aboutToShow.emit()                                        # the menu is filled as it opens
    assert str(episode_file.resolve()) in [a.text() for a in recent.actions()]


def test_save_as_turns_the_replay_into_a_project(studio, qtbot, episode_file, tmp_path, monkeypatch):
    from core.project.load import is_project

    assert studio.open_path(episode_file)
    qtbot.waitUntil(lambda: studio.session.read_only is not None, timeout=WAIT)
    folder = tmp_path / "from-episode"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(folder)))
    said = []
    studio.window.statusBar().messageChanged.connect(said.append)   # every status-line message, as shown
    _trigger(qtbot, studio, "File", "Save project")                       # Ctrl+S on a replay asks for a folder (Save As)
    qtbot.waitUntil(lambda: studio.session.read_only is None and studio.history is not None
                    and not studio.syncing, timeout=WAIT)
    assert studio.last_error is None, studio.last_error
    assert is_project(folder) and studio.project.root is not None and studio.project.root.resolve() == folder.resolve()
    assert studio.num_steps == STEPS and studio.sim_steps == STEPS     # re-simulated: it can be continued
    assert any("Saved the replay of ep.npz as a project" in m for m in said), said
    studio.set_cursor(STEPS)
    _trigger(qtbot, studio, "Simulation", "Step (simulate one)")
    qtbot.waitUntil(lambda: studio.num_steps == STEPS + 1, timeout=WAIT)


@pytest.mark.parametrize("damage", ["truncated", "not-a-zip", "no-config"])
def test_a_damaged_episode_gives_a_located_error_and_keeps_the_studio(studio, qtbot, episode_file, tmp_path,
                                                                      monkeypatch, damage):
    import json
    import zipfile

    bad = tmp_path / "bad.npz"
    data = episode_file.read_bytes()
    if damage == "truncated":
        bad.write_bytes(data[: len(data) // 2])
    elif damage == "not-a-zip":
        bad.write_bytes(b"this is not an episode\n" * 10)
    else:   # a valid archive whose meta.json lacks the embedded configuration
        with zipfile.ZipFile(episode_file) as src, zipfile.ZipFile(bad, "w") as dst:
            for info in src.infolist():
                body = src.read(info.filename)
                if info.filename == "meta.json":
                    meta = json.loads(body)
                    meta.pop("config_texts", None)
                    body = json.dumps(meta).encode()
                dst.writestr(info.filename, body)
    project, history = studio.project, studio.history
    _open_from_menu(qtbot, studio, bad, monkeypatch)
    qtbot.waitUntil(lambda: studio.last_error is not None, timeout=WAIT)
    title, file, problem = studio.last_error
    assert title == "Could not open the project" and "bad.npz" in file and problem
    if damage == "no-config":
        assert "embed" in problem
    assert studio.project is project and studio.history is history and studio.session.read_only is None
    assert studio.window.findChild(QtWidgets.QMessageBox, "errorDialog") is not None


def test_main_py_opens_an_episode(episode_file, tmp_path):
    shot = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LOGICITY_DATA_DIR=str(tmp_path / "data"))
    run = subprocess.run([sys.executable, "main.py", str(episode_file), "--screenshot", str(shot), "--steps", "40",
                          "--select", "Car_3", "--settle-ms", "100"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    assert shot.exists() and shot.stat().st_size > 10_000
