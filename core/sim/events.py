"""Timeline markers (and, re-exported from core/sim/breakpoints.py, breakpoints), computed from recorded episode data (no Qt).

Why plain functions over an :class:`~core.sim.episode.EpisodeView`: the studio's timeline, the CLI and tests all
need "where did something happen" and "should playback stop here"; both are pure questions about recorded
arrays. Extraction works on a step range so a growing live episode is scanned incrementally.

Conventions: an :class:`Event` at ``step`` k refers to *step* k (the transition from state k to state k+1), whose
record holds the decided action and whether an agent was found on its goal; the timeline shows it at state k.

More marker kinds can be added with :func:`register_event_kind`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from core.base.codes import ACTION_INDEX, ACTION_NAMES
from core.sim.breakpoints import Breakpoint, Hit, check_breakpoints  # noqa: F401  (re-exported: older imports)
from core.sim.episode import FIRED_FORCED
from core.sim.gridlock import detector_for, summary

# ---- events / markers ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """Something that happened during step ``step`` (agent -1: not about one agent)."""

    step: int
    kind: str
    agent: int
    text: str


@dataclass(frozen=True)
class EventKind:
    """A marker kind: ``extract(episode, start, stop, ctx) -> events`` for steps ``start <= k < stop``.

    ``ctx`` carries the studio's context (``selected``: the selected agent index or None). ``colour`` is the
    marker colour (r, g, b); ``per_agent`` kinds follow the selection (they are recomputed when it changes).
    """

    name: str
    label: str
    colour: tuple[int, int, int]
    extract: Callable[[Any, int, int, Mapping[str, Any]], list[Event]]
    per_agent: bool = False


def _names(episode) -> tuple[str, ...]:
    return tuple(episode.agents.names)


def _goal_reached(episode, start: int, stop: int, ctx: Mapping[str, Any]) -> list[Event]:
    if stop <= start:
        return []
    reached = np.asarray(episode.array("reached")[start:stop])
    names = _names(episode)
    ks, agents = np.nonzero(reached)
    return [Event(int(start + k), "goal_reached", int(a), f"{names[a]} reached its goal")
            for k, a in zip(ks, agents)]


def _action_changed(episode, start: int, stop: int, ctx: Mapping[str, Any]) -> list[Event]:
    """The selected agent's decided action differs from the previous step's (first step never counts)."""
    agent = ctx.get("selected")
    if agent is None or stop <= start:
        return []
    lo = max(start - 1, 0)
    dec = np.asarray(episode.array("decided")[lo:stop, agent], np.int64)
    name = _names(episode)[agent]
    out = []
    for j in range(1, len(dec)):
        if dec[j] != dec[j - 1]:
            k = lo + j
            out.append(Event(k, "action_changed", int(agent),
                             f"{name}: {ACTION_NAMES[dec[j - 1]]} → {ACTION_NAMES[dec[j]]}"))
    return out


def _stops(episode, start: int, stop: int, ctx: Mapping[str, Any]) -> list[Event]:
    """Steps where the selected agent was told to Stop by a rule (not a goal wait)."""
    agent = ctx.get("selected")
    if agent is None or stop <= start:
        return []
    dec = np.asarray(episode.array("decided")[start:stop, agent], np.int64)
    fired = np.asarray(episode.array("fired")[start:stop, agent], np.int64)
    name = _names(episode)[agent]
    ks = np.nonzero((dec == ACTION_INDEX["Stop"]) & (fired >= 0))[0]
    return [Event(int(start + k), "stop", int(agent), f"{name} stops") for k in ks]


def _gridlocks(episode, start: int, stop: int, ctx: Mapping[str, Any]) -> list[Event]:
    """Gridlocks detected during steps start..stop-1 (core/sim/gridlock.py; K = its DEFAULT_STILL_STEPS). The
    episode's shared detector continues where it stopped; asked for earlier steps (a branch cut the recording),
    it goes back to its nearest checkpoint first."""
    if stop <= start:
        return []
    det = detector_for(episode)
    if start < det.scanned:
        det.rewind(episode, start)
    det.update(episode, stop)
    names = _names(episode)
    clauses = (getattr(episode, "meta", None) or {}).get("clauses")
    return [Event(g.step, "gridlock", -1, summary(g, names, clauses, state=g.step))
            for g in det.gridlocks if start <= g.step < stop]


def _forced(episode, start: int, stop: int, ctx: Mapping[str, Any]) -> list[Event]:
    """Steps where an agent's action was forced by an override (recorded fired clause = FIRED_FORCED), not
    derived by the rules: one marker per forced agent and step."""
    if stop <= start:
        return []
    fired = np.asarray(episode.array("fired")[start:stop])
    dec = np.asarray(episode.array("decided")[start:stop])
    names = _names(episode)
    ks, agents = np.nonzero(fired == FIRED_FORCED)
    return [Event(int(start + k), "forced", int(a), f"{names[a]}: {ACTION_NAMES[int(dec[k, a])]} forced by the user")
            for k, a in zip(ks, agents)]


_KINDS: dict[str, EventKind] = {}


def register_event_kind(kind: EventKind) -> None:
    """Add (or replace) a marker kind; the timeline shows every registered kind."""
    _KINDS[kind.name] = kind


def event_kinds() -> dict[str, EventKind]:
    return dict(_KINDS)


register_event_kind(EventKind("goal_reached", "Goal reached", (40, 170, 80), _goal_reached))
register_event_kind(EventKind("action_changed", "Selected agent's action changed", (250, 150, 20),
                              _action_changed, per_agent=True))
register_event_kind(EventKind("stop", "Selected agent stops (rule)", (220, 30, 40), _stops, per_agent=True))
register_event_kind(EventKind("gridlock", "Gridlock (agents waiting on one another)", (150, 40, 200), _gridlocks))
#: The colour of a forced action's marker, also its dashed diamond on the map (widgets/map_view.py); lime, apart
#: from the selection (yellow), the witness (cyan) and a gridlock (magenta).
FORCED_MARK_COLOUR = (160, 240, 0)
register_event_kind(EventKind("forced", "Forced action", FORCED_MARK_COLOUR, _forced))


def extract_events(episode, start: int = 0, stop: int | None = None, *, selected: int | None = None,
                   kinds: Iterable[str] | None = None) -> list[Event]:
    """All events of the chosen kinds (default: all registered) in steps ``start <= k < stop``, by step."""
    stop = episode.num_steps if stop is None else min(stop, episode.num_steps)
    ctx = {"selected": selected}
    out: list[Event] = []
    for name in (kinds if kinds is not None else list(_KINDS)):
        out.extend(_KINDS[name].extract(episode, max(start, 0), stop, ctx))
    out.sort(key=lambda e: (e.step, e.kind, e.agent))
    return out


@dataclass
class MarkerIndex:
    """Incrementally maintained markers of a growing episode (the timeline's model).

    ``update(episode)`` scans only the steps recorded since the last call; ``set_selected`` recomputes the
    per-agent kinds. ``truncate(n)`` drops events of steps >= n (branching).
    """

    selected: int | None = None
    events: list[Event] = field(default_factory=list)
    scanned: int = 0

    def update(self, episode) -> list[Event]:
        new = extract_events(episode, self.scanned, episode.num_steps, selected=self.selected)
        self.events.extend(new)
        self.scanned = episode.num_steps
        return new

    def set_selected(self, episode, selected: int | None) -> None:
        self.selected = selected
        keep = [e for e in self.events if e.kind in _KINDS and not _KINDS[e.kind].per_agent]
        per = [n for n, k in _KINDS.items() if k.per_agent]
        keep.extend(extract_events(episode, 0, self.scanned, selected=selected, kinds=per))
        keep.sort(key=lambda e: (e.step, e.kind, e.agent))
        self.events = keep

    def truncate(self, num_steps: int) -> None:
        self.events = [e for e in self.events if e.step < num_steps]
        self.scanned = min(self.scanned, num_steps)

    def reset(self) -> None:
        self.events = []
        self.scanned = 0

    def next_event(self, k: int) -> int | None:
        """First event step > k (jump to next marker)."""
        steps = [e.step for e in self.events if e.step > k]
        return min(steps) if steps else None

    def previous_event(self, k: int) -> int | None:
        steps = [e.step for e in self.events if e.step < k]
        return max(steps) if steps else None

