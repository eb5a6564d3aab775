"""The studio's SPF play mode with pytest-qt: keys drive the ego, live readouts, violations, scrubbing, saving,
and the main window's Simulation menu entry."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.base.codes import Action  # noqa: E402
from core.tasks.spf.demos import load_demonstrations  # noqa: E402
from core.tasks.spf.session import KEY_MAP, PlaySession  # noqa: E402
from tests.support.spf import open_spf_window  # noqa: E402


@pytest.fixture
def win(qtbot):
    return open_spf_window(qtbot)


def press(qtbot, w, key: str) -> None:
    qtbot.keyClick(w.map, key)


def test_key_map_is_shown_and_shared():
    from app.features.spf.play import KEY_MAP as APP_KEYS

    assert {k: int(v) for k, v in APP_KEYS.items()} == {k: int(v) for k, v in KEY_MAP.items()}


def test_keys_drive_the_ego_and_readouts_follow(win, qtbot):
    assert "Slow" in win.panel.keymap_label.text() and "<b>4</b> Stop" in win.panel.keymap_label.text()
    win.start("easy", "test", 3)
    s = win.session
    assert s.num_steps == 0 and "running" in win.panel.outcome_label.text()
    budget = s.max_steps
    for k in range(1, 6):
        press(qtbot, win, "2")
        assert s.num_steps == k and s.records[-1].action == Action.NORMAL
    assert win.panel.steps_label.text() == f"step 5 of {budget}"
    assert win.shown == 5 and win.panel.slider.maximum() == 5
    press(qtbot, win, "4")
    assert s.records[-1].action == Action.STOP
    assert win.panel.reward_label.text().startswith(f"{s.records[-1].reward:+.4f}")
    # the map shows the recorded state with the ego selected
    sc = win.map.scene_data
    assert sc.selected == s.env.ego and np.array_equal(sc.positions, s.env.sim.buffer.snapshot(6).positions)


def test_oracle_keys_reach_the_goal(win, qtbot):
    win.start("medium", "val", 1)
    s = win.session
    inv = {int(v): k for k, v in KEY_MAP.items()}
    while not s.done:
        press(qtbot, win, inv[int(s.oracle_hint())])
    assert s.outcome == "success" and "success" in win.panel.outcome_label.text()
    assert win.panel.violations.count() == 0
    assert not win.panel.action_buttons[0].isEnabled()
    n = s.num_steps
    press(qtbot, win, "2")                       # over: ignored
    assert s.num_steps == n


def test_violation_is_shown_with_its_clause_then_scrub_back_and_save(win, qtbot, tmp_path):
    win.start("easy", "test", 2)
    s = win.session
    while not s.done:
        press(qtbot, win, "2")                   # never stop: breaks the intersection rule eventually
    assert s.outcome == "violation"
    item = win.panel.violations.item(win.panel.violations.count() - 1)
    assert "Collision and Intersection" in item.text() and "IsAtInter(X=Car_1)" in item.text()
    assert s.total_reward == pytest.approx(sum(r.reward for r in s.records)) and s.records[-1].reward == -10
    # scrub back with the slider
    win.panel.slider.setValue(3)
    assert win.shown == 3 and "reviewing" in win.panel.review_label.text()
    assert np.array_equal(win.map.scene_data.positions, s.env.sim.buffer.snapshot(3).positions)
    qtbot.mouseClick(win.panel.live_btn, QtCore.Qt.MouseButton.LeftButton)
    assert win.shown == s.num_steps
    out = win.save_to(tmp_path / "human.npz")
    trajs, meta = load_demonstrations(out)
    assert meta["policy"] == "human" and meta["total_episodes"] == 1
    assert list(trajs[0].actions) == [r.action for r in s.records]
    assert trajs[0].terminations[-1] and trajs[0].infos["fail"][-1]


def test_new_episode_clears_the_previous_runs_violations(win, qtbot):
    win.start("easy", "test", 2)
    while not win.session.done:
        press(qtbot, win, "2")
    assert win.panel.violations.count() >= 1
    win.start("easy", "test", 3)                 # the fixture answers "discard" to the unsaved-run question
    assert len(win.session.records) == 0
    assert win.panel.violations.count() == 0


def test_acting_while_reviewing_returns_to_live(win, qtbot):
    win.start("hard", "test", 0)
    for _ in range(4):
        press(qtbot, win, "4")                   # Stop never breaks a rule
    win.show_state(1)
    press(qtbot, win, "4")
    assert win.session.num_steps == 5 and win.shown == 5 and not win.session.done


def test_session_budget_and_out_of_steps():
    s = PlaySession("easy", "val")
    s.start(0)
    while not s.done:
        s.key("4")  # always stop: runs out of its 2x oracle budget
    assert s.outcome == "out of steps" and s.num_steps == s.max_steps
    assert s.total_reward == pytest.approx(sum(r.reward for r in s.records) - 3)
    with pytest.raises(RuntimeError):
        s.act(1)


def test_main_window_has_the_spf_entry(qtbot, tmp_path):
    from tests.support.studio import close_window, open_window

    studio = open_window(qtbot, tmp_path / "studio.ini", path=None)
    studio.trigger("Simulation", "Safe Path Following: drive the ego car…")
    w = studio.feature("spf").launcher.window
    qtbot.addWidget(w)
    assert w.isVisible() and w.panel.episode_spin.maximum() == 99
    w.close()
    close_window(studio)


# ---- unsaved runs: Save / Discard / Cancel (never dropped silently) -------------------------------------------------

def asked(win):
    """The questions ``win`` asks from now on (the scripted answers answer them, never a blocking dialog)."""
    calls = win.dialogs.asked
    calls.clear()
    return calls


def test_start_again_asks_about_the_unsaved_run(win, qtbot, tmp_path):
    calls = asked(win)
    win.start("easy", "val", 0)
    for _ in range(3):
        press(qtbot, win, "4")
    s = win.session
    assert win.has_unsaved_run
    win.dialogs.answers["unsaved_run"] = "cancel"               # Cancel: the run stays, nothing restarts
    win.start("easy", "val", 1)
    assert calls == ["unsaved_run"] and win.session is s and s.episode == 0 and s.num_steps == 3
    win.dialogs.answers.update(unsaved_run="save", save_path=str(tmp_path / "run.npz"))   # Save: written, then started
    win.start("easy", "val", 1)
    trajs, meta = load_demonstrations(tmp_path / "run.npz")
    assert list(trajs[0].actions) == [3, 3, 3] and meta["policy"] == "human"
    assert s.episode == 1 and s.num_steps == 0 and not win.has_unsaved_run
    press(qtbot, win, "2")
    win.dialogs.answers["unsaved_run"] = "discard"              # Discard: started without saving
    win.start("easy", "val", 2)
    assert win.session.episode == 2 and win.session.num_steps == 0
    n = len(calls)
    win.start("easy", "val", 3)                         # nothing played: no question
    assert len(calls) == n


def test_save_then_start_does_not_ask_and_cancelled_save_keeps_the_run(win, qtbot, tmp_path):
    calls = asked(win)
    win.start("easy", "val", 0)
    press(qtbot, win, "4")
    assert win.save_to(tmp_path / "saved.npz") is not None and not win.has_unsaved_run
    win.start("easy", "val", 1)
    assert calls == []
    press(qtbot, win, "4")
    win.dialogs.answers.update(unsaved_run="save", save_path=str(tmp_path / "no_such_dir" / "x" / "run.npz"))
    (tmp_path / "no_such_dir").write_text("a file, so the folder cannot be made")
    win.start("easy", "val", 2)                          # the save fails: the run is kept, nothing restarts
    assert win.session.episode == 1 and win.session.num_steps == 1 and win.dialogs.last_warning is not None
    assert "Cannot save" in win.dialogs.last_warning[0]


def test_mode_change_asks_and_cancel_restores_the_choice(win, qtbot):
    calls = asked(win)
    win.start("easy", "val", 0)
    press(qtbot, win, "4")
    win.dialogs.answers["unsaved_run"] = "cancel"
    win.panel.mode_box.setCurrentIndex(2)                # Hard
    assert calls == ["unsaved_run"] and win.panel.mode == "easy" and win.panel.split == "val"
    win.panel.split_box.setCurrentText("test")
    assert win.panel.split == "val" and len(calls) == 2
    win.dialogs.answers["unsaved_run"] = "discard"
    win.panel.mode_box.setCurrentIndex(2)
    assert win.panel.mode == "hard" and win.panel.episode_spin.maximum() == 39   # hard val set
    win.panel.mode_box.setCurrentIndex(0)                # discarded once: no second question
    assert len(calls) == 3


def test_closing_the_window_asks(qtbot, tmp_path):
    from app.features.spf.play import SPFPlayWindow
    from tests.support.driver import ScriptedDialogs

    w = SPFPlayWindow(dialogs=ScriptedDialogs())
    qtbot.addWidget(w)
    w.show()
    w.start("easy", "val", 0)
    w.act(3)
    w.dialogs.answers["unsaved_run"] = "cancel"
    assert not w.close() and w.isVisible()
    w.dialogs.answers.update(unsaved_run="save", save_path=str(tmp_path / "closing.npz"))
    assert w.close() and not w.isVisible()
    assert len(load_demonstrations(tmp_path / "closing.npz")[0][0].actions) == 1


def test_bad_episode_file_is_reported_naming_the_file(win, tmp_path):
    from core.io.archive import read_archive, write_archive
    from core.tasks.spf import episodes as spf_episodes
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.episodes import default_episode_path
    from core.tasks.spf.settings import load_spf_mode

    a, meta = read_archive(default_episode_path(load_spf_mode("easy", "val")), spf_episodes.FORMAT,
                           spf_episodes.VERSION)
    n = a["positions"].shape[1]
    a["plan_cells"][int(a["plan_offsets"][0]) + int(a["path_index"][0, 0])] = (3000, 3000)
    a["positions"][0, 0] = (3000, 3000)
    bad = write_archive(tmp_path / "bad_val.npz", a, meta, spf_episodes.FORMAT, spf_episodes.VERSION)
    assert n > 1
    win.sessions[("easy", "val")] = PlaySession("easy", "val", SPFEnv("easy", "val", record=True, episodes=str(bad)))
    win.start("easy", "val", 0)
    title, text = win.dialogs.last_warning
    assert title == "Cannot start the episode" and str(bad) in text and "outside the 241×241 map" in text
    assert win.session is None


def test_spf_window_reads_step_of_budget(qtbot):
    from tests.support.spf import open_spf_window

    w = open_spf_window(qtbot)
    w.start("easy", "test", 3)
    budget = w.session.max_steps
    assert w.panel.steps_label.text() == f"step 0 of {budget}"     # was "138 / 138 left"
    w.act(2)                                                        # one step (key 2: Normal)
    assert w.panel.steps_label.text() == f"step 1 of {budget}"
