"""The agent editor in the studio (pytest-qt, real widgets, actions and mouse events): edit an agent, undo it from
the Edit menu, place a car's start and goal by clicking the map, Apply from step 0 and simulate, refuse Apply on an
invalid combination, and branch from a shown step with an added agent."""
from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

from core.base.codes import Kind
from core.studio import agent_sets as A
from core.studio.apply import BRANCH_KEY, apply_status
from tests.support.studio import WAIT, simulate

Qt = QtCore.Qt


def editor(win, qtbot):
    ctl = win.features["agent_editor"]
    qtbot.keyClick(win.window, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: win.docks["agent_editor"].isVisible(), timeout=WAIT)
    return ctl, ctl.panel


def tick(qtbot, panel, row: int, col: int) -> None:
    """Click the check box of a table cell with the mouse (where the style draws it)."""
    panel.table.scrollTo(panel.model.index(row, col))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=panel.check_rect(row, col).center())


def first_car(win) -> int:
    return next(i for i, a in enumerate(win.session.project.config.agents) if a.kind is Kind.CAR)


def test_edit_undo_place_on_map_apply_and_simulate(studio, qtbot):
    win = studio
    ctl, panel = editor(win, qtbot)
    n = panel.model.rowCount()
    assert n == len(win.session.project.config.agents) > 0
    qtbot.mouseClick(panel.add_ped, Qt.MouseButton.LeftButton)
    assert panel.model.rowCount() == n + 1 and panel.selected_rows() == [n]
    win.action("Edit", "Undo").trigger()                                  # Edit ▸ Undo
    assert panel.model.rowCount() == n and len(win.session.project.config.agents) == n
    names = [a.name for a in win.session.project.config.agents]
    panel.select_rows([1, 2])
    panel.table.setFocus()
    qtbot.keyClick(panel.table, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)      # move a block up
    assert [a.name for a in win.session.project.config.agents][:3] == [names[1], names[2], names[0]]
    assert panel.selected_rows() == [0, 1]
    qtbot.keyClick(panel.table, Qt.Key.Key_Delete)                                   # Del deletes the selection
    assert [a.name for a in win.session.project.config.agents] == [names[0]] + names[3:]
    win.action("Edit", "Undo").trigger()
    win.action("Edit", "Undo").trigger()
    assert [a.name for a in win.session.project.config.agents] == names

    row = first_car(win)
    panel.select_rows([row])
    concept = next(c for c in ("police", "bus", "reckless")
                   if c not in win.session.project.config.agents.agents[row].concepts)
    tick(qtbot, panel, row, 4 + panel.concepts.index(concept))             # click a concept check box
    qtbot.waitUntil(lambda: concept in win.session.project.config.agents.agents[row].concepts, timeout=WAIT)
    pcol = 4 + panel.concepts.index("old")
    assert not panel.model.flags(panel.model.index(row, pcol)) & Qt.ItemFlag.ItemIsUserCheckable   # a car: no "old"

    # start and goal by clicking the map
    qtbot.mouseClick(panel.pick_start, Qt.MouseButton.LeftButton)
    vp = win.map.viewport()
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, pos=win.map.tools.viewport_pos_of_cell(10, 31))
    qtbot.waitUntil(lambda: win.session.project.config.agents.agents[row].start == (10, 31), timeout=WAIT)
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, pos=win.map.tools.viewport_pos_of_cell(230, 209))
    qtbot.waitUntil(lambda: win.session.project.config.agents.agents[row].goal == (230, 209), timeout=WAIT)
    assert not win.map.tools.active                                       # the tool is put down after the goal
    name = win.session.project.config.agents.agents[row].name
    assert sorted(ctl.marker_cells()) == [(name, "goal", (230, 209)), (name, "start", (10, 31))]
    assert panel.model.index(row, panel.model.columnCount() - 2).data() == "(10, 31)"
    assert apply_status(win.session).pending and "Apply" in panel.provenance.text()

    # Apply from step 0 (Ctrl+Return), then simulate
    win.answers["reset"] = "reset"
    ctl.apply_action.trigger()
    qtbot.waitUntil(lambda: win.history is not None and not apply_status(win.session).pending, timeout=WAIT)
    assert tuple(np.asarray(win.history.array("positions")[0][row])) == (10, 31)
    assert concept in win.history.agents.concept_names(row)
    assert "matches the edits" in panel.provenance.text()
    simulate(qtbot, win, 5)
    assert win.num_steps >= 5


