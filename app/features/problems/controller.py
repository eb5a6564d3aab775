"""The Problems panel's controller: collects every registered checker's findings (core/studio/problems.py) after each
edit, shows them, and leads from an entry to the cells on the map (centred and highlighted) or to the agent.

Why a feature of its own: the city editor, the agent editor
and the rule diagnostics all report through it, and the playback's "refuse to simulate on errors" check uses the
same collection (:func:`core.studio.problems.blocking_message`), so the panel and the refusal never disagree.

Checks run on a short timer after the session changes (a paint stroke pushes many merged commands; one check after
the stroke settles is enough). :meth:`ProblemsController.refresh_now` runs them at once (tests, the Re-check
button). A checker that raises is reported as a problem of its own instead of breaking the others.
"""
from __future__ import annotations

from typing import Any

from PySide6 import QtCore

from app.shell.features import FeatureController, FeatureHost
from app.shell.menus import ActionSpec
from core.studio.problems import ERROR, Problem, collect

#: Wait (ms) after the last change before checking again.
RECHECK_DELAY_MS = 120


def safe_collect(session: Any) -> list[Problem]:
    """:func:`collect`, but a failing checker becomes an error entry naming it (never an exception in the GUI)."""
    try:
        return collect(session)
    except Exception as exc:  # noqa: BLE001 - a checker's bug must not take the studio down
        return [Problem(ERROR, f"a problem check failed: {type(exc).__name__}: {exc}", "studio")]


class ProblemsController(FeatureController):
    """Keeps the Problems panel current and makes its entries lead somewhere (see the module docstring)."""

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.host = host
        self.shell = host.shell
        self.session = host.session
        self.map = host.map
        self.panel = host.panels.widget("problems")
        self.problems: list[Problem] = []
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.refresh_now)
        ev = self.session.events
        # not on "modified": recording a step or saving changes nothing a checker reads (city, agents, ontology,
        # rule texts change through commands, the stack index below), and the first recorded step would re-check
        # everything as playback starts (a stall of tens of ms with 200 agents)
        for emitter in (ev.project, ev.history):
            emitter.connect(lambda e: self.schedule())
        self.session.stack.events.index.connect(lambda e: self.schedule())
        self.panel.activated.connect(self.show_problem)
        self.panel.refreshRequested.connect(self.refresh_now)
        self.action = host.add(ActionSpec("Problems", self.show_panel, "Ctrl+Shift+M",
                                          "Show the Problems panel (city, agents, rules)", menu="view",
                                          section="panels"))
        host.playback.refused.connect(lambda text: self.show_panel())
        self.schedule()

    def schedule(self) -> None:
        self._timer.start(RECHECK_DELAY_MS)

    def refresh_now(self) -> list[Problem]:
        self._timer.stop()
        self.problems = safe_collect(self.session)
        self.panel.set_problems(self.problems)
        return self.problems

    def show_panel(self) -> None:
        """Open the Problems dock and check now."""
        dock = self.host.docks["problems"]
        dock.show()
        dock.raise_()          # a tab next to the Timeline (its full width for the long messages)
        self.refresh_now()

    def show_problem(self, problem: Problem) -> None:
        """Centre the map on the problem's cells and highlight them; select its agent when it is in the recording."""
        if problem.cells:
            self.map.show_cells(problem.cells)
            self.map.tools.highlight(problem.cells)
        else:
            self.map.tools.highlight([])
        if problem.agent and problem.agent in self.session.agent_names:
            self.session.select_name(problem.agent)
        self.shell.status(f"{problem.severity}: {problem.message}", 12000)

    def shutdown(self, wait_ms: int) -> bool:
        self._timer.stop()
        return True
