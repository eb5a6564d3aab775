"""A tiny evented-model toolkit: named events that views subscribe to (no Qt).

Why: the studio's state lives in a Qt-free :class:`core.studio.session.Session`; the Qt views (map, timeline,
inspector, menus) and the controllers learn about changes by subscribing to its events, the way napari's
``ViewerModel`` announces ``dims`` or ``layers`` changes. Keeping this in ``core`` lets the session be tested
without a QApplication, and lets a script drive the same model the studio shows.

Contract:

* ``group.<name>.connect(callback)``; ``callback(event)`` receives an :class:`Event` whose ``type`` is the event
  name, ``source`` the emitting object and whose keyword fields (``value`` by convention) describe the change.
* Callbacks run synchronously, in connection order, in the thread that emits (the session is GUI-thread only).
* A callback that raises does not stop the others; the error is logged and re-raised after all ran, so a broken
  view is loud in tests yet cannot leave the other views stale.
* ``with emitter.blocker():`` suppresses an emitter (nested blocks count), e.g. while a bulk change is applied
  and one summary event follows.
"""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator

log = logging.getLogger(__name__)

Callback = Callable[["Event"], Any]


class Event:
    """One emitted change: ``type`` (the event name), ``source`` and any keyword fields given to ``emit``."""

    def __init__(self, type: str, source: Any, **fields: Any) -> None:  # noqa: A002 - napari's name
        self.type = type
        self.source = source
        self.__dict__.update(fields)

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> Any:
            """The keyword fields given to ``emit`` (``value`` and others), whatever the event carries."""

    def __repr__(self) -> str:
        fields = {k: v for k, v in self.__dict__.items() if k not in ("type", "source")}
        return f"Event({self.type!r}, {fields})"


class EventEmitter:
    """Callbacks of one named event."""

    def __init__(self, name: str, source: Any = None) -> None:
        self.name = name
        self.source = source
        self._callbacks: list[Callback] = []
        self._blocked = 0

    def connect(self, callback: Callback) -> Callback:
        """Call ``callback(event)`` on every emit (once, however often it is connected). Returns it, so this
        also works as a decorator."""
        if callback not in self._callbacks:
            self._callbacks.append(callback)
        return callback

    def disconnect(self, callback: Callback | None = None) -> None:
        """Forget ``callback`` (every callback when None); unknown callbacks are ignored."""
        if callback is None:
            self._callbacks.clear()
        elif callback in self._callbacks:
            self._callbacks.remove(callback)

    @property
    def callbacks(self) -> tuple[Callback, ...]:
        return tuple(self._callbacks)

    @contextmanager
    def blocker(self) -> Iterator[None]:
        """Emit nothing inside the ``with`` block."""
        self._blocked += 1
        try:
            yield
        finally:
            self._blocked -= 1

    def emit(self, **fields: Any) -> Event | None:
        """Tell every callback; returns the event (None when blocked)."""
        if self._blocked:
            return None
        event = Event(self.name, self.source, **fields)
        first_error: BaseException | None = None
        for cb in list(self._callbacks):
            try:
                cb(event)
            except Exception as exc:  # noqa: BLE001 - the other views still update; re-raised below
                log.exception("callback %r for event %r failed", cb, self.name)
                first_error = first_error or exc
        if first_error is not None:
            raise first_error
        return event


class EmitterGroup:
    """Named emitters as attributes: ``EmitterGroup(source, "cursor", "selection").cursor.connect(cb)``."""

    def __init__(self, source: Any, *names: str) -> None:
        self._emitters: dict[str, EventEmitter] = {}
        for name in names:
            self.add(name, source)

    def add(self, name: str, source: Any = None) -> EventEmitter:
        if name in self._emitters or name.startswith("_") or hasattr(type(self), name):
            raise ValueError(f"event name {name!r} is taken")
        em = EventEmitter(name, source)
        self._emitters[name] = em
        setattr(self, name, em)
        return em

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._emitters)

    def __getitem__(self, name: str) -> EventEmitter:
        return self._emitters[name]

    def __iter__(self) -> Iterator[EventEmitter]:
        return iter(self._emitters.values())

    @contextmanager
    def blocker_all(self) -> Iterator[None]:
        """Block every emitter of the group inside the ``with`` block."""
        for em in self._emitters.values():
            em._blocked += 1
        try:
            yield
        finally:
            for em in self._emitters.values():
                em._blocked -= 1