def test_apply_then_undo_shows_the_previous_recording_and_redo_the_applied_one(studio, qtbot):
    """Ctrl+Return applies the edits from step 0; Ctrl+Z (Edit ▸ Undo) shows the recording from before, its step and
    its simulation (it continues as the unedited run would); Edit ▸ Redo shows the applied recording again, with
    the steps simulated after the Apply, without simulating it anew."""
    from core.sim.provenance import provenance
    from tests.support.studio import default_config, run_sim

    win = studio
    ctl, panel = editor(win, qtbot)
    simulate(qtbot, win, 10)
    win.set_cursor(6)
    old, steps = win.history, win.num_steps
    old_sim = win.simulation.worker.sim
    row = first_car(win)
    panel.select_rows([row])
    ctl.run(A.place(win.session, ctl.tab, row, start=(10, 31), goal=(230, 209)))
    edited = provenance(win.session.project.config)
    win.answers["reset"] = "reset"
    qtbot.keyClick(win.window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)      # Apply edits from step 0
    qtbot.waitUntil(lambda: win.history is not old and not apply_status(win.session).pending, timeout=WAIT)
    new, new_sim = win.history, win.simulation.worker.sim
    assert win.undo_stack.undoText() == "Apply edits from step 0" and new_sim is not old_sim
    simulate(qtbot, win, 4)
    applied = win.num_steps
    qtbot.keyClick(win.window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)           # Edit ▸ Undo
    assert win.history is old and win.num_steps == steps and win.session.cursor == 6
    assert provenance(win.session.project.config) == edited                # the edits stay, not applied
    assert "agents changed" in panel.provenance.text()
    qtbot.waitUntil(lambda: not win.syncing and win.playback.sim_steps == steps, timeout=WAIT)
    assert win.simulation.worker.sim is old_sim and "shown again" in win.last_message   # kept, not re-simulated
    simulate(qtbot, win, steps + 3)                                        # the old simulation goes on
    ref = run_sim(default_config(), seed=win.session.project.seed, steps=win.num_steps).buffer
    assert np.array_equal(win.history.array("positions"), ref.array("positions"))
    gen = win.simulation.gen
    qtbot.keySequence(win.window, win.action("Edit", "Redo").shortcut())         # Edit ▸ Redo
    assert win.history is new and win.num_steps == applied                 # at once: nothing re-simulated
    assert tuple(np.asarray(win.history.array("positions")[0][row])) == (10, 31)
    qtbot.waitUntil(lambda: not win.syncing and win.playback.sim_steps == applied, timeout=WAIT)
    assert win.simulation.worker.sim is new_sim and win.simulation.gen == gen + 1
    simulate(qtbot, win, applied + 1)
    assert "matches the edits" in panel.provenance.text()


