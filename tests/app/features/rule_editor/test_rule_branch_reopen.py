"""Rules applied from the shown step, saved and reopened: the project reopens with the edited
rules, the studio re-simulates every recorded step (the steps before the branch with the rules that made them)
so the recording can be continued, and the inspector explains a step before and a step after the branch with the
clause that decided each."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from core.base.codes import Kind  # noqa: E402
from tests.support.rule_editor import type_rule_at_top  # noqa: E402
from tests.support.studio import WAIT, simulate  # noqa: E402

RULE = "allstop: Stop(X) :- IsCar(X)."


def test_rule_branch_saved_reopens_continuable_and_explained(qtbot, studio, tmp_path):
    win = studio
    simulate(qtbot, win, 4)
    ctl, _page = type_rule_at_top(qtbot, win, RULE)
    win.set_cursor(2)
    win.answers["apply_rules_here"] = "apply"
    ctl.apply_branch_action.trigger()
    qtbot.waitUntil(lambda: "rule_segments" in win.history.meta and not win.playback.syncing, timeout=WAIT)
    assert win.num_steps == 2
    simulate(qtbot, win, 5)
    steps = win.num_steps
    car = next(i for i, k in enumerate(win.history.agents.kinds) if int(k) == int(Kind.CAR))
    labels = {c["id"]: c["label"] for c in win.history.meta["clauses"]}
    assert labels[int(win.history.step_record(3).fired[car])] == "allstop"
    assert labels.get(int(win.history.step_record(1).fired[car])) != "allstop"
    root = tmp_path / "proj"
    assert win.save_to(root)

    assert win.open_path(root, ask_save=False)
    qtbot.waitUntil(lambda: win.history is not None and not win.syncing, timeout=WAIT)
    assert win.num_steps == steps and win.playback.sim_steps == steps      # re-simulated exactly: continuable
    assert [e["step"] for e in win.history.meta["rule_segments"]] == [0, 2]
    assert win.session.project.config.program.clauses[0].label == "allstop"   # the project runs the edited rules
    win.session.select(car)
    win.set_cursor(4)
    win.flush_redraw()
    assert "allstop" in win.inspector.summary.parts.why
    win.set_cursor(1)
    win.flush_redraw()
    assert "allstop" not in win.inspector.summary.parts.why and win.inspector.summary.parts.why
    win.set_cursor(steps)
    win.playback.step_forward()                      # continues with the edited rules
    qtbot.waitUntil(lambda: win.num_steps == steps + 1, timeout=WAIT)
    labels = {c["id"]: c["label"] for c in win.history.meta["clauses"]}
    assert labels[int(win.history.step_record(steps).fired[car])] == "allstop"
