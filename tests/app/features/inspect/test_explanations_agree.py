"""In the studio, the map, its legend, the inspector, the timeline and the statistics agree:
at the newest step "Action (next)" / "Fired clause" and the inspector all say 'not decided yet' (or the action the
user forces), a forced action has a ring on the map and a timeline marker, clause legends carry the clause text and
firing count on hover, and the statistics footer counts the steps its Clauses title names."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")


def _legend_labels(win) -> list[str]:
    return [label for label, _rgb, _n in win.legend.agent_rows]


def test_newest_step_map_and_inspector_agree_and_forced_action_is_marked(studio, qtbot):
    from core.base.codes import Action
    from core.view.colouring import NOT_DECIDED

    simulate(qtbot, studio, 3)
    t = studio.num_steps
    studio.set_cursor(t)
    studio.select_agent(0)
    for scheme in ("Action (next)", "Fired clause"):
        studio.set_colour_scheme(scheme)
        studio.flush_redraw()
        assert _legend_labels(studio) == [NOT_DECIDED], scheme
    assert studio.inspector.report.next_action == NOT_DECIDED
    assert NOT_DECIDED in studio.inspector.summary.parts.facts["Action"]
    assert not studio.map.forced_item.isVisible()

    studio.force_action(int(Action.STOP))          # decided before the step: the override is known
    studio.flush_redraw()
    assert "forced (override)" in _legend_labels(studio) and NOT_DECIDED in _legend_labels(studio)
    assert studio.inspector.report.next_action == "Stop"
    assert "forced by the user when the simulation steps" in studio.inspector.summary.parts.facts["Action"]
    assert studio.map.forced_item.isVisible()
    x, y = studio.map.forced_item.getData()
    pos = studio.history.snapshot(t).positions[0]
    assert (int(np.floor(y[0])), int(np.floor(x[0]))) == (int(pos[0]), int(pos[1]))

    studio.simulate_step()
    qtbot.waitUntil(lambda: studio.num_steps == t + 1, timeout=WAIT)
    qtbot.waitUntil(lambda: any(m.lane == "forced" for m in studio.timeline.bar.markers), timeout=WAIT)
    marks = [m for m in studio.timeline.bar.markers if m.lane == "forced"]
    assert [m.step for m in marks] == [t] and "forced by the user" in marks[0].text
    assert "forced" in [name for name, _l, _c in studio.timeline.bar.lanes]
    studio.set_cursor(t)
    studio.flush_redraw()
    assert studio.map.forced_item.isVisible()
    studio.set_cursor(t - 1)
    studio.flush_redraw()
    assert not studio.map.forced_item.isVisible()


def test_clause_legends_show_text_and_count_and_footer_matches_the_plots(studio, qtbot):
    from core.view.stats import step_range_text

    simulate(qtbot, studio, 12)
    ep = studio.history
    table = ep.meta["clauses"]
    fired = np.asarray(ep.array("fired"))
    k = next(int(s) for s in range(ep.num_steps) if (fired[s] >= 0).any())
    studio.set_colour_scheme("Fired clause")
    studio.set_cursor(k)
    studio.flush_redraw()
    c = int(fired[k][fired[k] >= 0][0])
    label = table[c]["label"]
    rows = studio.legend._agent_box
    tips = [rows.itemAt(i).widget().toolTip() for i in range(rows.count())]
    n = int((fired[k] == c).sum())
    tip = next(tp for tp in tips if tp.startswith(f"{label}: "))
    assert table[c]["text"] in tip and f"fired for {n} agent" in tip

    cursor = ep.num_steps - 2
    studio.set_cursor(cursor)
    studio.flush_redraw()
    studio.stats.tabs.setCurrentWidget(studio.stats._clause_tab)   # its title is drawn with the tab
    studio.stats.refresh(ep, cursor)
    footer = studio.stats.summary.text()
    title = studio.stats.clause_plot.getPlotItem().titleLabel.text
    rng = step_range_text(cursor)
    assert footer.lower().startswith(rng) and f"in {rng} " in title
    assert f"shown step {cursor} of {ep.num_steps} steps" in footer
    counts = np.bincount(fired[:cursor][fired[:cursor] >= 0], minlength=len(table))
    used = int(np.argmax(counts))
    tip = studio.stats.clause_tip(used)
    assert tip.startswith(f"{studio.stats._labels[used]}: fired {int(counts[used])} time")
    assert table[used]["text"] in tip and rng in tip
    region = studio.stats.after_cursor[0].getRegion()
    assert tuple(region) == (cursor, ep.num_steps)