def test_undo_of_a_branch_in_place_brings_the_discarded_steps_back(studio, qtbot):
    """Ctrl+Shift+Return branches at the shown step (only a concept changed: the same recording, cut there); Ctrl+Z
    shows every recorded step again and the run goes on as before; Redo cuts it again without simulating."""
    from tests.support.studio import default_config, run_sim

    win = studio
    ctl, panel = editor(win, qtbot)
    simulate(qtbot, win, 12)
    win.set_cursor(7)
    t, full = win.num_steps, np.asarray(win.history.array("positions")).copy()
    car = first_car(win)
    concept = next(c for c in ("police", "bus", "reckless")
                   if c not in win.session.project.config.agents.agents[car].concepts)
    ctl.run(A.edit(win.session, ctl.tab, [car], add_concepts=[concept]))
    win.answers["apply_branch"] = "branch"
    qtbot.keyClick(win.window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert win.num_steps == 7 and win.undo_stack.undoText() == "Apply edits: branch at step 7"
    branched = win.history
    qtbot.waitUntil(lambda: not win.syncing and win.playback.sim_steps == 7, timeout=WAIT)
    qtbot.keyClick(win.window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)           # Edit ▸ Undo
    assert win.num_steps == t and win.session.cursor == 7
    assert np.array_equal(win.history.array("positions"), full)
    assert concept not in win.history.agents_at(t).concept_names(car)
    qtbot.waitUntil(lambda: not win.syncing and win.playback.sim_steps == t, timeout=WAIT)
    simulate(qtbot, win, t + 2)
    ref = run_sim(default_config(), seed=win.session.project.seed, steps=win.num_steps).buffer
    assert np.array_equal(win.history.array("positions"), ref.array("positions"))
    win.action("Edit", "Redo").trigger()                                            # Edit ▸ Redo
    assert win.history is branched and win.num_steps == 7
    assert concept in win.history.agents_at(7).concept_names(car)


def test_apply_is_refused_on_errors_and_says_why(studio, qtbot):
    win = studio
    ctl, panel = editor(win, qtbot)
    ped = next(i for i, a in enumerate(win.session.project.config.agents) if a.kind is Kind.PEDESTRIAN)
    ctl.run(A.edit(win.session, ctl.tab, [ped], add_concepts=["ambulance"]))   # a pedestrian with "ambulance"
    gen = win.simulation.gen
    qtbot.mouseClick(panel.apply_restart, Qt.MouseButton.LeftButton)
    assert win.simulation.gen == gen                                      # nothing was started
    assert panel.refusal.isVisible() and "ambulance" in panel.refusal.text()
    qtbot.waitUntil(lambda: win.docks["problems"].isVisible(), timeout=WAIT)
    assert "ambulance" in win.window.statusBar().currentMessage() or "ambulance" in win.last_message
    assert panel.model.index(ped, 1).data(Qt.ItemDataRole.ToolTipRole).startswith("error:")
    # the Problems entry leads to the agent's row
    panel.select_rows([])
    problems = win.features["problems"].refresh_now()
    entry = next(p for p in problems if p.source == "agents" and "ambulance" in p.message)
    win.window.panels.widget("problems").activated.emit(entry)
    assert panel.selected_rows() == [ped]


def test_branch_from_the_shown_step_with_an_added_agent(studio, qtbot):
    win = studio
    ctl, panel = editor(win, qtbot)
    simulate(qtbot, win, 12)
    win.set_cursor(8)
    old = np.asarray(win.history.array("positions")[8]).copy()
    names = list(win.history.agents.names)
    qtbot.mouseClick(panel.add_car, Qt.MouseButton.LeftButton)
    win.answers["apply_branch"] = "branch"
    qtbot.mouseClick(panel.apply_branch, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.history is not None and len(win.history.agents) == len(names) + 1, timeout=WAIT)
    meta = win.history.meta
    assert meta[BRANCH_KEY]["step"] == 8 and win.num_steps == 0
    assert np.array_equal(np.asarray(win.history.array("positions")[0])[:len(names)], old)
    assert "branched at step 8" in panel.provenance.text()
    simulate(qtbot, win, 3)


def test_multi_select_edit_changes_every_selected_row_in_one_step(studio, qtbot):
    win = studio
    ctl, panel = editor(win, qtbot)
    agents = win.session.project.config.agents.agents
    cars = [i for i, a in enumerate(agents) if a.kind is Kind.CAR][:3]
    ped = next(i for i, a in enumerate(agents) if a.kind is Kind.PEDESTRIAN)
    rows = sorted(cars + [ped])
    panel.select_rows(rows)
    count = win.undo_stack.count()
    tick(qtbot, panel, cars[0], 4 + panel.concepts.index("police"))
    qtbot.waitUntil(lambda: "police" in win.session.project.config.agents.agents[cars[0]].concepts, timeout=WAIT)
    now = win.session.project.config.agents.agents
    assert all("police" in now[i].concepts for i in cars) and "police" not in now[ped].concepts
    assert win.undo_stack.count() == count + 1                               # one undoable step
    panel.priority.setValue(9)
    panel.priority.editingFinished.emit()
    now = win.session.project.config.agents.agents
    assert [now[i].priority for i in rows] == [9 if i in cars else 0 for i in rows]
    win.action("Edit", "Undo").trigger()
    win.action("Edit", "Undo").trigger()
    assert win.session.project.config.agents.agents == agents


def test_branch_keeps_the_recording_when_only_concepts_change(studio, qtbot, tmp_path):
    win = studio
    ctl, panel = editor(win, qtbot)
    simulate(qtbot, win, 12)
    win.set_cursor(7)
    before = np.asarray(win.history.array("positions")[:8]).copy()
    car = first_car(win)
    concept = next(c for c in ("police", "bus", "reckless")
                   if c not in win.session.project.config.agents.agents[car].concepts)
    panel.select_rows([car])
    tick(qtbot, panel, car, 4 + panel.concepts.index(concept))
    qtbot.waitUntil(lambda: concept in win.session.project.config.agents.agents[car].concepts, timeout=WAIT)
    win.answers["apply_branch"] = "branch"
    ctl.branch_action.trigger()                                             # Ctrl+Shift+Return
    assert win.num_steps == 7 and np.array_equal(win.history.array("positions"), before)
    qtbot.waitUntil(lambda: not win.syncing and win.playback.sim_steps == 7, timeout=WAIT)
    simulate(qtbot, win, 10)
    assert concept in win.history.agents_at(8).concept_names(car)
    assert concept not in win.history.agents_at(6).concept_names(car)
    assert "branched at step 7" in panel.provenance.text() and "matches the edits" in panel.provenance.text()
    steps = win.num_steps
    assert win.save_to(tmp_path / "p") and win.open_path(tmp_path / "p", ask_save=False)
    qtbot.waitUntil(lambda: win.history is not None and not win.syncing, timeout=WAIT)
    assert win.playback.sim_steps == win.num_steps == steps                 # re-simulated exactly: continuable


def test_typing_a_name_renames_and_can_change_the_type(studio, qtbot):
    win = studio
    ctl, panel = editor(win, qtbot)
    row = first_car(win)
    panel.select_rows([row])
    index = panel.model.index(row, 1)
    panel.table.setFocus()
    panel.table.setCurrentIndex(index)
    qtbot.keyClick(panel.table, Qt.Key.Key_F2)                              # edit the Name cell
    qtbot.waitUntil(lambda: isinstance(QtWidgets.QApplication.focusWidget(), QtWidgets.QLineEdit), timeout=WAIT)
    line = QtWidgets.QApplication.focusWidget()
    line.selectAll()
    qtbot.keyClicks(line, "Pedestrian_42")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.session.project.config.agents.agents[row].name == "Pedestrian_42", timeout=WAIT)
    a = win.session.project.config.agents.agents[row]
    assert a.priority == 0 and all(c in ("old", "young") for c in a.concepts)   # a pedestrian's defaults
    panel.table.setCurrentIndex(index)
    qtbot.keyClick(panel.table, Qt.Key.Key_F2)
    qtbot.waitUntil(lambda: isinstance(QtWidgets.QApplication.focusWidget(), QtWidgets.QLineEdit), timeout=WAIT)
    line = QtWidgets.QApplication.focusWidget()
    line.selectAll()
    qtbot.keyClicks(line, "Bus 7")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Car_<id>" in win.last_message, timeout=WAIT)   # refused, with the reason
    assert win.session.project.config.agents.agents[row].name == "Pedestrian_42"


