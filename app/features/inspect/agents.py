"""Which agent is which: the Agents panel, the Compare panel (the selected agent and the agents Ctrl+clicked in the
Agents panel, side by side), agent labels on the map (View ▸ Show agent names) and the witness of the selected
agent's explanation (ringed on the map, with a line to the selected agent).

The panel's rows, the witness and the label placement are computed in core (core/view/agent_rows.py,
core/view/labels.py); this controller feeds them from the session after each drawn frame and turns the panel's
requests into a selection (through the selection controller, so the status bar says so) and a centred map.
The panel refreshes at most every :data:`PANEL_PERIOD` seconds, in an event-loop pass after the frame's; the map
overlays with every frame (only what changed).
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
from PySide6 import QtCore, QtGui

from app.shell.features import FeatureController
from app.shell.onscreen import ShownWatch, on_screen
from core.studio.session import Session
from core.view.agent_rows import agent_rows, witness_agents
from core.view.compare import compare_rows
from widgets.map_overlays import AgentLabelLayer, WitnessOverlay

#: Seconds between two refreshes of the panel's rows while playing.
PANEL_PERIOD = 0.25


class AgentsController(FeatureController):
    def __init__(self, session: Session, map_view: Any, panels: Any, docks: dict, drawing: Any,
                 select: Callable[[int | None], None], parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.map = map_view
        self.panel = panel = panels.widget("agents")
        self.compare_view = panels.widget("compare")
        self.docks = docks           # the window's docks by name (filled once the panels are docked)
        self.drawing = drawing
        self.compare: tuple[int, ...] = ()   # agents Ctrl+clicked in the Agents panel
        self._last_selected: int | None = session.selected
        self.select = select
        self.labels = AgentLabelLayer()
        self.labels.setVisible(session.view.labels)
        map_view.vb.addItem(self.labels)
        self.witness = WitnessOverlay(map_view.vb)
        self.action = QtGui.QAction("Show agent &names", self)
        self.action.setCheckable(True)
        self.action.setShortcut(QtGui.QKeySequence("N"))
        self.action.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        self.action.setStatusTip("Label agents on the map (short ids when zoomed out; overlapping labels skipped)")
        self.action.setChecked(session.view.labels)
        self.action.toggled.connect(lambda on: self.session.set_view(labels=bool(on)))
        self._last_rows = 0.0
        self._stale = False
        self._rows_timer = QtCore.QTimer(self)
        self._rows_timer.setSingleShot(True)
        self._rows_timer.timeout.connect(self.refresh_rows)
        drawing.drawn.connect(self._on_drawn)
        panel.agentClicked.connect(self.select)
        panel.agentActivated.connect(self.centre_on)
        # rows and comparison are computed only on screen (not behind another dock's tab), caught up when shown
        self._shown = ShownWatch(self._on_shown, self)
        panel.compareChanged.connect(self.set_compare)
        self.compare_view.agentRequested.connect(self.select)
        self._compare_stale = False
        self.compare_view.clearRequested.connect(lambda: self.set_compare(()))
        ev = session.events
        ev.selection.connect(self._on_selection)
        ev.project.connect(lambda e: self._on_project())
        ev.view.connect(self._on_view)

    def _on_project(self) -> None:
        """Another project: nothing of the old one's agents stays shown or compared."""
        self.panel.clear()
        self.witness.clear()
        self.labels.set_agents(np.zeros((0, 2)), [])
        self.set_compare(())

    # ---- after each frame -----------------------------------------------------------------------------------
    def _on_drawn(self, k: int) -> None:
        s = self.session
        sc = self.map.scene_data
        if s.history is None or sc is None:
            return
        ws = witness_agents(s.history, k, s.selected) if s.selected is not None else ()
        self.witness.show(sc.positions, s.selected, ws)
        if self.labels.isVisible():
            self.labels.set_agents(sc.positions, sc.names, (s.selected, *ws) if s.selected is not None else ())
        if not on_screen(self.panel) and not (self.compare and on_screen(self.compare_view)):
            self._stale = True       # refreshed when the panel is shown
            self._shown.watch(self.panel)
            return
        # in an event-loop pass of its own, never the frame's (the map answers first, as with the inspector)
        if not self._rows_timer.isActive():
            wait = PANEL_PERIOD - (time.perf_counter() - self._last_rows)
            self._rows_timer.start(max(0, int(wait * 1000) + 1) if wait > 0 else 0)

    def refresh_rows(self) -> None:
        """The panel's rows at the shown state (also what a test calls to skip the throttle)."""
        self._rows_timer.stop()
        self._stale = False
        self._last_rows = time.perf_counter()
        s = self.session
        if s.history is None:
            self.panel.clear()
            return
        k = min(s.cursor, s.num_steps)
        if on_screen(self.panel):
            self.panel.set_rows(agent_rows(s.history, k), k)
            self.panel.set_selected(s.selected)
        else:
            self._stale = True
            self._shown.watch(self.panel)
        self.refresh_compare()

    def _on_selection(self, event: Any) -> None:
        """The highlighted row follows; while comparing, the agent selected before stays in the comparison."""
        prev, self._last_selected = self._last_selected, event.value
        if self.compare and prev is not None and prev != event.value and prev not in self.compare:
            self.compare = self.compare + (prev,)
            self.panel.set_compare(self.compare)
        self.panel.set_selected(event.value)

    # ---- comparison -----------------------------------------------------------------------------------------
    def compared(self) -> list[int]:
        """The agents side by side: the selected one first, then the compared ones."""
        s = self.session
        first = [s.selected] if s.selected is not None else []
        return first + [a for a in self.compare if a not in first]

    def set_compare(self, agents) -> None:
        """Compare these agents with the selected one; the Compare panel opens (in front) once there are two."""
        n = len(self.session.agent_names)
        self.compare = tuple(int(a) for a in agents if 0 <= int(a) < n)
        self.panel.set_compare(self.compare)
        dock = self.docks.get("compare")
        if dock is not None and len(self.compared()) >= 2 and not dock.isVisible():
            dock.show()
            dock.raise_()
        self.refresh_compare()

    def refresh_compare(self) -> None:
        if not on_screen(self.compare_view):   # hidden: nothing to compute; refreshed as it is shown
            self._compare_stale = True
            self._shown.watch(self.compare_view)
            return
        self._compare_stale = False
        s, model = self.session, self.drawing.inspector_model
        history = s.history
        agents = self.compared() if history is not None and model is not None else []
        if history is None or len(agents) < 2:
            self.compare_view.set_comparison(agents, [], (), None)
            return
        k = min(s.cursor, s.num_steps)
        reports = [model.report(history, k, a, recompute=False) for a in agents]
        self.compare_view.set_comparison(agents, [r.name for r in reports],
                                         compare_rows(reports, history.meta.get("clauses") or ()), k)

    def _on_shown(self, w: Any) -> None:
        if w is self.panel and self._stale and w.isVisible():
            self.refresh_rows()
        elif w is self.compare_view and self._compare_stale and w.isVisible():
            self.refresh_compare()

    def _on_view(self, event: Any) -> None:
        if "labels" not in event.changed:
            return
        on = self.session.view.labels
        if self.action.isChecked() != on:
            self.action.blockSignals(True)
            self.action.setChecked(on)
            self.action.blockSignals(False)
        self.labels.setVisible(on)
        sc, s = self.map.scene_data, self.session
        if on and sc is not None:
            ws = self.witness.agents
            self.labels.set_agents(sc.positions, sc.names, (s.selected, *ws) if s.selected is not None else ())

    # ---- panel requests -------------------------------------------------------------------------------------
    def centre_on(self, agent: int) -> None:
        """Select ``agent`` and centre the map on it (keeping the zoom)."""
        self.select(agent)
        sc = self.map.scene_data
        if sc is None or not 0 <= agent < len(sc.positions):
            return
        r, c = (float(v) for v in np.asarray(sc.positions)[agent])
        (x0, x1), (y0, y1) = self.map.vb.viewRange()
        w, h = x1 - x0, y1 - y0
        self.map.vb.setRange(QtCore.QRectF(c + 0.5 - w / 2, r + 0.5 - h / 2, w, h), padding=0)
