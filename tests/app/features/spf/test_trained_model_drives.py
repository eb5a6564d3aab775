"""A model trained by the real trainer (tiny budget) drives in the studio: live in the SPF play
window (keys 5 and M), as a branch of the studio's recording from the shown step (the selected car follows the
model, the worker re-simulates it), and two models side by side on the same episode. The
observation the model saw is drawn on the map."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.spf import open_spf_window
from tests.support.spf_models import tiny_runs
from tests.support.studio import close_window, open_window, simulate

pytest.importorskip("pytestqt")
pytest.importorskip("torch")

from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

pytestmark = pytest.mark.gui

SIM_EASY = "configs/modes/sim_easy.yaml"   # the easy ontology: what the easy models read


@pytest.fixture(scope="module")
def runs():
    return tiny_runs()


MODEL_LANES = ("spf_model_disagrees", "spf_model_violation")


def _model_markers(win) -> dict[str, list[int]]:
    """The studio timeline's model lanes (present or not) and the steps of their markers."""
    bar = win.timeline.bar
    return {lane: sorted(m.step for m in bar.markers if m.lane == lane)
            for lane in MODEL_LANES if lane in [n for n, _, _ in bar.lanes]}


def _expected_markers(d) -> dict[str, list[int]]:
    """Each of the branch's steps is marked at the state it was decided on."""
    return {MODEL_LANES[0]: [d.start + t - 1 for t in d.episode.disagreement_steps()],
            MODEL_LANES[1]: [d.start + t - 1 for t in d.episode.violation_steps()]}


def _hover(qtbot, bar, step: int, lane: str) -> str:
    """Move the mouse over ``step`` in ``lane`` of the timeline bar; the tooltip it then has."""
    li = [n for n, _, _ in bar.lanes].index(lane)
    pos = QtCore.QPointF(bar.x_of(step), 6 + li * bar.LANE_H + bar.LANE_H / 2)
    ev = QtGui.QMouseEvent(QtCore.QEvent.Type.MouseMove, pos, bar.mapToGlobal(pos), QtCore.Qt.MouseButton.NoButton,
                           QtCore.Qt.MouseButton.NoButton, QtCore.Qt.KeyboardModifier.NoModifier)
    QtWidgets.QApplication.sendEvent(bar, ev)
    qtbot.wait(10)
    return bar.toolTip()


def _panel(win):
    from app.features.spf.models import SPFModelsPanel

    dock = win.docks["spf_models"]
    return dock.widget() if isinstance(dock.widget(), SPFModelsPanel) else dock.findChild(SPFModelsPanel)


