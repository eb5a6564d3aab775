"""The statistics dock on a long recording: the stacked action areas are clipped and downsampled to the plot's
pixels (PlotItem.addItem switches both off, so they are set after it; a 10,000-point filled curve is otherwise
filled in chunks at every repaint), and the Clauses tab, when hidden, is brought up to date as it is shown."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from core.base.world import AgentTable  # noqa: E402
from core.sim.episode import EpisodeBuffer  # noqa: E402

STEPS, AGENTS = 6000, 12


@pytest.fixture(scope="module")
def long_run():
    """A synthetic recording: random decisions, clause firings and goals (what the dock counts), still agents."""
    rng = np.random.default_rng(0)
    agents = AgentTable.build([f"Car_{i}" for i in range(AGENTS)], [1] * AGENTS, list(range(AGENTS)),
                              [[] for _ in range(AGENTS)])
    clauses = [{"label": f"c{i}", "text": f"Stop(X) :- P{i}(X)."} for i in range(3)]
    buf = EpisodeBuffer(agents, {"clauses": clauses, "concepts": []}, witness_vars=1)
    zeros2 = np.zeros((AGENTS, 2), np.int16)
    for i in range(AGENTS):
        buf.add_plan(i, np.zeros((2, 2), np.int16))
    state = (zeros2, np.full(AGENTS, -1, np.int8), zeros2, np.zeros(AGENTS, np.int32),
             np.arange(AGENTS, dtype=np.int32), agents)
    buf.append_state(*state)
    for _ in range(STEPS):
        decided = rng.integers(0, 4, AGENTS).astype(np.int8)
        holds = np.zeros((AGENTS, 4), bool)
        holds[np.arange(AGENTS), decided] = True
        buf.append_step(holds, decided, decided, rng.integers(-1, 3, AGENTS).astype(np.int32),
                        np.full((AGENTS, 1), -1, np.int32), rng.random(AGENTS) < 0.01)
        buf.append_state(*state)
    return buf


def test_action_areas_are_downsampled_to_the_plot(qtbot, shown_stats, long_run):
    w = shown_stats
    w.refresh(long_run, STEPS // 2)
    qtbot.wait(50)
    width = w.actions_plot.getPlotItem().vb.width()
    for curve in w.action_curves:
        assert curve.opts["clipToView"] and curve.opts["autoDownsample"]
        shown = len(curve.curve.xData)
        assert 0 < shown <= 3 * width < STEPS, (shown, width)


def test_hidden_clauses_tab_is_drawn_when_shown(shown_stats, long_run):
    w = shown_stats
    w.refresh(long_run, 100)
    assert w.tabs.currentIndex() == 0
    bars = w.clause_bars.opts
    k = 4000
    w.refresh(long_run, k)
    fired = np.asarray(long_run.array("fired")[:k])
    want = [int((fired == c).sum()) for c in range(3)]
    assert list(w._cc) == want                           # counted (tooltips, title) ...
    assert list(np.asarray(bars["width"], int)) != want  # ... but the hidden bars are not redrawn
    w.tabs.setCurrentIndex(1)                            # the user opens the Clauses tab
    assert list(np.asarray(w.clause_bars.opts["width"], int)) == want
    labels = [lab for _, lab in w.clause_plot.getPlotItem().getAxis("left")._tickLevels[0]]
    assert labels == [f"c{c} ({n})" for c, n in enumerate(want)]
    w.refresh(long_run, 10)                              # shown: redrawn at once
    fired = np.asarray(long_run.array("fired")[:10])
    assert list(np.asarray(w.clause_bars.opts["width"], int)) == [int((fired == c).sum()) for c in range(3)]


def test_a_seek_does_not_re_range_the_plots(shown_stats, long_run, qtbot, monkeypatch):
    """Moving the shown step moves the cursor lines and the shading only: the plots keep their ranges and their
    auto-range is not computed again (it re-ranged the Actions plot at its next paint, which updated and painted
    its scene a second time per seek)."""
    import pyqtgraph as pg

    w = shown_stats
    w.refresh(long_run, 3000)
    qtbot.wait(50)
    ranges = [p.getPlotItem().vb.viewRange() for p in (w.actions_plot, w.goals_plot)]
    calls: list[int] = []
    real = pg.ViewBox.updateAutoRange
    monkeypatch.setattr(pg.ViewBox, "updateAutoRange", lambda self: (calls.append(1), real(self))[1])
    for k in (10, 4500, 777, STEPS):
        w.refresh(long_run, k)
        qtbot.wait(30)                                   # painted through the event loop
        assert w.actions_cursor.value() == k and w.after_cursor[0].getRegion() == (k, STEPS)
    assert calls == []
    assert [p.getPlotItem().vb.viewRange() for p in (w.actions_plot, w.goals_plot)] == ranges
