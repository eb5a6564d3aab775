"""Gridlock visible in the studio: playing the default city (seed 0) until it locks up puts a
gridlock marker on the timeline and a message in the status bar, the gridlock's agents are marked on the map, and
View ▸ Show the gridlock cycle selects and frames them and lists the agents and clauses."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtWidgets

from tests.support.studio import WAIT

pytestmark = [pytest.mark.gui, pytest.mark.slow]   # plays ~370 steps of the default city (about 50 s here)


def marked_cells(win) -> set[tuple[int, int]]:
    if not win.map.mark_item.isVisible():
        return set()
    x, y = win.map.mark_item.getData()
    return {(int(r - 0.5), int(c - 0.5)) for r, c in zip(y, x)}


def test_playing_into_a_gridlock_marks_it_and_show_the_cycle_goes_there(studio, qtbot):
    win = studio
    messages: list[str] = []
    status = win.window.status
    win.window.status = lambda text, ms=6000: (messages.append(text), status(text, ms))
    assert not win.feature("inspect").gridlock.action.isEnabled()
    win.set_speed(0)
    win.play()
    qtbot.waitUntil(lambda: any(m.lane == "gridlock" for m in win.timeline.bar.markers), timeout=5 * WAIT)
    win.pause()
    qtbot.waitUntil(lambda: not win.simulation.worker.playing, timeout=WAIT)
    qtbot.wait(50)

    (g,) = win.feature("inspect").gridlock.gridlocks()
    names = win.session.agent_names
    assert [m.step for m in win.timeline.bar.markers if m.lane == "gridlock"] == [g.step]
    detected = [t for t in messages if t.startswith("Gridlock of")]
    assert detected and f"detected at step {g.step}" in detected[0]
    assert f"{names[g.cycle[0]]} waits on {names[g.links[0].waits_on]}" in detected[0]
    assert win.feature("inspect").gridlock.action.isEnabled()

    # the newest state shows the gridlock: its agents are marked where they stand
    win.set_cursor(win.num_steps)
    win.flush_redraw()
    pos = win.history.snapshot(win.cursor).positions
    assert marked_cells(win) == {tuple(int(v) for v in pos[a]) for a in g.agents_at(win.cursor)}
    # before it formed nothing is marked
    win.set_cursor(0)
    win.flush_redraw()
    assert marked_cells(win) == set()

    # the real menu action: goes to the gridlock, selects a cycle agent, frames the agents, lists agents and clauses
    view_menu = next(a.menu() for a in win.window.menuBar().actions() if a.text() == "&View")
    assert win.feature("inspect").gridlock.action in view_menu.actions()
    win.feature("inspect").gridlock.action.trigger()
    box = win.window.findChild(QtWidgets.QMessageBox, "gridlockDialog")
    qtbot.waitUntil(lambda: box.isVisible(), timeout=WAIT)
    assert g.active_at(win.cursor) and win.selected == g.cycle[0]
    text = box.informativeText()
    clauses = win.history.meta["clauses"]
    for lk in g.links:
        assert f"{names[lk.agent]} stops by {clauses[lk.clause]['label']} waiting on {names[lk.waits_on]}" in text
        assert clauses[lk.clause]["text"].split(":-")[1].strip().rstrip(".") in win.feature("inspect").gridlock.last_report
    (x0, x1), (y0, y1) = win.map.vb.viewRange()
    cells = np.asarray(win.history.snapshot(win.cursor).positions)[list(g.agents_at(win.cursor))]
    assert (cells[:, 1] >= x0).all() and (cells[:, 1] <= x1).all() and (cells[:, 0] >= y0).all() \
        and (cells[:, 0] <= y1).all()
    assert x1 - x0 < 120 < win.map.city.width                  # zoomed in on them, not the whole city
    box.close()