def test_the_model_drives_live_in_the_spf_window(qtbot, runs):
    win = open_spf_window(qtbot, (1400, 850))
    win.activateWindow()                             # window shortcuts (keys 1-5, M) need the active window
    qtbot.waitUntil(win.isActiveWindow, timeout=5_000)
    win.start("easy", "val", 2)
    d = win.model_driver
    assert not d.step_action.isEnabled()
    assert d.load(runs[0])
    qtbot.keyClick(win.map, "2")                       # the person takes step 1 (Normal)
    for _ in range(3):
        qtbot.keyClick(win.map, "5")                   # the model takes steps 2-4
    s = win.session
    assert s.num_steps == 4 and d.driven == {2, 3, 4}
    ep = d.episode
    assert [st.step for st in ep.steps] == [1, 2, 3, 4]
    # the model's steps are its argmax; the recorded actions are what it chose, the oracle's is the session's
    for st, rec in zip(ep.steps, s.records):
        assert st.model_action == int(np.argmax(st.scores))
        assert st.oracle_action == rec.oracle_action
    assert [r.action for r in s.records[1:]] == [st.model_action for st in ep.steps[1:]]
    assert s.records[0].action == 1
    # the observation of the shown state is drawn: the ego first, its cell, inside the field-of-view box
    win.show_state(2)
    v = d.overlay.shown
    assert v is not None and v.names[0] == "Car_1" and d.overlay.box.isVisible()
    assert v.cells[0] == tuple(int(x) for x in s.ego_position(2))
    r0, r1, c0, c1 = v.box
    assert all(r0 <= r <= r1 and c0 <= c <= c1 for r, c in v.cells)
    assert d.view.shown_step == 3                                       # step 3 was decided on state 2
    np.testing.assert_allclose(d.view.bar_heights(), ep.steps[2].probabilities, rtol=1e-6)
    # moving the dock's slider shows the state that step was decided on
    d.view.slider.setValue(2)
    assert win.shown == 1
    # M: the model drives on its own until the episode ends, then the run counts in TSR / DSR
    d.rate.setCurrentIndex(d.rate.count() - 1)       # the fastest rate offered
    qtbot.keyClick(win.map, "m")
    assert d.drive_action.isChecked()
    qtbot.waitUntil(lambda: s.done, timeout=60_000)
    qtbot.waitUntil(lambda: not d.timer.isActive(), timeout=5_000)
    assert not d.drive_action.isChecked()
    assert len(d.episode.steps) == s.num_steps and len(d.driven) == s.num_steps - 1
    dis, vio = d.view.marker_steps()
    assert dis == d.episode.disagreement_steps() and vio == d.episode.violation_steps()
    assert d.totals.text() == ""                     # step 1 was the person's: not a model-only episode
    win.start("easy", "val", 2)                      # again, the model alone
    d.set_driving(True)
    qtbot.waitUntil(lambda: win.session.done, timeout=60_000)
    res = win.session.result()
    assert "1 episode(s) driven by the model from start to end: TSR" in d.totals.text()
    assert f"TSR {float(res.success):.2f}" in d.totals.text()
    # a run trained for easy is refused for medium, by name
    win.dialogs.answers["unsaved_run"] = "discard"
    win.start("medium", "val", 0)
    assert not d.model_step()
    assert "trained for SPF mode 'easy', not 'medium'" in win.dialogs.last_warning[1]


def test_padding_slots_of_the_observation_are_not_listed_nor_drawn(qtbot, runs):
    from core.logic.grounding.grounder import PLACEHOLDER

    win = open_spf_window(qtbot, (1400, 850))
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=5_000)
    win.start("easy", "test", 7)                     # Car_1 sees fewer than five entities within a few steps
    d = win.model_driver
    assert d.load(runs[0])
    for _ in range(12):
        qtbot.keyClick(win.map, "5")
    steps = d.episode.steps
    padded = [st for st in steps if PLACEHOLDER in st.entities]
    assert padded, "the episode should have an observation with a padding slot"
    st = padded[0]
    real = [e for e in st.entities if e != PLACEHOLDER]
    d.view.slider.setValue(st.step)                  # the dock shows that step, the map the state it was decided on
    assert d.view.facts.item(0).text() == "entities: " + ", ".join(real)
    assert PLACEHOLDER not in d.view.facts.item(0).text().split(": ", 1)[1].split(", ")
    labels = [t.toPlainText() for t in d.overlay.labels]
    assert labels == [f"{i} {name}" for i, name in enumerate(real)]
    assert len(d.overlay.rings.data) == len(real)


