"""The city editor's state in the session and its undoable commands (no Qt).

Where the city lives: ``session.project.config.city`` (what the simulation, saving and the views read). The editor
keeps a raster :class:`~core.map.edit.CityDraft` of it and a :class:`~core.map.derived.CityBuilder` per session
(:func:`draft_of`); when the project's city is replaced from elsewhere (a project opened, an undo of a New city) the
draft is made again from it, so the two never disagree.

Commands (``session.execute``):

* :class:`CityEdit` — one tool stroke (a paint stroke, a rectangle, a block moved): a :class:`~core.map.edit.Patch`
  of the cells it changed. Pieces of one stroke (``stroke`` id) merge into one undo step, so a stroke is pushed
  either once on release or piece by piece while dragging — it undoes as one.
* :class:`ReplaceCity` — a New city from the generator, a canvas resize: keeps the city it replaced.

An edited city forgets the file it was read from (``config.files["map"]``), so the next save writes the edited
city instead of copying the old file; undo puts the file (and the original city object) back, so undoing to the
saved state saves byte-identical files again. Undo restores an equal city (tests/core/studio/test_city_edit.py).

The recording: the episode shown was simulated on the city before the edits. Editing is allowed at any time (as
in netedit, where the network is edited apart from a simulation run); the recording stays as it was made, and
the provenance hashes (core/sim/provenance.py) tell the studio that the city changed, so *Apply* re-simulates it
from step 0 or branches (core/studio/apply.py).
"""
from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.map.checks import city_findings
from core.map.derived import CityBuilder
from core.map.edit import CityDraft, Patch
from core.map.model import CityMap
from core.studio.problems import Problem, register_checker
from core.studio.stack import Command

__all__ = ["draft_of", "CityEdit", "ReplaceCity", "new_stroke_id", "city_state", "check_city", "MERGE_CITY_STROKE",
           "preview", "revert_preview"]

#: merge id of city strokes (commands merge only with the same id and the same stroke)
MERGE_CITY_STROKE = 11

_stroke_ids = itertools.count(1)


def new_stroke_id() -> int:
    return next(_stroke_ids)


@dataclass
class _Editing:
    city: CityMap          # the city object the draft describes
    draft: CityDraft
    builder: CityBuilder


_editing: "weakref.WeakKeyDictionary[Any, _Editing]" = weakref.WeakKeyDictionary()
#: cities built by the editor (not loaded from a file): undo rebuilds those instead of keeping them
_built: "weakref.WeakSet[CityMap]" = weakref.WeakSet()


def _config(session: Any) -> Any:
    if session.project is None:
        raise ValueError("no project is open")
    return session.project.config


def editing(session: Any) -> _Editing:
    """The draft and builder of the session's current city (made again when the city was replaced elsewhere)."""
    city = _config(session).city
    ed = _editing.get(session)
    if ed is None or ed.city is not city:
        builder = CityBuilder()
        draft = CityDraft.from_city(city)
        ed = _Editing(city, draft, builder)
        _editing[session] = ed
    return ed


def draft_of(session: Any) -> CityDraft:
    return editing(session).draft


def _set_city(session: Any, city: CityMap, draft: CityDraft | None = None) -> None:
    cfg = _config(session)
    cfg.city = city
    ed = _editing.get(session)
    if draft is not None and ed is not None:
        ed.city, ed.draft = city, draft
    elif ed is not None and ed.city is not city:
        _editing.pop(session, None)


def _rebuild(session: Any) -> CityMap:
    ed = editing(session)
    city = ed.builder.build(ed.draft)
    _built.add(city)
    _set_city(session, city, ed.draft)
    return city


def preview(session: Any, patch: Patch) -> None:
    """Put a piece of a stroke into the draft while the mouse is still down (the view paints the cells at once);
    the stroke's :class:`CityEdit` follows on release. The project's city is unchanged until then."""
    editing(session).draft.apply(patch)


def revert_preview(session: Any, patch: Patch) -> None:
    """Take back a previewed stroke (Escape while dragging)."""
    editing(session).draft.apply(patch, undo=True)


