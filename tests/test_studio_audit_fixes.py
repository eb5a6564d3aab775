"""Studio defects found in the GUI audit: breakpoint resume, colour-by validation, Save As over another project,
export failures and cancel, project.yaml ``studio:`` validation, unsaved-change tracking of breakpoints, quitting
with the Safe Path Following window open, overlays, Help shortcuts, --select, the render dock without a model."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402

from .studio_support import DEFAULT_MODE, ROOT, default_config, run_sim  # noqa: E402
from .test_studio_gui import WAIT, _close, _open_window, _simulate  # noqa: E402


@pytest.fixture
def settings_path(tmp_path):
    return tmp_path / "studio.ini"


@pytest.fixture
def studio(qtbot, settings_path):
    win = _open_window(qtbot, settings_path)
    yield win
    _close(win)


# ---- 1. Play resumes past the breakpoint that just fired ------------------------------------------------------

def test_check_breakpoints_skips_the_state_playback_resumes_from():
    from core.sim.events import Breakpoint, check_breakpoints

    ep = run_sim(default_config(), steps=60).buffer
    bp = Breakpoint("goal")
    k = next(k for k in range(ep.num_steps) if bp.check(ep, k) is not None)
    assert check_breakpoints([bp], ep, k).show == k
    assert check_breakpoints([bp], ep, k, resume_from=k) is None        # the hit we resume from
    assert check_breakpoints([bp], ep, k, resume_from=k - 1) is not None
    step_bp = Breakpoint("step", step=k + 1)                               # shows k + 1: still fires
    assert check_breakpoints([bp, step_bp], ep, k, resume_from=k).breakpoint == step_bp


@pytest.mark.parametrize("bp_args", [dict(kind="action", agent="Car_3", action="Stop"), dict(kind="goal")])
def test_play_continues_past_an_action_or_goal_breakpoint(studio, qtbot, bp_args):
    from core.sim.events import Breakpoint

    win = studio
    win.add_breakpoint(Breakpoint(**bp_args))
    win.set_speed(0)
    win.play()
    qtbot.waitUntil(lambda: not win.playing and "Breakpoint" in win.last_message, timeout=WAIT)
    first = win.cursor
    assert first < win.num_steps
    seen = [first]
    win.set_speed(50)
    for _ in range(3):            # each Play moves on: to a later hit of the same breakpoint, never the same one
        win.status("")
        win.play()
        qtbot.waitUntil(lambda: win.cursor > seen[-1] or not win.playing, timeout=WAIT)
        qtbot.waitUntil(lambda: not win.playing or win.cursor > seen[-1] + 3, timeout=WAIT)
        win.pause()
        assert win.cursor > seen[-1], (seen, win.cursor, win.last_message)
        seen.append(win.cursor)
    # scrubbing back to the first hit and pressing Play also moves on
    win.set_cursor(first)
    win.play()
    qtbot.waitUntil(lambda: win.cursor > first or not win.playing, timeout=WAIT)
    win.pause()
    assert win.cursor > first
