"""Which agent is which, in the studio window (pytest-qt): the Agents panel lists the shown state
and drives the selection (click) and the map (double-click centres); View ▸ Show agent names labels the map;
clicking a cell several agents share steps through them; the witness of the selected agent's explanation is
ringed and linked to it on the map."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.view.agent_rows import agent_rows, agents_in_cell, witness_agents  # noqa: E402
from core.view.labels import short_name  # noqa: E402

pytestmark = pytest.mark.gui


def show_state(win, k: int) -> None:
    win.set_cursor(k)
    win.flush_redraw()
    win.feature("inspect").agents.refresh_rows()


def click_map_cell(qtbot, win, row: int, col: int) -> None:
    pt = win.map.mapFromScene(win.map.scene_pos_of_cell(row, col))
    qtbot.mouseClick(win.map.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=pt)


def test_agents_panel_lists_the_state_and_selects_and_centres(studio, qtbot):
    win = studio
    simulate(qtbot, win, 20)
    dock = win.docks["agents"]
    assert dock.toggleViewAction() in win.docks_menu.actions()
    dock.show()
    dock.raise_()
    panel = win.window.panels.widget("agents")
    qtbot.waitUntil(panel.isVisible, timeout=WAIT)
    show_state(win, 12)
    assert panel.model.rows == agent_rows(win.history, 12)
    assert panel.count.text().endswith("at step 12")

    # a click on a row selects that agent (the inspector follows)
    target = win.session.agent_names.index("Car_3")
    qtbot.mouseClick(panel.table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=panel.row_rect(target).center())
    qtbot.waitUntil(lambda: win.selected == target, timeout=WAIT)
    win.flush_redraw()
    assert win.inspector.report is not None and win.inspector.report.name == "Car_3"

    # a double-click selects and centres the map on the agent, keeping the zoom
    win.map.show_cells([[0, 0]], margin=15)
    (x0, x1), _ = win.map.vb.viewRange()
    other = win.session.agent_names.index("Pedestrian_5")
    rect = panel.row_rect(other)
    qtbot.mouseClick(panel.table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(panel.table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: win.selected == other, timeout=WAIT)
    r, c = win.history.snapshot(12).positions[other]
    (nx0, nx1), (ny0, ny1) = win.map.vb.viewRange()
    assert abs((nx0 + nx1) / 2 - (c + 0.5)) < 1.5 and abs((ny0 + ny1) / 2 - (r + 0.5)) < 1.5
    assert abs((nx1 - nx0) - (x1 - x0)) < 1.0

    # selecting elsewhere (the map, Escape) moves the highlighted row; a new step updates the rows in place
    win.select_agent(target)
    selected_rows = panel.table.selectionModel().selectedRows()
    assert [ix.data(QtCore.Qt.ItemDataRole.UserRole + 2) for ix in selected_rows] == [target]
    show_state(win, 20)
    assert panel.model.rows == agent_rows(win.history, 20)
    assert [ix.data(QtCore.Qt.ItemDataRole.UserRole + 2) for ix in panel.table.selectionModel().selectedRows()] \
        == [target]
    # the rows follow the cursor by themselves (at most 4 refreshes a second)
    win.set_cursor(5)
    win.flush_redraw()
    qtbot.waitUntil(lambda: panel.model.rows == agent_rows(win.history, 5), timeout=WAIT)
    assert panel.count.text().endswith("at step 5")
    qtbot.keyClicks(panel.search, "pedestrian")
    assert {win.session.agent_names[a].split("_")[0] for a in panel.shown_agents()} == {"Pedestrian"}


def test_clicking_a_shared_cell_again_cycles_through_its_agents(studio, qtbot):
    win = studio
    simulate(qtbot, win, 30)
    found = None
    for k in range(win.num_steps + 1):
        pos = np.asarray(win.history.snapshot(k).positions)
        cells, counts = np.unique(pos, axis=0, return_counts=True)
        if (counts > 1).any():
            found = k, tuple(int(v) for v in cells[np.argmax(counts)])
            break
    assert found is not None, "the default city (seed 0) has agents sharing a cell in its first 30 steps"
    k, cell = found
    sharing = agents_in_cell(win.history.snapshot(k).positions, cell)
    show_state(win, k)
    win.select_agent(None)
    win.map.show_cells([cell], margin=10)
    qtbot.wait(20)
    picked = []
    for _ in range(len(sharing) + 1):
        click_map_cell(qtbot, win, *cell)
        qtbot.waitUntil(lambda: win.selected is not None, timeout=WAIT)
        picked.append(win.selected)
    assert sorted(picked[:-1]) == sharing            # every agent of the cell, one per click
    assert picked[-1] == picked[0]                   # and round again
    assert "in this cell: click again for" in win.last_message


def test_agent_names_on_the_map_follow_the_view_menu(studio, qtbot):
    win = studio
    simulate(qtbot, win, 5)
    show_state(win, 5)
    view_menu = next(a.menu() for a in win.window.menuBar().actions() if a.text() == "&View")
    action = win.feature("inspect").agents.action
    assert action in view_menu.actions() and not action.isChecked()
    layer = win.feature("inspect").agents.labels
    assert not layer.isVisible()
    action.trigger()
    assert win.session.view.labels and layer.isVisible()
    names = win.session.agent_names
    target = names.index("Car_3")
    win.select_agent(target)
    win.flush_redraw()
    r, c = win.history.snapshot(5).positions[target]
    win.map.show_cells([[r, c]], margin=12)           # zoomed in: full names
    win.map.grab()
    assert layer.placed and layer.placed[0] == (target, "Car_3")
    assert all("_" in text for _, text in layer.placed)
    width = win.map.vb.width()
    win.map.vb.setRange(QtCore.QRectF(0, 0, width / 4, width / 4), padding=0)   # ~4 px per cell: short ids
    win.map.grab()
    assert layer.placed and all(text == short_name(names[a]) for a, text in layer.placed)
    win.map.vb.setRange(QtCore.QRectF(0, 0, width / 1.5, width / 1.5), padding=0)   # ~1.5 px per cell: none
    win.map.grab()
    assert layer.placed == []
    action.trigger()
    assert not win.session.view.labels and not layer.isVisible()
    win.map.setFocus()
    qtbot.keyClick(win.map, QtCore.Qt.Key.Key_N)          # its shortcut, listed in Help ▸ Keyboard shortcuts
    assert win.session.view.labels and action.isChecked() and layer.isVisible()
    assert any(row[:2] == ("N", "Show agent names") for row in win.shortcut_rows())


def test_the_witness_of_the_explanation_is_ringed_and_linked(studio, qtbot):
    win = studio
    simulate(qtbot, win, 20)
    hit = next(((k, a) for k in range(win.num_steps) for a in range(len(win.session.agent_names))
                if witness_agents(win.history, k, a)), None)
    assert hit is not None
    k, agent = hit
    show_state(win, k)
    win.select_agent(agent)
    win.flush_redraw()
    ws = witness_agents(win.history, k, agent)
    overlay = win.feature("inspect").agents.witness
    assert overlay.agents == ws and overlay.ring.isVisible() and overlay.line.isVisible()
    pos = np.asarray(win.history.snapshot(k).positions)
    x, y = overlay.ring.getData()
    assert sorted(zip(np.floor(y).astype(int), np.floor(x).astype(int))) == sorted(tuple(pos[w]) for w in ws)
    lx, ly = overlay.line.getData()
    assert (np.floor(ly[0]), np.floor(lx[0])) == tuple(pos[agent])
    # the inspector names the same witness in its explanation
    names = win.session.agent_names
    assert all(names[w] in win.inspector.summary.parts.why for w in ws)
    # an agent whose action is the default has no witness: nothing is drawn
    rec = win.history.step_record(k)
    plain = next(a for a in range(len(names)) if rec.fired[a] < 0)
    win.select_agent(plain)
    win.flush_redraw()
    assert overlay.agents == () and not overlay.ring.isVisible()
    win.select_agent(None)
    win.flush_redraw()
    assert not overlay.line.isVisible()


def test_ctrl_click_compares_agents_side_by_side(studio, qtbot):
    win = studio
    simulate(qtbot, win, 12)
    win.docks["agents"].show()
    win.docks["agents"].raise_()
    panel = win.window.panels.widget("agents")
    qtbot.waitUntil(panel.isVisible, timeout=WAIT)
    show_state(win, 10)
    names = win.session.agent_names
    first, second, third = (names.index(n) for n in ("Car_3", "Car_5", "Pedestrian_2"))
    vp = panel.table.viewport()
    qtbot.mouseClick(vp, QtCore.Qt.MouseButton.LeftButton, pos=panel.row_rect(first).center())
    qtbot.waitUntil(lambda: win.selected == first, timeout=WAIT)
    ctrl = QtCore.Qt.KeyboardModifier.ControlModifier
    qtbot.mouseClick(vp, QtCore.Qt.MouseButton.LeftButton, ctrl, panel.row_rect(second).center())
    qtbot.mouseClick(vp, QtCore.Qt.MouseButton.LeftButton, ctrl, panel.row_rect(third).center())
    assert win.selected == first                       # Ctrl+click does not change the selection
    dock, view = win.docks["compare"], win.window.panels.widget("compare")
    assert dock.isVisible() and view.isVisible()
    assert view.agents == (first, second, third)
    assert [view.table.horizontalHeaderItem(j).text() for j in range(3)] == ["Car_3", "Car_5", "Pedestrian_2"]
    reports = [win.drawing.inspector_model.report(win.history, 10, a, recompute=False) for a in view.agents]
    action_row = next(i for i, r in enumerate(view.rows) if r.label == "Action")
    assert [view.table.item(action_row, j).text().split(" ")[0] for j in range(3)] == [r.decided for r in reports]
    type_row = next(i for i, r in enumerate(view.rows) if r.label == "Type")
    assert view.table.item(type_row, 0).font().bold()          # a car and a pedestrian differ in type
    # Ctrl+click again removes an agent; a click on a column header selects that agent
    qtbot.mouseClick(vp, QtCore.Qt.MouseButton.LeftButton, ctrl, panel.row_rect(third).center())
    assert view.agents == (first, second)
    header = view.table.horizontalHeader()
    x = header.sectionViewportPosition(1) + header.sectionSize(1) // 2
    qtbot.mouseClick(header.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(x, header.height() // 2))
    qtbot.waitUntil(lambda: win.selected == second, timeout=WAIT)
    win.feature("inspect").agents.refresh_rows()
    assert view.agents == (second, first)               # the selected agent first
    qtbot.mouseClick(view.clear_btn, QtCore.Qt.MouseButton.LeftButton)
    assert view.agents == (second,) and view.table.columnCount() == 0 and panel.model.compare == ()
