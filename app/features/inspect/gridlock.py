"""Gridlocks in the studio (docs/gridlock.md): the status line says so when one is detected while recording, the
agents of the gridlock shown at the cursor are marked on the map, and *View ▸ Show the gridlock cycle* goes to it,
selects and frames its agents and lists the agents and the clauses that link them.

The detection itself is Qt-free (core/sim/gridlock.py): the timeline's ``gridlock`` marker kind keeps the
recording's shared detector up to date as frames arrive; this controller only reads it.
"""
from __future__ import annotations

import html
from typing import Any

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from app.shell.features import FeatureController
from app.shell.services import Playback, Shell
from core.sim.gridlock import Gridlock, GridlockDetector, detector_for, summary
from core.studio.session import Session
from core.view.gridlock import describe


class GridlockController(FeatureController):
    def __init__(self, shell: Shell, session: Session, map_view: Any, playback: Playback,
                 dialog_parent: QtWidgets.QWidget) -> None:
        super().__init__(dialog_parent)
        self.shell = shell
        self.session = session
        self.map = map_view
        self.playback = playback
        self.dialog_parent = dialog_parent
        self.last_report = ""     # the text "Show the cycle" showed last (tests and scripts read it)
        self.action = QtGui.QAction("Show the &gridlock cycle", self)
        self.action.setShortcut(QtGui.QKeySequence("Ctrl+Shift+G"))
        self.action.setStatusTip("Go to the gridlock (agents waiting on one another), select its agents and list "
                                 "the clauses that link them")
        self.action.setEnabled(False)
        self.action.triggered.connect(lambda _checked=False: self.show_cycle())
        ev = session.events
        ev.recorded.connect(self._on_recorded)
        for emitter in (ev.history, ev.truncated, ev.markers):
            emitter.connect(lambda e: self.refresh())
        ev.cursor.connect(lambda e: self._mark_shown())   # every seek: only which marks to draw

    # ---- queries ----------------------------------------------------------------------------------------------
    def detector(self) -> GridlockDetector | None:
        """The recording's shared detector, brought up to date (and back, after a branch)."""
        h = self.session.history
        if h is None:
            return None
        det = detector_for(h)
        if det.scanned > h.num_steps:
            det.rewind(h, h.num_steps)
        det.update(h)
        return det

    def gridlocks(self) -> list[Gridlock]:
        det = self.detector()
        return [] if det is None else list(det.gridlocks)

    def shown(self) -> Gridlock | None:
        """The gridlock live at the shown state, if any."""
        det = self.detector()
        live = [] if det is None else det.active_at(self.session.cursor)
        return live[0] if live else None

    # ---- reactions --------------------------------------------------------------------------------------------
    def _on_recorded(self, event: Any) -> None:
        new = [e for e in event.events or () if e.kind == "gridlock"]
        if new:
            self.shell.status(f"{new[-1].text} (detected at step {new[-1].step}; View ▸ Show the gridlock cycle, "
                              "Ctrl+Shift+G)", 30000)
        self.refresh()

    def refresh(self) -> None:
        """Mark the agents of the gridlock shown at the cursor; the action is enabled once there is one."""
        g = self.shown()
        self.map.set_marked(g.agents_at(self.session.cursor) if g is not None else ())
        self.action.setEnabled(bool(self.gridlocks()))

    def _mark_shown(self) -> None:
        """The cursor moved: the marks of the gridlock live there. The detector is brought up to date by
        :meth:`refresh` whenever the recording changes, so a seek only looks up what it found."""
        h, k = self.session.history, self.session.cursor
        found = detector_for(h).gridlocks if h is not None else ()
        live = next((g for g in found if g.active_at(k)), None) if found else None
        if live is not None or len(self.map.marked):
            self.map.set_marked(live.agents_at(k) if live is not None else ())

    def pick(self) -> Gridlock | None:
        """The gridlock to show: the one at the cursor, else the next one after it, else the last one."""
        found = self.gridlocks()
        if not found:
            return None
        k = self.session.cursor
        return self.shown() or next((g for g in found if g.step > k), found[-1])

    def show_cycle(self) -> Gridlock | None:
        """Pause, go to a state the gridlock is shown at, select its first cycle agent, frame its agents on the map
        and list the agents and clauses in a (non-blocking) message box."""
        g = self.pick()
        if g is None:
            self.shell.status("No gridlock in this recording (agents waiting on one another for "
                              f"{GridlockDetector().still_steps} steps)")
            return None
        s = self.session
        self.playback.pause()
        if not g.active_at(s.cursor):
            self.playback.set_cursor(g.step, pause=True)
        k = s.cursor
        s.select(g.cycle[0])
        agents = list(g.agents_at(k))
        assert s.history is not None
        self.map.show_cells(np.asarray(s.history.snapshot(k).positions)[agents])
        self.refresh()
        names = s.agent_names
        clauses = s.history.meta.get("clauses")
        program = s.project.config.program if s.project is not None else None
        self.last_report = "\n".join(describe(g, names, clauses, state=k, program=program))
        head = summary(g, names, clauses, state=k)
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Information, "Gridlock", html.escape(head),
                                    QtWidgets.QMessageBox.StandardButton.Ok, self.dialog_parent)
        box.setInformativeText(f"<pre>{html.escape(self.last_report)}</pre>")
        box.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setObjectName("gridlockDialog")
        box.open()
        self.shell.status(head)
        return g
