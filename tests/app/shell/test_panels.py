"""Panels from a registry (app/shell/panels.py): every dock comes from a PanelSpec its feature registers, a
registered panel is built by its factory from the session and the job runner, listed in View ▸ Docks, placed and
shown as its spec says; the Render panel's generation runs on the window's job runner."""
from __future__ import annotations

import pytest

from tests.support.studio import close_window, open_window

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402

from app.shell import panels  # noqa: E402
from app.shell.features import FeatureController  # noqa: E402
from app.shell.panels import LEFT, RIGHT, Panel, PanelSpec  # noqa: E402


@pytest.fixture
def extra_panel():
    seen = {}

    class Notes(QtWidgets.QLabel):
        pass

    def factory(session, jobs):
        seen["args"] = (session, jobs)
        return Panel(Notes("notes"), FeatureController())

    spec = panels.register(PanelSpec("notes", "Study notes", LEFT, factory, visible=False, tabify_with="legend",
                                     menu_text="Notes (study)"))
    yield spec, seen
    panels.unregister("notes")


def test_the_docks_come_from_the_registry(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path / "s.ini", path=None)
    names = [s.name for s in panels.panel_specs()]
    assert {"timeline", "inspector", "statistics", "legend", "breakpoints", "render", "agents", "compare",
            "problems"} <= set(names)
    try:
        for spec in panels.panel_specs():
            assert spec.name in win.window.panels and spec.name in win.docks
            assert win.docks[spec.name].toggleViewAction() in win.docks_menu.actions()
            assert win.docks[spec.name].windowTitle() == spec.title
        assert win.timeline is win.window.panels.widget("timeline") and win.panel("render") is win.window.panels.widget("render")
        assert win.window.dockWidgetArea(win.docks["inspector"]) == RIGHT
        assert win.docks["render"].isHidden() and not win.docks["legend"].isHidden()
        qtbot.waitExposed(win.window)
        # each tab group shows the panel it was started with: Legend in front of Breakpoints and History
        assert not win.docks["legend"].visibleRegion().isEmpty()
        assert win.docks["breakpoints"].visibleRegion().isEmpty() and win.docks["history"].visibleRegion().isEmpty()
        win.docks["render"].show()                      # opened from View ▸ Docks: a tab next to Statistics
        assert win.docks["render"] in win.window.tabifiedDockWidgets(win.docks["statistics"])
        assert win.window.panels.controller("render").jobs is win.jobs   # generation runs on the window's runner
    finally:
        close_window(win)


def test_a_registered_panel_is_built_from_session_and_jobs_and_docked(qtbot, tmp_path, extra_panel):
    spec, seen = extra_panel
    win = open_window(qtbot, tmp_path / "s.ini", path=None)
    try:
        assert seen["args"] == (win.session, win.jobs)
        dock = win.docks["notes"]
        assert dock.widget() is win.window.panels.widget("notes") and dock.widget().text() == "notes"
        assert dock.toggleViewAction().text() == "Notes (study)" and dock.toggleViewAction() in win.docks_menu.actions()
        assert dock.isHidden()
        dock.show()
        assert dock in win.window.tabifiedDockWidgets(win.docks["legend"])
        win.reset_layout()                              # View ▸ Reset layout: the default visibility again
        assert dock.isHidden() and not win.docks["legend"].isHidden()
    finally:
        close_window(win)


def test_panel_names_are_unique(extra_panel):
    with pytest.raises(ValueError, match="notes"):
        panels.register(PanelSpec("notes", "Other", RIGHT, lambda s, j: QtWidgets.QWidget()))


def test_a_busy_panel_controller_keeps_the_window_open_until_it_is_idle(qtbot, tmp_path):
    """Closing asks every panel controller to stop; one still busy keeps the window open (saying what it waits
    for) and the window closes by itself once the controller reports idle."""

    class Busy(FeatureController):
        waiting_message = "waiting for the study scoring to stop…"

        def __init__(self):
            super().__init__()
            self.asked = []

        def shutdown(self, wait_ms):
            self.asked.append(wait_ms)
            return False

    busy = Busy()
    panels.register(PanelSpec("scoring", "Scoring", RIGHT, lambda s, j: Panel(QtWidgets.QWidget(), busy),
                              visible=False))
    try:
        win = open_window(qtbot, tmp_path / "s.ini", path=None)
        messages = []
        win.window.statusBar().messageChanged.connect(lambda m: m and messages.append(m))
        win.window.close()
        assert win.window.isVisible() and busy.asked
        assert any("Waiting for the study scoring to stop" in m for m in messages)
        busy.shutdown = lambda wait_ms: True
        busy.idle.emit()
        qtbot.waitUntil(lambda: not win.window.isVisible(), timeout=10_000)
        assert win.simulation.thread.wait(10_000)
    finally:
        panels.unregister("scoring")
