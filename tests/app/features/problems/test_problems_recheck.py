"""When the Problems panel checks again (app/features/problems/controller.py): after an edit, not because steps were
recorded. Recording makes the project unsaved (the session's ``modified`` event) but changes nothing a checker
reads; checking everything again as playback started was a stall of tens of milliseconds with 200 agents."""
from __future__ import annotations

import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")

from app.features.problems.controller import RECHECK_DELAY_MS  # noqa: E402


def test_recording_steps_does_not_recheck_but_an_edit_does(studio, qtbot):
    win = studio
    panel = win.window.panels.widget("problems")
    qtbot.wait(3 * RECHECK_DELAY_MS)                 # the check scheduled at start-up has run
    checks: list[int] = []
    real = panel.set_problems
    panel.set_problems = lambda problems: (checks.append(len(problems)), real(problems))
    assert not win.session.modified
    simulate(qtbot, win, 6)
    assert win.session.modified                       # recording made the project unsaved...
    qtbot.wait(3 * RECHECK_DELAY_MS)
    assert checks == []                               # ...and was no reason to check again
    win.action("Breakpoints", "Toggle breakpoint at this step").trigger()          # an edit (a command on the stack): checked again
    qtbot.waitUntil(lambda: len(checks) == 1, timeout=WAIT)
