"""The studio's SPF play mode with pytest-qt: keys drive the ego, live readouts, violations, scrubbing, saving,
and the main window's Simulation menu entry."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.codes import Action  # noqa: E402
from core.tasks.spf_demos import load_demonstrations  # noqa: E402
from core.tasks.spf_session import KEY_MAP, PlaySession  # noqa: E402


@pytest.fixture
def win(qtbot):
    from app.spf_play import SPFPlayWindow

    w = SPFPlayWindow()
    qtbot.addWidget(w)
    w.resize(1200, 780)
    w.show()
    qtbot.waitExposed(w)
    return w


def press(qtbot, w, key: str) -> None:
    qtbot.keyClick(w.map, key)


def test_key_map_is_shown_and_shared():
    from app.spf_play import KEY_MAP as APP_KEYS

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
    assert win.panel.steps_label.text() == f"5 / {budget - 5} left"
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
    from app.main_window import MainWindow
    from app.settings import make_settings

    mw = MainWindow(make_settings(tmp_path / "studio.ini"))
    qtbot.addWidget(mw)
    mw.answers["unsaved"] = "discard"
    sim_menu = next(a.menu() for a in mw.menuBar().actions() if a.text().replace("&", "") == "Simulation")
    assert mw.spf_play_action in sim_menu.actions()
    mw.spf_play_action.trigger()
    w = mw.spf_play_window
    qtbot.addWidget(w)
    assert w.isVisible() and w.panel.episode_spin.maximum() == 99
    w.close()
    mw.close()
