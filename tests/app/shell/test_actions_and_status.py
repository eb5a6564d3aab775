"""The window's actions as a user meets them: a plain action's slot never receives Qt's `checked`, View ▸ Docks
brings a tabbed dock to the front, and the status line's "Press Space to play" hint goes once playing."""
from __future__ import annotations

import pytest

from tests.support.studio import WAIT

pytest.importorskip("pytestqt")



def _trigger(qtbot, win, *menu: str) -> None:
    """What a click on the menu entry ``menu`` or its shortcut does: the action's triggered(checked=False), then
    the event loop runs."""
    win.trigger(*menu)
    qtbot.wait(20)


def test_a_plain_actions_slot_never_receives_checked(studio, qtbot):
    got = []

    def slot(value="untouched"):
        got.append(value)

    act = studio.host.action("probe", slot)
    act.trigger()
    assert got == ["untouched"]


def test_press_space_hint_is_gone_once_playing(studio, qtbot):
    bar = studio.window.statusBar()
    assert "Press Space to play" in bar.currentMessage()
    _trigger(qtbot, studio, "Simulation", "Play")
    try:
        assert studio.playing
        assert "Press Space" not in bar.currentMessage() and "Press Space" not in studio.last_message
        assert bar.currentMessage().startswith("Ready: 18 agents, seed 0")
    finally:
        studio.pause()


def test_view_docks_render_comes_to_the_front(studio, qtbot):
    render, stats = studio.docks["render"], studio.docks["statistics"]
    assert not render.isVisible()
    entry = next(a for a in studio.docks_menu.actions() if a.text().startswith("Render"))
    entry.trigger()                                       # View ▸ Docks ▸ Render (icon generation)
    qtbot.waitUntil(lambda: render.isVisible(), timeout=WAIT)
    qtbot.wait(50)
    assert render in studio.window.tabifiedDockWidgets(stats)   # it shares a tab group with Statistics
    assert not render.visibleRegion().isEmpty()           # in front of its tab group, not hidden behind Statistics
    assert stats.visibleRegion().isEmpty()
