"""The Agents panel on its own (pytest-qt): real header clicks sort, typing filters, a click asks to select and a
double-click to centre; the highlighted row follows the selection and survives new rows (widgets/inspect/agents_panel.py)."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.view.agent_rows import AgentRow  # noqa: E402
from widgets.inspect.agents_panel import AgentsPanel  # noqa: E402


def rows(step: int = 0) -> tuple[AgentRow, ...]:
    spec = [("Car_1", "Car", "ambulance", "ambulance", "Normal", 0, 30),
            ("Car_10", "Car", "car", "", "Stop", 2, 5),
            ("Car_2", "Car", "reckless", "reckless", "Fast", 1, 120),
            ("Pedestrian_1", "Pedestrian", "old", "old", "Stop", 0, 9)]
    return tuple(AgentRow(i, n, k, d, c, a, False, g + step, p - step, (i, i))
                 for i, (n, k, d, c, a, g, p) in enumerate(spec))


@pytest.fixture
def panel(qtbot):
    w = AgentsPanel()
    qtbot.addWidget(w)
    w.resize(560, 300)
    w.show()
    w.set_rows(rows(), 0)
    return w


def click_header(qtbot, panel, column: int) -> None:
    header = panel.table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(x, header.height() // 2))


def test_sorted_by_name_naturally_then_by_clicked_columns(qtbot, panel):
    assert panel.shown_agents() == [0, 2, 1, 3]          # Car_1, Car_2, Car_10, Pedestrian_1
    click_header(qtbot, panel, 5)                        # Path left, ascending: numbers, not text
    assert panel.shown_agents() == [1, 3, 0, 2]
    click_header(qtbot, panel, 5)                        # again: descending
    assert panel.shown_agents() == [2, 0, 3, 1]
    click_header(qtbot, panel, 3)                        # Action
    assert [panel.model.rows[a].action for a in panel.shown_agents()] == ["Fast", "Normal", "Stop", "Stop"]


def test_typing_in_the_filter_keeps_matching_rows(qtbot, panel):
    qtbot.keyClicks(panel.search, "stop")
    assert sorted(panel.shown_agents()) == [1, 3]
    assert panel.count.text() == "2 of 4 agents at step 0"
    panel.search.clear()
    qtbot.keyClicks(panel.search, "car reck")
    assert panel.shown_agents() == [2]
    panel.search.clear()
    assert len(panel.shown_agents()) == 4 and panel.count.text() == "4 agents at step 0"


def test_click_and_double_click_emit_the_agent(qtbot, panel):
    clicked, activated = [], []
    panel.agentClicked.connect(clicked.append)
    panel.agentActivated.connect(activated.append)
    rect = panel.row_rect(3)
    qtbot.mouseClick(panel.table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    assert clicked == [3]
    rect = panel.row_rect(2)
    # a real double-click: press/release, then the double-click event (QTest's alone has no first press)
    qtbot.mouseClick(panel.table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(panel.table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    assert activated == [2] and clicked == [3, 2]


def test_highlight_follows_the_selection_and_survives_new_rows(qtbot, panel):
    panel.set_selected(1)
    sel = panel.table.selectionModel().selectedRows()
    assert [ix.data(QtCore.Qt.ItemDataRole.UserRole + 2) for ix in sel] == [1]
    click_header(qtbot, panel, 4)                        # sort by goals, then a new step arrives
    panel.set_rows(rows(step=3), 3)
    sel = panel.table.selectionModel().selectedRows()
    assert [ix.data(QtCore.Qt.ItemDataRole.UserRole + 2) for ix in sel] == [1]
    assert panel.model.rows[1].goals_reached == 5 and panel.count.text() == "4 agents at step 3"
    idx = panel.model.index(panel.shown_agents().index(1), 4)
    assert idx.data() == 5
    panel.set_selected(None)
    assert panel.table.selectionModel().selectedRows() == []


def test_the_newest_step_labels_actions_as_the_last_steps(qtbot, panel):
    from dataclasses import replace

    panel.set_rows(tuple(replace(r, pending=True, forced=r.index == 1) for r in rows()), 9)
    col = 3
    texts = {panel.model.index(r, 0).data(): panel.model.index(r, col).data() for r in range(panel.model.rowCount())}
    assert texts["Car_1"] == "Normal (last step)" and texts["Car_10"] == "Stop (forced) (last step)"