def test_duplicate_type_box_goal_on_map_random_and_the_file_buttons(studio, qtbot, tmp_path, monkeypatch):
    """Ctrl+D duplicates the selected car (concepts and priority kept, a new id); the type box makes the copy a
    pedestrian; *Goal on map* previews the hovered cell (a building is refused, with the reason) and sets only the
    goal; Esc puts the tool down; *Random* clears start and goal; *Export…* and *Import…* write and read the set."""
    from core.agents.io import load_agent_set

    win = studio
    ctl, panel = editor(win, qtbot)

    def agents():
        return win.session.project.config.agents.agents

    row, n = first_car(win), len(agents())
    panel.select_rows([row])
    panel.table.setFocus()
    qtbot.keyClick(panel.table, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)    # Ctrl+D
    car, dup = agents()[row], agents()[row + 1]
    assert len(agents()) == n + 1 and dup.kind is Kind.CAR and dup.name != car.name
    assert (dup.concepts, dup.priority) == (car.concepts, car.priority)
    panel.select_rows([row + 1])
    panel.kind_box.setFocus()
    qtbot.keyClick(panel.kind_box, Qt.Key.Key_Down)                                   # the type box: Pedestrian
    assert agents()[row + 1].kind is Kind.PEDESTRIAN and agents()[row + 1].priority == 0

    panel.select_rows([row])
    qtbot.mouseClick(panel.pick_goal, Qt.MouseButton.LeftButton)                      # Goal on map
    vp = win.map.viewport()
    assert win.session.project.config.city.building[20, 20] != 0
    qtbot.mouseMove(vp, win.map.tools.viewport_pos_of_cell(20, 20))                   # a building: refused
    qtbot.waitUntil(lambda: win.map.tools.preview_rects == [(20, 20, 20, 20)], timeout=WAIT)
    assert win.last_message.startswith(f"{car.name}: ")
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, pos=win.map.tools.viewport_pos_of_cell(230, 209))
    qtbot.waitUntil(lambda: agents()[row].goal == (230, 209), timeout=WAIT)
    assert agents()[row].start is None and not win.map.tools.active
    qtbot.mouseClick(panel.pick_start, Qt.MouseButton.LeftButton)
    assert win.map.tools.active
    qtbot.keyClick(win.map, Qt.Key.Key_Escape)                                        # Esc puts the tool down
    assert not win.map.tools.active and agents()[row].start is None
    qtbot.mouseClick(panel.random, Qt.MouseButton.LeftButton)                         # Random: both drawn again
    assert agents()[row].goal is None

    out = tmp_path / "set.yaml"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    qtbot.mouseClick(panel.export, Qt.MouseButton.LeftButton)                         # Export…
    exported = win.session.project.config.agents
    assert load_agent_set(out) == exported
    for _ in range(4):                                      # Random, goal, type, duplicate
        win.action("Edit", "Undo").trigger()
    assert len(agents()) == n
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(out), ""))
    qtbot.mouseClick(panel.import_, Qt.MouseButton.LeftButton)                        # Import…
    assert win.session.project.config.agents == exported and panel.model.rowCount() == n + 1


