"""A branch with agents added starts a new recording from the shown step; the replaced recording is not lost: the
next save writes it into the project as a further episode, project.yaml lists both with the hashes of the agents
that made each, and the new recording names the one it branched from."""
from __future__ import annotations

from PySide6 import QtCore

from core.project.load import load_project
from core.sim.provenance import agents_hash
from core.studio.apply import BRANCH_KEY
from core.studio.episode_file import load_episode_file
from tests.support.studio import WAIT, simulate

Qt = QtCore.Qt


def test_branch_with_an_added_agent_keeps_the_old_recording(studio, qtbot, tmp_path):
    win = studio
    ctl = win.features["agent_editor"]
    qtbot.keyClick(win.window, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: win.docks["agent_editor"].isVisible(), timeout=WAIT)
    panel = ctl.panel
    simulate(qtbot, win, 10)
    old_agents = agents_hash(win.session.project.config.agents)
    t_old = win.num_steps
    old_positions = win.history.array("positions")[:t_old + 1].copy()
    win.set_cursor(6)
    qtbot.mouseClick(panel.add_car, Qt.MouseButton.LeftButton)
    win.answers["apply_branch"] = "branch"
    n = len(win.history.agents)
    qtbot.mouseClick(panel.apply_branch, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.history is not None and len(win.history.agents) == n + 1, timeout=WAIT)
    assert win.history.meta[BRANCH_KEY]["episode"] == "main before branch at step 6"
    simulate(qtbot, win, 2)
    steps = win.num_steps
    assert steps >= 2
    folder = tmp_path / "proj"
    assert win.projects.save_to(folder)
    p = load_project(folder)
    kept, main = p.episodes
    assert (kept.name, kept.steps, main.name, main.steps, main.branched_at) == (
        "main before branch at step 6", t_old, "main", steps, 6)
    assert kept.provenance["agents"] == old_agents != main.provenance["agents"]
    assert main.provenance["agents"] == agents_hash(win.session.project.config.agents)
    # the kept recording is a self-contained episode file (other agents than the project's): it opens as a replay
    replay_project, replay = load_episode_file(folder / kept.file)
    assert (replay.array("positions") == old_positions).all() and len(replay.agents) == n
    assert agents_hash(replay_project.config.agents) == old_agents
    # the Episode info window lists both
    qtbot.keyClick(win.window, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    info = win.features["episode_info"].dialog
    qtbot.waitUntil(lambda: info is not None and info.isVisible(), timeout=WAIT)
    texts = [info.saved.item(i).text() for i in range(info.saved.count())]
    assert texts[0].startswith("main before branch at step 6") and texts[1].startswith("● main")
    assert "branched at step 6" in texts[1]


def test_undo_of_the_branch_forgets_the_kept_recording(studio, qtbot, tmp_path):
    """Ctrl+Shift+Return with an added agent, then Ctrl+Z: the old recording is shown again (and continued), so the
    next save writes it as the project's only episode; Redo keeps it for the save again."""
    import numpy as np

    win = studio
    ctl = win.features["agent_editor"]
    simulate(qtbot, win, 10)
    old, t_old = win.history, win.num_steps
    win.set_cursor(6)
    qtbot.mouseClick(ctl.panel.add_car, Qt.MouseButton.LeftButton)
    win.answers["apply_branch"] = "branch"
    qtbot.keyClick(win.window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: win.history is not old and not win.syncing, timeout=WAIT)
    assert [name for name, _ in win.session.kept] == ["main before branch at step 6"]
    assert win.undo_stack.undoText() == "Apply edits: new recording from step 6"
    qtbot.keyClick(win.window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)           # Edit ▸ Undo
    assert win.history is old and win.session.kept == [] and win.session.cursor == 6
    qtbot.waitUntil(lambda: not win.syncing and win.playback.sim_steps == t_old, timeout=WAIT)
    folder = tmp_path / "undone"
    assert win.projects.save_to(folder)
    (main,) = load_project(folder).episodes
    assert main.steps == t_old and main.branched_at is None
    win.action("Edit", "Redo").trigger()                                            # Edit ▸ Redo
    assert len(win.history.agents) == len(old.agents) + 1 and BRANCH_KEY in win.history.meta
    assert [name for name, _ in win.session.kept] == ["main before branch at step 6"]
    assert np.array_equal(win.session.kept[0][1].array("positions"), old.array("positions"))
