"""Drawing the shown state: the map every frame, the inspector and statistics less often, and the ack that lets the
simulation compute its next burst once a frame is on screen.

Why a controller of its own: redraws are coalesced (at most one per event-loop pass, 60 per second while playing)
and the slow panels take turns, so no frame pays for every plot; the simulation worker waits for the GUI's ack
after each burst (app/shell/worker.py explains the turn-taking). The playback controller tells it whether playback runs
(:meth:`set_playing`); everything else it learns from the session's events.
"""
from __future__ import annotations

import time
from typing import Any

from PySide6 import QtCore, QtWidgets

from app.shell.onscreen import ShownWatch, on_screen
from core.sim.compiled import compiled_project
from core.studio.session import Session
from core.view.inspect import Inspector
from core.view.scene import build_scene
from core.view.stats import clause_labels

#: While playing, the inspector and the statistics refresh at most this often (seconds); the map every frame.
SLOW_PERIOD = 0.25


class _HeldUpdates(QtCore.QObject):
    """An event filter that holds back the update requests (paint passes) of the windows it filters."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[QtWidgets.QWidget] = []

    def eventFilter(self, obj, ev) -> bool:  # noqa: N802 (Qt name)
        if ev.type() == QtCore.QEvent.Type.UpdateRequest:
            if obj not in self.held:
                self.held.append(obj)
            return True
        return False


class DrawController(QtCore.QObject):
    """Redraw scheduling for the map, legend, inspector and statistics of ``session``."""

    drawn = QtCore.Signal(int)        # the state just drawn on the map

    def __init__(self, session: Session, sim: Any, map_view: Any, legend: Any, inspector: Any, stats: Any,
                 parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.sim = sim                 # app.shell.worker.SimController: acks go to it
        self.map = map_view
        self.legend = legend
        self.inspector = inspector
        self.stats = stats
        self.inspector_model: Inspector | None = None
        self.playing = False           # live or replaying (set_playing)
        self._paced = False            # limit to 60 frames per second
        self._last_draw = 0.0
        self._last_slow = 0.0
        self._slow_dirty = False
        self._slow_pending = False
        self._slow_turn = False
        self._ack_due: int | None = None
        self._seek_queued = False      # a paused redraw is queued (schedule_redraw)
        self._painted = False
        self._graphics_views: list[Any] | None = None   # _views
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(lambda: self.flush_redraw("later"))
        self._ack_fallback = QtCore.QTimer(self)     # when the map is hidden nothing paints: ack anyway
        self._ack_fallback.setSingleShot(True)
        self._ack_fallback.timeout.connect(self.send_ack)
        map_view.painted.connect(self._on_map_painted)
        self._hidden_stale: set[Any] = set()     # panels hidden when they were due a refresh
        self._shown = ShownWatch(self._on_shown, self)   # ... refreshed when shown or their tab is raised
        dispatcher = QtCore.QAbstractEventDispatcher.instance(QtCore.QThread.currentThread())
        if dispatcher is not None:
            dispatcher.aboutToBlock.connect(self._on_idle)
        ev = session.events
        ev.project.connect(self._on_project)
        ev.history.connect(self._on_history)
        ev.recorded.connect(lambda e: self._mark_slow())
        ev.truncated.connect(self._on_truncated)
        ev.cursor.connect(lambda e: self.schedule_redraw())
        ev.interventions.connect(lambda e: self.schedule_redraw())   # a forced action shows at once (ring, colours)
        ev.selection.connect(self._on_selection)
        ev.view.connect(lambda e: self.schedule_redraw() if {"colour_by", "paths"} & set(e.changed) else None)

    def set_config(self, config: Any) -> None:
        """The project now runs ``config`` (edited rules): the inspector explains with its program from now on."""
        self.inspector_model = Inspector(config)

    # ---- session events -----------------------------------------------------------------------------------------
    def _on_project(self, event) -> None:
        cfg = event.value.config
        self.inspector_model = Inspector(cfg)
        self.map.set_city(cfg.city)
        self.inspector.clear()
        self.stats.clear()

    def _on_history(self, event) -> None:
        self.stats.clear()
        self._slow_dirty = True
        self.refresh_slow()

    def _on_truncated(self, event) -> None:
        self.stats.clear()
        self.flush_redraw()

    def _on_selection(self, event) -> None:
        self._slow_dirty = True
        self.schedule_redraw()
        if not self.playing:
            self.flush_redraw()

    def _mark_slow(self) -> None:
        self._slow_dirty = True

    # ---- playback state -----------------------------------------------------------------------------------------
    def set_playing(self, live: bool, replaying: bool, speed: float) -> None:
        """Told by the playback controller whenever playing, replaying or the speed change."""
        was = self.playing
        self.playing = live or replaying
        self._paced = replaying or (live and speed > 0)
        if was and not self.playing:
            self._slow_dirty = True
            self.refresh_slow()

    # ---- drawing ------------------------------------------------------------------------------------------------
    def schedule_redraw(self) -> None:
        """Coalesce redraws: at most one per event-loop pass, and at most 60 per second while playing."""
        if self._timer.isActive() or self._seek_queued:
            return
        if not self.playing:
            # paused (a seek, a new colouring): map and panels drawn together in one queued call, handled before
            # this pass paints anything (a timer fires after the map scene's own queued update, which paints the
            # window at once), so one seek is one repaint of the window instead of one per panel and layout
            self._seek_queued = True
            QtCore.QMetaObject.invokeMethod(self, "_flush_seek", QtCore.Qt.ConnectionType.QueuedConnection)
            return
        wait = 0
        if self._paced:
            wait = max(0, int(1000 / 60 - (time.perf_counter() - self._last_draw) * 1000))
        self._timer.start(wait)

    def flush_redraw(self, panels: str = "now") -> None:
        """Draw the current state now (the redraw timer calls this; benchmarks and tests may too).

        ``panels``: refresh the inspector and statistics ``"now"`` (a paused seek, tests, explicit calls) or
        ``"later"`` (in their own event-loop pass right after the map frame, so the map answers first: what the
        redraw timer does while playing).
        """
        self._timer.stop()
        self._seek_queued = False
        self._last_draw = time.perf_counter()
        s = self.session
        if s.history is None or s.project is None:
            return
        k = min(s.cursor, s.num_steps)
        s.check_scheme("the view")    # a stale scheme is reported and replaced, never a KeyError per frame
        # the session's view stores paths as a str, build_scene asks for its PathMode literal (a core annotation)
        sc = build_scene(s.history, k, scheme=s.view.colour_by, selected=s.selected,
                         paths=s.view.paths,  # type: ignore[arg-type]
                         grounder=self.grounder(), clause_labels=self.clause_labels())
        self.map.show_scene(sc)
        entries = sc.colouring.legend()
        self.legend.set_agents(sc.colouring.title, entries, [sc.colouring.note(lab) for lab, _c, _n in entries])
        self._slow_dirty = True
        if not self.playing and panels == "now":
            self.refresh_slow()
        elif not self.playing:
            if not self._slow_pending:
                self._slow_pending = True
                QtCore.QTimer.singleShot(0, self._deferred_slow)
        elif self._last_draw - self._last_slow >= SLOW_PERIOD and not self._slow_pending:
            # a little later, in its own event-loop pass: the map frame and the plots never share one stall
            self._slow_pending = True
            self._last_slow = self._last_draw
            QtCore.QTimer.singleShot(12, self._deferred_slow)
        if self.playing:
            # ack once this frame is on screen: GUI and simulation take turns (see app/shell/worker.py)
            self._ack_due = s.history.num_states - 1
            self._painted = False
            self._ack_fallback.start(100)
        self.drawn.emit(k)

    @QtCore.Slot()
    def _flush_seek(self) -> None:
        """The queued redraw of :meth:`schedule_redraw` while paused: the map and the panels now, then the layouts
        their new texts asked for (before the window is painted, which would otherwise paint them twice)."""
        if not self._seek_queued:   # drawn meanwhile (flush_redraw called directly)
            return
        self.flush_redraw("later" if self.playing else "now")
        for _ in range(3):   # a layout asks its parent's in turn (posted then, so not handled in the same call)
            QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)
        self._process_scenes()

    def _process_scenes(self) -> None:
        """Let the map's and the plots' scenes process their changes now, with the window's paint held until the
        event loop: a scene that processes its changes paints its window at once (QGraphicsScene dispatches the
        window's pending update request), so the map's scene painted the window, then the statistics plot's scene
        painted it again, and the inspector a third time. Now all of it is dirty before the one pass that paints
        it."""
        views = [v for v in self._views() if v.isVisible()]
        if not views:
            return
        hold = _HeldUpdates()
        windows = {id(w): w for w in (v.window() for v in views)}
        for w in windows.values():
            w.installEventFilter(hold)
        try:
            for _ in range(2):   # a scene's processing may queue another view's (a plot's range, its axes)
                for v in views:
                    QtCore.QCoreApplication.sendPostedEvents(v.scene(), QtCore.QEvent.Type.MetaCall)
        finally:
            for w in windows.values():
                w.removeEventFilter(hold)
        for w in hold.held:     # the paint each held request asked for, in the event loop as Qt would
            QtCore.QCoreApplication.postEvent(w, QtCore.QEvent(QtCore.QEvent.Type.UpdateRequest),
                                              QtCore.Qt.EventPriority.LowEventPriority.value)

    def _views(self) -> list[Any]:
        """The graphics views a redraw changes: the map's and the inspector's and statistics' plots."""
        if self._graphics_views is None:
            self._graphics_views = [self.map] + [
                v for w in (self.inspector, self.stats) if isinstance(w, QtWidgets.QWidget)
                for v in w.findChildren(QtWidgets.QGraphicsView)]
        return self._graphics_views

    def scene_at(self, k: int) -> Any:
        """The scene of state ``k`` as the map draws it (colours, selection, paths, field of view); exports use it."""
        s = self.session
        return build_scene(s.history, k, scheme=s.view.colour_by, selected=s.selected,
                           paths=s.view.paths,  # type: ignore[arg-type]  # a str in the session, see flush_redraw
                           grounder=self.grounder(), clause_labels=self.clause_labels())

    def grounder(self) -> Any:
        """The grounder of the open project's compiled config (the field of view is drawn with it), None when
        unavailable."""
        project = self.session.project
        if project is None:
            return None
        try:
            return compiled_project(project.config).grounder
        except Exception:  # noqa: BLE001 - no field of view is better than no map
            return None

    def clause_labels(self) -> list[str]:
        return clause_labels(self.session.history) if self.session.history is not None else []

    # ---- inspector and statistics -------------------------------------------------------------------------------
    def _deferred_slow(self) -> None:
        self._slow_pending = False
        self.refresh_slow()

    def refresh_slow(self) -> None:
        """Inspector and statistics: at once when paused; while playing, every SLOW_PERIOD and one of the two
        per frame (alternating), so no single frame pays for every plot."""
        s = self.session
        if not self._slow_dirty or s.history is None:
            return
        self._last_slow = time.perf_counter()
        k = min(s.cursor, s.num_steps)
        if self.playing:
            self._slow_turn = not self._slow_turn
            if self._slow_turn and on_screen(self.stats):
                self.stats.refresh(s.history, k)
            elif on_screen(self.inspector):
                self.update_inspector()
            for w in (self.stats, self.inspector):
                if not on_screen(w):
                    self._skip(w)
            return
        self._slow_dirty = False
        for w, refresh in ((self.stats, lambda: self.stats.refresh(s.history, k)), (self.inspector,
                                                                                  self.update_inspector)):
            if on_screen(w):
                refresh()
            else:   # a hidden panel (a tab behind another, a closed dock) costs nothing: refreshed when shown
                self._skip(w)

    def _skip(self, w: Any) -> None:
        self._hidden_stale.add(w)
        self._shown.watch(w)

    def _on_shown(self, w: Any) -> None:
        """A hidden inspector or statistics panel that missed frames is refreshed as it is shown."""
        if w in self._hidden_stale:
            self._hidden_stale.discard(w)
            self._refresh_shown(w)

    def _refresh_shown(self, w: Any) -> None:
        s = self.session
        if s.history is None or not w.isVisible():
            return
        if w is self.stats:
            self.stats.refresh(s.history, min(s.cursor, s.num_steps))
        else:
            self.update_inspector()

    def update_inspector(self) -> None:
        s = self.session
        if s.history is None or s.selected is None or self.inspector_model is None:
            self.inspector.clear()
            return
        k = min(s.cursor, s.num_steps)
        rep = self.inspector_model.report(s.history, k, s.selected, seed=int(s.history.meta.get("seed", 0)))
        colour = None
        sc = self.map.scene_data
        if sc is not None and sc.step == k and s.selected < len(sc.rgb):
            colour = tuple(int(v) for v in sc.rgb[s.selected])
        self.inspector.set_report(rep, colour)

    # ---- acks ---------------------------------------------------------------------------------------------------
    def _on_map_painted(self) -> None:
        self._painted = True

    def _on_idle(self) -> None:
        """The GUI event loop is about to sleep: everything queued (deferred plot paints included) is done,
        so the worker may compute the next burst without competing for the GIL."""
        if self._ack_due is not None and self._painted and not self._slow_pending:
            self.send_ack()

    def send_ack(self) -> None:
        self._ack_fallback.stop()
        if self._ack_due is not None and self.session.history is not None:
            self._ack_due = None
            self.sim.ack(self.session.history.num_states - 1)

    def stop(self) -> None:
        """Closing: no more redraws."""
        self._timer.stop()
        self._seek_queued = False
        self._ack_fallback.stop()