def test_a_duplicate_name_and_a_start_on_a_building_made_in_the_dock_are_errors_in_problems(studio, qtbot):
    win = studio
    ctl, panel = editor(win, qtbot)
    agents = win.session.project.config.agents.agents
    row = first_car(win)
    other = next(a.name for i, a in enumerate(agents) if a.kind is Kind.CAR and i != row)
    panel.select_rows([row])
    index = panel.model.index(row, 1)
    panel.table.setFocus()
    panel.table.setCurrentIndex(index)
    qtbot.keyClick(panel.table, Qt.Key.Key_F2)                              # rename it to another car's name
    qtbot.waitUntil(lambda: isinstance(QtWidgets.QApplication.focusWidget(), QtWidgets.QLineEdit), timeout=WAIT)
    line = QtWidgets.QApplication.focusWidget()
    line.selectAll()
    qtbot.keyClicks(line, other)
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: win.session.project.config.agents.agents[row].name == other, timeout=WAIT)
    panel.select_rows([row])
    qtbot.mouseClick(panel.pick_start, Qt.MouseButton.LeftButton)
    vp = win.map.viewport()
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, pos=win.map.tools.viewport_pos_of_cell(20, 20))   # a building
    qtbot.waitUntil(lambda: win.session.project.config.agents.agents[row].start == (20, 20), timeout=WAIT)
    qtbot.keyClick(win.map, Qt.Key.Key_Escape)
    problems = [p for p in win.features["problems"].refresh_now() if p.source == "agents" and p.is_error]
    assert any(f"{other}: duplicate name" in p.message for p in problems), [p.message for p in problems]
    assert any("(20, 20)" in p.message for p in problems), [p.message for p in problems]
    assert panel.model.index(row, 1).data(Qt.ItemDataRole.ToolTipRole).startswith("error:")
    gen = win.simulation.gen
    win.answers["reset"] = "reset"
    qtbot.keyClick(win.window, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)     # Apply is refused
    assert win.simulation.gen == gen and panel.refusal.isVisible()


