"""Simulation ▸ Set seed… then Reset (Ctrl+R) restarts from the seed the user set."""
from __future__ import annotations

import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402


def _trigger(qtbot, win, *menu: str) -> None:
    """What a click on the menu entry ``menu`` or its shortcut does: the action's triggered(checked=False), then
    the event loop runs."""
    win.trigger(*menu)
    qtbot.wait(20)


def test_reset_restarts_from_the_seed_the_user_set(studio, qtbot, monkeypatch):
    monkeypatch.setattr(QtWidgets.QInputDialog, "getInt", staticmethod(lambda *a, **k: (7, True)))
    studio.answers["reset"] = "reset"
    _trigger(qtbot, studio, "Simulation", "Set seed…")                       # Simulation ▸ Set seed… 7
    qtbot.waitUntil(lambda: studio.history is not None and studio.history.meta.get("seed") == 7, timeout=WAIT)
    simulate(qtbot, studio, 3)
    first = studio.history
    _trigger(qtbot, studio, "Simulation", "Reset simulation")                      # Ctrl+R: must keep seed 7, not 0
    qtbot.waitUntil(lambda: studio.history is not first and studio.history is not None, timeout=WAIT)
    assert studio.history.meta["seed"] == 7 and studio.project.seed == 7
    assert "seed 7" in studio.last_message
