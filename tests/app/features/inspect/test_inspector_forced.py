"""In the studio, an action the user forced reads in the inspector as forced by the user (from the recording),
not as a rule decision; the steps before it still show the clause the simulation recorded."""
from __future__ import annotations

import pytest

from tests.support.studio import force_then_simulate, simulate

pytest.importorskip("pytestqt")


def test_forced_action_reads_as_forced_by_the_user(studio, qtbot):
    from core.base.codes import Action
    from core.sim.episode import FIRED_FORCED

    simulate(qtbot, studio, 3)
    t = force_then_simulate(qtbot, studio, 0, int(Action.STOP))
    assert int(studio.history.step_record(t).fired[0]) == FIRED_FORCED
    studio.set_cursor(t)
    studio.flush_redraw()
    rep = studio.inspector.report
    assert rep.step == t and rep.forced == f"the user (action override set at step {t})"
    why = studio.inspector.summary.parts.why
    assert "<b>Forced</b> by the user" in why and "Fired:" not in why
    studio.set_cursor(t - 1)
    studio.flush_redraw()
    assert studio.inspector.report.forced is None
    assert studio.inspector.report.fired_clause == int(studio.history.step_record(t - 1).fired[0])
