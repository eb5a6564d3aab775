"""The inspector's true-predicates table is in sight at 1440x900 with an agent selected."""
from __future__ import annotations

import pytest

from tests.support.studio import simulate

pytest.importorskip("pytestqt")



def test_true_predicates_table_is_in_sight_at_1440x900(studio, qtbot):
    studio.window.resize(1440, 900)
    simulate(qtbot, studio, 5)
    studio.select_agent_by_name("Car_3")
    studio.flush_redraw()
    qtbot.wait(100)
    table = studio.inspector.table
    assert table.topLevelItemCount() > 0
    seen = table.visibleRegion().boundingRect()
    assert seen.height() >= 60, f"only {seen.height()} px of the true-predicates table are visible"
