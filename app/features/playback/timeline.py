"""The timeline panel follows the session: its range is the recording, its value the cursor, one lane per registered
marker kind, the markers of the recording and the enabled step breakpoints. A step the user asks for (click, drag,
typed) pauses playback and is shown.

Markers that do not come from the recording's event kinds (a model's disagreements with the oracle over a branch it
drove, :mod:`app.features.spf.model_branch`) are handed over as named groups with :meth:`TimelineController.set_extra`: their
lanes follow the event kinds' while the group is set, and they are kept through the rebuilds until the owner clears
them (``set_extra(group)``)."""
from __future__ import annotations

from typing import Any, Iterable

from PySide6 import QtCore

from app.features.playback.controller import PlaybackController
from core.sim.events import Event, event_kinds
from core.studio.session import Session
from widgets.timeline import Marker, TimelineWidget


class TimelineController(QtCore.QObject):
    def __init__(self, session: Session, timeline: TimelineWidget, playback: PlaybackController,
                 parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.timeline = timeline
        self.playback = playback
        self.extra: dict[str, tuple[list[tuple[str, str, tuple[int, int, int]]], list[Marker]]] = {}
        self.refresh_lanes()
        timeline.stepRequested.connect(self._on_request)
        timeline.scrubbing.connect(lambda on: playback.pause() if on else None)
        ev = session.events
        ev.project.connect(lambda e: timeline.set_markers(self._extra_markers()))
        ev.history.connect(lambda e: self._rebuild())
        ev.markers.connect(lambda e: self._rebuild())
        ev.truncated.connect(lambda e: self._rebuild())
        ev.recorded.connect(self._on_recorded)
        ev.cursor.connect(lambda e: timeline.set_value(e.value))
        ev.breakpoints.connect(lambda e: timeline.set_breakpoints(
            [b.step for b in e.value if b.kind == "step" and b.enabled and b.step is not None]))

    def _on_request(self, k: int) -> None:
        self.playback.request_cursor(k)
        if self.timeline.value != self.session.cursor:   # asked for a step outside the recording
            self.timeline.set_value(self.session.cursor)

    def refresh_lanes(self) -> None:
        """One timeline lane per registered event kind (kinds registered after start-up get theirs too)."""
        lanes = [(k.name, k.label, k.colour) for k in event_kinds().values()]
        lanes += [lane for group, _ in self.extra.values() for lane in group]
        if lanes != self.timeline.bar.lanes:
            self.timeline.set_lanes(lanes)

    @staticmethod
    def _markers(events: Iterable[Event]) -> list[Marker]:
        kinds = event_kinds()
        return [Marker(e.step, e.kind, kinds[e.kind].colour, e.text) for e in events if e.kind in kinds]

    def _rebuild(self) -> None:
        self.refresh_lanes()
        self.timeline.set_range(self.session.num_steps)
        self.timeline.set_markers(sorted(self._markers(self.session.markers.events) + self._extra_markers(),
                                         key=lambda m: m.step))

    def set_extra(self, group: str, lanes: list[tuple[str, str, tuple[int, int, int]]] | None = None,
                  markers: Iterable[Marker] | None = None) -> None:
        """Show ``markers`` in ``lanes`` (name, label, colour) as the group ``group``, replacing what the group
        showed; without lanes the group is removed (its lanes and markers go)."""
        if lanes:
            self.extra[group] = (list(lanes), list(markers or ()))
        elif self.extra.pop(group, None) is None:
            return
        self._rebuild()

    def _extra_markers(self) -> list[Marker]:
        return [m for _, ms in self.extra.values() for m in ms]

    def _on_recorded(self, event: Any) -> None:
        self.timeline.add_markers(self._markers(event.events))
        self.timeline.set_range(event.value)
