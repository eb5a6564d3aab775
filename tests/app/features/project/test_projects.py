"""Projects in the studio window (pytest-qt): save and reopen, malformed projects and ``studio:`` entries shown as
errors while the studio keeps running, Save As over another project asks first, opening a project over a smaller
city, the unsaved-changes question on close."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.studio import DEFAULT_MODE, ROOT, WAIT, close_window, default_config, open_window, run_sim, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402


def test_save_and_reopen_a_project(studio, qtbot, tmp_path, settings_path):
    from core.sim.events import Breakpoint

    simulate(qtbot, studio, 15)
    studio.select_agent(2)
    studio.set_cursor(7)
    studio.add_breakpoint(Breakpoint("step", step=40))
    assert studio.dirty
    root = tmp_path / "proj"
    assert studio.save_to(root)
    assert not studio.dirty and (root / "project.yaml").exists()
    positions = np.array(studio.history.array("positions"))
    close_window(studio)
    win = open_window(qtbot, settings_path, root)
    try:
        assert np.array_equal(np.asarray(win.history.array("positions")), positions)
        assert win.cursor == 7 and win.selected == 2 and win.breakpoints == [Breakpoint("step", step=40)]
        assert not win.dirty and str(root.resolve()) in [str(Path(f)) for f in
                                                         __import__("app.shell.settings", fromlist=["x"])
                                                         .recent_files(win.settings)]
        assert win.sim_steps == win.num_steps        # re-simulated: the loaded episode can be continued
        t = win.num_steps
        win.set_cursor(t)
        win.simulate_step()
        qtbot.waitUntil(lambda: win.num_steps == t + 1, timeout=WAIT)
        ref = run_sim(default_config(), seed=win.project.seed, steps=t + 1)
        assert np.array_equal(np.asarray(win.history.array("positions")), np.asarray(ref.buffer.array("positions")))
        assert win.dirty
        win.answers["unsaved"] = "cancel"                     # unsaved-changes prompt: cancel keeps everything
        assert not win.open_path(DEFAULT_MODE)
        assert win.project.root == root
    finally:
        close_window(win)


def test_malformed_project_shows_an_error_and_the_studio_keeps_running(studio, qtbot, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "project.yaml").write_text("format: logicity-project\nversion: 1\nmode: mode.yaml\nseed: [1\n")
    before = studio.project
    assert not studio.open_path(bad)
    title, file, problem = studio.last_error
    assert "bad/project.yaml" in file and problem
    box = studio.window.findChild(QtWidgets.QMessageBox, "errorDialog")
    assert box is not None and "project.yaml" in box.informativeText()
    box.close()
    (bad / "project.yaml").write_text("format: logicity-project\nversion: 1\nmode: nowhere.yaml\n")
    assert not studio.open_path(bad)
    assert "project.yaml:3" in studio.last_error[1] and "mode file not found" in studio.last_error[2]
    assert studio.project is before
    simulate(qtbot, studio, 3)                                # still alive and playing
    assert not studio.open_path(tmp_path / "missing")
    assert "not found" in studio.last_error[2]


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


def test_save_as_over_another_project_asks_first(qtbot, tmp_path, settings_path):
    win = open_window(qtbot, settings_path, ROOT / "configs" / "modes" / "sim_easy.yaml")
    other = tmp_path / "other"
    try:
        simulate(qtbot, win, 4)
        assert win.save_to(other)
    finally:
        close_window(win)
    before = (other / "project.yaml").read_text()
    win = open_window(qtbot, settings_path)                 # the default city, unsaved
    try:
        simulate(qtbot, win, 3)
        win.answers["overwrite"] = "cancel"
        assert not win.save_to(other)
        assert (other / "project.yaml").read_text() == before and win.project.root is None
        win.answers["overwrite"] = "replace"
        assert win.save_to(other)
        from core.project.load import load_project, manifest_files

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
        close_window(win)


def test_open_project_after_a_smaller_city(qtbot, tmp_path):
    """A saved 18-agent project with a high agent index selected opens cleanly over an 8-agent city."""
    win = open_window(qtbot, tmp_path / "studio.ini")
    try:
        simulate(qtbot, win, 8)
        win.select_agent(12)
        root = tmp_path / "proj"
        assert win.save_to(root)
        assert win.open_path(ROOT / "configs" / "modes" / "sim_easy.yaml", ask_save=False)
        qtbot.waitUntil(lambda: win.history is not None and len(win.history.agents) == 8, timeout=WAIT)
        win.flush_redraw()
        assert win.open_path(root, ask_save=False)
        assert len(win.history.agents) == 18 and win.selected == 12
        win.flush_redraw()
        assert len(win.map.scene_data.rgb) == 18
        assert win.project.root == root
    finally:
        close_window(win)


def test_unsaved_changes_prompt_on_close(studio, qtbot, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    simulate(qtbot, studio, 2)
    assert studio.dirty and studio.window.windowTitle().startswith("default")
    studio.answers["unsaved"] = "cancel"
    studio.window.close()
    assert studio.window.isVisible() and studio.simulation.thread.isRunning()
    asked = []     # Save on a project never saved asks for its folder (Save project as…)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: asked.append(a[1]) or str(tmp_path / "p")))
    studio.answers["unsaved"] = "save"
    studio.window.close()
    assert asked and (tmp_path / "p" / "project.yaml").exists()
    assert not studio.window.isVisible() and studio.simulation.thread.wait(10_000)