def test_undo_of_apply_re_simulates_the_old_recording_when_its_simulation_is_not_kept(studio, qtbot, monkeypatch):
    """The worker keeps no simulation (STASH 0): undo re-simulates the recording from before the Apply with the
    city and agents that made it (not the edited ones), so it continues exactly as the unedited run."""
    from tests.support.studio import default_config, run_sim

    monkeypatch.setattr("app.shell.worker.STASH", 0)
    win = studio
    ctl, panel = editor(win, qtbot)
    simulate(qtbot, win, 8)
    old, steps = win.history, win.num_steps
    ctl.run(A.delete(win.session, ctl.tab, [0]))                  # the edited set differs from the recording's
    win.answers["reset"] = "reset"
    ctl.apply_action.trigger()
    qtbot.waitUntil(lambda: win.history is not old and not win.syncing, timeout=WAIT)
    assert len(win.history.agents) == len(old.agents) - 1
    win.action("Edit", "Undo").trigger()
    assert win.history is old
    qtbot.waitUntil(lambda: not win.syncing and win.playback.sim_steps == steps, timeout=WAIT)
    simulate(qtbot, win, steps + 3)
    ref = run_sim(default_config(), seed=win.session.project.seed, steps=win.num_steps).buffer
    assert np.array_equal(win.history.array("positions"), ref.array("positions"))


def test_apply_is_refused_on_a_read_only_replay(studio, qtbot, tmp_path):
    """An episode file opened on its own is a read-only replay: Ctrl+Return and Ctrl+Shift+Return refuse and say
    why; nothing is pushed on the undo stack."""
    from tests.support.studio import default_config, run_sim

    win = studio
    ep = run_sim(default_config(), seed=3, steps=6).buffer.save(tmp_path / "ep.npz")
    assert win.open_path(ep, ask_save=False)
    qtbot.waitUntil(lambda: win.session.read_only is not None and win.history is not None, timeout=WAIT)
    ctl, panel = editor(win, qtbot)
    gen, history = win.simulation.gen, win.history
    for mods in (Qt.KeyboardModifier.ControlModifier,
                 Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier):
        qtbot.keyClick(win.window, Qt.Key.Key_Return, mods)
        assert win.simulation.gen == gen and win.history is history and win.session.stack.count == 0
        assert panel.refusal.isVisible() and "read-only replay" in panel.refusal.text()