def test_the_model_drives_the_selected_car_from_the_shown_step(qtbot, tmp_path, runs):
    from core.base.codes import ACTION_NAMES
    from core.studio.apply import new_simulation, start_config
    from core.tasks.spf.drive import drive_branch
    from core.tasks.spf.learning.run import load_run

    win = open_window(qtbot, tmp_path / "s.ini", SIM_EASY)
    try:
        simulate(qtbot, win, 30)
        win.set_cursor(12)
        win.session.select_name("Car_1")
        panel = _panel(win)
        qtbot.keyClick(win.window, QtCore.Qt.Key.Key_M,
                       QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.AltModifier)
        qtbot.waitUntil(lambda: win.docks["spf_models"].isVisible(), timeout=20_000)
        assert panel.load(runs[0])
        before = win.session.positions()[:13].copy()
        win.answers["model_branch"] = "branch"
        got = []
        panel.branch.finished.connect(got.append)
        panel.branch_steps.setValue(40)
        qtbot.keyClick(win.window, QtCore.Qt.Key.Key_B,                            # Tools > SPF model drives the car
                       QtCore.Qt.KeyboardModifier.ControlModifier | QtCore.Qt.KeyboardModifier.AltModifier)
        qtbot.waitUntil(lambda: bool(got), timeout=120_000)
        d = got[0]
        s = win.session
        assert d.start == 12 and d.ego == 0 and panel.branch.mismatch is None
        assert s.num_steps >= d.end
        np.testing.assert_array_equal(s.positions()[:13], before)          # the steps before the branch are kept
        acts = [st.model_action for st in d.episode.steps]
        assert list(s.history.array("decided")[12:d.end, 0]) == acts       # the car did what the model chose
        assert (s.history.array("fired")[12:d.end, 0] == -2).all()         # recorded as forced
        assert s.interventions[-1] == {"step": d.end, "agent": 0, "action": None}
        # the same branch computed again from the studio's inputs is the same run
        sim = new_simulation(start_config(s.project.config, dict(s.history.meta)),
                             seed=int(s.history.meta.get("seed", 0)), record=False)
        again = drive_branch(sim, [], 12, 0, load_run(runs[0]), 40)
        assert [st.model_action for st in again.episode.steps] == acts
        # the panel shows the branch and follows the studio's cursor; the observation is drawn on the studio map
        assert panel.view.episode is d.episode
        win.set_cursor(13)
        assert panel.view.shown_step == 2
        assert panel.branch.overlay.shown == d.views[1]
        assert panel.branch.overlay.box.isVisible()
        panel.view.slider.setValue(1)
        assert win.session.cursor == 12
        dis, vio = panel.view.marker_steps()
        assert dis == d.episode.disagreement_steps() and vio == d.episode.violation_steps()
        # the studio's own timeline has the model's lanes, its markers at the states the steps were decided on
        assert _model_markers(win) == _expected_markers(d)
        assert "Model ≠ oracle" in win.timeline.legend.text()
        # a pedestrian cannot be driven: refused with the reason, nothing changes
        n = s.num_steps
        ped = next(i for i, name in enumerate(s.agent_names) if name.startswith("Pedestrian"))
        s.select(ped)
        assert not panel.drive_from_shown_step()
        assert "is not a car" in panel.branch_label.text() and s.num_steps == n
        # Drive in SPF window: the play window opens on the chosen episode with the model driving
        panel.split.setCurrentText("val")
        panel.episode.setValue(1)
        qtbot.mouseClick(panel.spf_button, QtCore.Qt.MouseButton.LeftButton)
        play = win.feature("spf").launcher.window
        assert play is not None and play.isVisible() and play.model_driver.dock.isVisible()
        win.answers["unsaved_run"] = "discard"         # closing the studio closes it without asking
        assert (play.session.mode, play.session.split, play.session.episode) == ("easy", "val", 1)
        qtbot.waitUntil(lambda: play.session.num_steps >= 3, timeout=60_000)
        assert play.model_driver.driven >= {1, 2, 3}
        play.model_driver.set_driving(False)
        # another model replaces it: the first one's markers go; it drives Car_2 (it disagrees at every step)
        assert panel.load(runs[1]) and _model_markers(win) == {}
        win.set_cursor(12)
        win.session.select_name("Car_2")
        panel.branch_steps.setValue(10)
        qtbot.mouseClick(panel.branch_button, QtCore.Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(got) == 2, timeout=120_000)
        d2 = got[1]
        want = _expected_markers(d2)
        assert _model_markers(win) == want and len(want[MODEL_LANES[0]]) >= 3
        k = want[MODEL_LANES[0]][0]
        st = d2.episode.steps[k - d2.start]
        assert (f"step {k}: {d2.episode.policy} driving Car_2: model {ACTION_NAMES[st.model_action]} vs oracle "
                f"{ACTION_NAMES[st.oracle_action]}") in _hover(qtbot, win.timeline.bar, k, MODEL_LANES[0])
        # a branch within the model's steps cuts its markers there; Unload takes them away
        win.set_cursor(d2.start + 2)
        win.answers["branch"] = "branch"
        win.action("Simulation", "Branch here").trigger()
        qtbot.waitUntil(lambda: win.num_steps == d2.start + 2, timeout=20_000)
        assert _model_markers(win) == {lane: [x for x in v if x < d2.start + 2] for lane, v in want.items()}
        assert _model_markers(win)[MODEL_LANES[0]]
        qtbot.mouseClick(panel.unload_button, QtCore.Qt.MouseButton.LeftButton)
        assert _model_markers(win) == {} and "Model ≠ oracle" not in win.timeline.legend.text()
        assert panel.policy is None and not panel.branch_button.isEnabled()
        assert panel.run_label.text() == "no model loaded" and not panel.branch.overlay.box.isVisible()
        # the first model drives Car_2 into a violation: marked with the broken rule; a new recording (Reset)
        # takes the markers away
        assert panel.load(runs[0])
        win.set_cursor(12)
        qtbot.mouseClick(panel.branch_button, QtCore.Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(got) == 3, timeout=120_000)
        d3 = got[2]
        want = _expected_markers(d3)
        assert _model_markers(win) == want and want[MODEL_LANES[1]]
        k = want[MODEL_LANES[1]][0]
        tip = _hover(qtbot, win.timeline.bar, k, MODEL_LANES[1])
        assert f"step {k}: {d3.episode.policy} driving Car_2: " in tip
        assert d3.episode.steps[k - d3.start].violations[0] in tip
        win.answers["reset"] = "reset"
        win.action("Simulation", "Reset simulation").trigger()
        qtbot.waitUntil(lambda: win.num_steps == 0, timeout=20_000)
        assert _model_markers(win) == {}
    finally:
        close_window(win)