class _CityChange(Command):
    """Remembers what the first ``do`` replaced: the map file entry, and the city object when it came from a file."""

    def __init__(self) -> None:
        self._saved = False
        self.old_city: CityMap | None = None
        self.old_file: str | None = None
        self.had_file = False

    def _remember(self, session: Any) -> None:
        if self._saved:
            return
        cfg = _config(session)
        files = cfg.files if cfg.files is not None else {}
        self.had_file = "map" in files
        self.old_file = files.get("map")
        self.old_city = cfg.city if cfg.city not in _built else None
        self._saved = True

    def _forget_file(self, session: Any) -> None:
        cfg = _config(session)
        if cfg.files:
            cfg.files.pop("map", None)

    def _restore_file(self, session: Any) -> None:
        cfg = _config(session)
        if self.had_file:
            if cfg.files is None:
                cfg.files = {}
            cfg.files["map"] = self.old_file


class CityEdit(_CityChange):
    """One stroke of a city tool (see the module docstring)."""

    id = MERGE_CITY_STROKE

    def __init__(self, patch: Patch, text: str = "Edit city", stroke: int | None = None) -> None:
        super().__init__()
        self.patch = patch
        self.text = text
        self.stroke = stroke
        self.old_generator: dict | None = None

    def do(self, target: Any) -> None:
        self._remember(target)
        ed = editing(target)
        if self.old_generator is None and ed.draft.generator:
            self.old_generator = dict(ed.draft.generator)
        ed.draft.apply(self.patch)
        ed.draft.generator = None          # an edited city is no longer what the generator made
        self._forget_file(target)
        _rebuild(target)

    def undo(self, target: Any) -> None:
        ed = editing(target)
        ed.draft.apply(self.patch, undo=True)
        if self.old_generator is not None:
            ed.draft.generator = dict(self.old_generator)
        if self.old_city is not None:      # back to the city read from a file: the very same object (the draft,
            _set_city(target, self.old_city, ed.draft)   # now equal to its cells, and the builder's cache stay)
            self._restore_file(target)
        else:
            self._restore_file(target)
            _rebuild(target)

    def merge_with(self, other: Command) -> bool:
        if not isinstance(other, CityEdit) or self.stroke is None or other.stroke != self.stroke:
            return False
        self.patch = self.patch.merged(other.patch)
        return True


class ReplaceCity(_CityChange):
    """Replace the whole city (New city, Resize canvas); undo puts the previous one back."""

    def __init__(self, city: CityMap, text: str = "New city") -> None:
        super().__init__()
        self.new = city
        self.prev: CityMap | None = None
        self.text = text

    def do(self, target: Any) -> None:
        self._remember(target)
        if self.prev is None:
            self.prev = _config(target).city
        self._forget_file(target)
        _set_city(target, self.new)

    def undo(self, target: Any) -> None:
        assert self.prev is not None
        _set_city(target, self.prev)
        self._restore_file(target)


def city_state(session: Any) -> dict[str, Any]:
    """The city as plain comparable values (what undo must restore): size, name, specification, derived layers."""
    city = _config(session).city
    return {"shape": city.shape, "name": city.name, "streets": city.streets, "buildings": city.buildings,
            "layers": tuple(np.asarray(getattr(city, k)).tobytes() for k in
                            ("street", "building", "block", "midline", "intersections")),
            "map_file": (_config(session).files or {}).get("map")}


# ---- validation ------------------------------------------------------------------------------------------------
_checked: "weakref.WeakKeyDictionary[CityMap, tuple[frozenset, list[Problem]]]" = weakref.WeakKeyDictionary()


def check_city(session: Any) -> list[Problem]:
    """The Problems checker of the city (core/map/checks.py), cached per city object and agent types (the start
    cell check depends on which types the agents have: an agent edit must re-check it)."""
    if session.project is None:
        return []
    city = session.project.config.city
    agents = session.project.config.agents
    kinds = frozenset(int(a.kind) for a in agents)
    cached = _checked.get(city)
    if cached is None or cached[0] != kinds:
        found = [Problem(f.severity, f.message, "city", cells=f.cells, code=f.code)
                 for f in city_findings(city, agents=agents)]
        cached = (kinds, found)
        _checked[city] = cached
    return list(cached[1])


register_checker("city", check_city, replace=True)