def test_two_models_side_by_side_on_the_same_episode(qtbot, runs):
    from app.features.spf.models import SPFModelsPanel
    from app.shell.jobs import JobRunner

    jobs = JobRunner()
    panel = SPFModelsPanel(None, jobs)
    qtbot.addWidget(panel)
    panel.resize(1000, 800)
    panel.show()
    assert panel.load(runs[0]) and panel.load_compare(runs[1])
    assert panel.view_b.isVisible() and "nlm-bc" in panel.view_b.title.text()
    panel.split.setCurrentText("val")
    for k in (0, 3):
        panel.episode.setValue(k)
        qtbot.mouseClick(panel.run_button, QtCore.Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda k=k: ("val", k) in panel.episodes_b, timeout=120_000)
    a, b = panel.view.episode, panel.view_b.episode
    assert (a.episode, b.episode) == (3, 3) and a.policy.startswith("mlp-bc") and b.policy.startswith("nlm-bc")
    # both columns move together; each shows its own model's bars
    t = min(len(a.steps), len(b.steps), 2)
    panel.view.show_step(t)
    assert panel.view_b.shown_step == t
    np.testing.assert_allclose(panel.view_b.bar_heights(), b.steps[t - 1].probabilities, rtol=1e-6)
    np.testing.assert_allclose(panel.view.bar_heights(), a.steps[t - 1].probabilities, rtol=1e-6)
    # TSR / DSR per model over the two loaded episodes, from the evaluation's own results
    lines = panel.totals.text().splitlines()
    assert len(lines) == 2 and lines[0].startswith("A: 2 episode(s)") and lines[1].startswith("B: 2 episode(s)")
    for line, eps in zip(lines, (panel.episodes, panel.episodes_b)):
        tsr = sum(e.success for e in eps.values()) / 2
        assert f"TSR {tsr:.2f}" in line
    panel.clear_compare()
    assert not panel.view_b.isVisible() and len(panel.totals.text().splitlines()) == 1
    assert jobs.shutdown(10_000)
