"""Breakpoints: conditions on recorded episode data that pause playback (no Qt).

Why conditions on the recording rather than hooks in the simulator: the worker checks them after each simulated
step, the studio checks them while replaying a recording, and the CLI or a test can ask the same question of a
saved episode; all three read the same arrays (``decided``, ``fired``, ``reached``) and get the same answer.

A breakpoint is a *condition* (``kind``) about a *subject* and, for conditions that last, a *mode*:

* ``kind``: ``step`` (state N is reached), ``action`` (an agent decides Slow/Normal/Fast/Stop in a step),
  ``clause`` (a rule clause, by label like ``Stop#7`` or by id, is the one that fired for an agent's decision),
  ``goal`` (an agent is found on its goal), ``gridlock`` (agents wait on one another, core/sim/gridlock.py).
* subject: one agent (``agent``), any agent of a type (``type``: Car or Pedestrian), any agent with a concept
  (``concept``: police, old, …) or, with none of them, any agent.
* ``mode``: ``when`` is edge-triggered: it fires in the step in which the condition *becomes* true for a subject
  agent ("when Car_2 starts to Stop": it decided Stop in step k but not in step k-1; in the first step there is no
  earlier decision, so a Stop there counts as starting). ``while`` is level-triggered: it fires in every step in
  which the condition holds ("while Car_2 does Stop"). ``while`` is the default for ``action`` and ``clause``, so
  a project file without ``mode`` hits on every such step; a gridlock breakpoint defaults to ``when`` (a lock-up
  lasts hundreds of steps).

Conventions (as core/sim/events.py): step k is the transition from state k to state k+1; a hit during step k
shows state k, the state in which the decision was taken (a step breakpoint shows state N itself).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from core.base.codes import ACTION_INDEX, ACTION_NAMES, Kind
from core.base.world import KNOWN_CONCEPTS
from core.sim.gridlock import detector_for

KINDS = ("step", "action", "clause", "goal", "gridlock")
MODES = ("when", "while")
#: kinds whose condition lasts over steps, so ``mode`` means something
MODE_KINDS = ("action", "clause", "gridlock")
TYPES = tuple(k.label for k in Kind)          # ("Pedestrian", "Car")
#: every key a breakpoint mapping may hold (project.yaml, docs/projects.md)
KEYS = ("kind", "step", "agent", "type", "concept", "action", "clause", "mode", "enabled")


@dataclass(frozen=True)
class Hit:
    """A breakpoint fired at step ``step``; the studio shows state ``show``."""

    breakpoint: "Breakpoint"
    step: int
    show: int
    text: str


def default_mode(kind: str) -> str | None:
    if kind == "gridlock":
        return "when"
    return "while" if kind in MODE_KINDS else None


@dataclass(frozen=True)
class Breakpoint:
    """A condition that pauses playback (see the module docstring for the kinds, subjects and modes).

    Positional order ``(kind, step, agent, action, enabled)`` stays fixed for positional callers; the subject
    fields ``type``/``concept``, ``clause`` and ``mode`` come after. ``mode`` is normalised (None: the kind's default),
    so two breakpoints that mean the same compare equal.
    """

    kind: str
    step: int | None = None
    agent: str | None = None
    action: str | None = None
    enabled: bool = True
    type: str | None = None
    concept: str | None = None
    clause: int | str | None = None
    mode: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown breakpoint kind {self.kind!r} ({', '.join(KINDS)})")
        subjects = [k for k in ("agent", "type", "concept") if getattr(self, k) is not None]
        if len(subjects) > 1:
            raise ValueError(f"give one subject (agent, type or concept), not {' and '.join(subjects)}")
        if self.kind == "step":
            if isinstance(self.step, bool) or not isinstance(self.step, (int, np.integer)) or int(self.step) < 0:
                raise ValueError("a step breakpoint needs a step N >= 0")
            if subjects:
                raise ValueError(f"a step breakpoint takes no {subjects[0]}")
        elif self.step is not None:
            raise ValueError(f"a {self.kind} breakpoint takes no step")
        if self.type is not None and self.type not in TYPES:
            raise ValueError(f"type must be one of {', '.join(TYPES)}, got {self.type!r}")
        if self.concept is not None and self.concept not in KNOWN_CONCEPTS:
            raise ValueError(f"concept must be one of {', '.join(KNOWN_CONCEPTS)}, got {self.concept!r}")
        if self.kind == "action":
            if self.action not in ACTION_INDEX:
                raise ValueError(f"action must be one of {', '.join(ACTION_NAMES)}, got {self.action!r}")
        elif self.action is not None:
            raise ValueError(f"a {self.kind} breakpoint takes no action")
        if self.kind == "clause":
            c = self.clause
            if isinstance(c, bool) or not isinstance(c, (int, str)) or (isinstance(c, str) and not c.strip()) \
                    or (isinstance(c, int) and c < 0):
                raise ValueError(f"a clause breakpoint needs a clause label like Stop#7 or an id >= 0, got {c!r}")
        elif self.clause is not None:
            raise ValueError(f"a {self.kind} breakpoint takes no clause")
        if self.mode is None:
            object.__setattr__(self, "mode", default_mode(self.kind))
        elif self.kind not in MODE_KINDS:
            raise ValueError(f"a {self.kind} breakpoint takes no mode (only {', '.join(MODE_KINDS)} do)")
        elif self.mode not in MODES:
            raise ValueError(f"mode must be when or while, got {self.mode!r}")
        object.__setattr__(self, "enabled", bool(self.enabled))

    # ---- text -------------------------------------------------------------------------------------------------
    @property
    def subject(self) -> str:
        """``Car_2``, ``any Car``, ``any police agent`` or ``any agent``."""
        if self.agent is not None:
            return self.agent
        if self.type is not None:
            return f"any {self.type}"
        if self.concept is not None:
            return f"any {self.concept} agent"
        return "any agent"

    def describe(self) -> str:
        """The dock's entry: ``pause when Car_2 starts to Stop``."""
        who = self.subject
        if self.kind == "step":
            return f"pause at step {self.step}"
        if self.kind == "action":
            if self.mode == "when":
                return f"pause when {who} starts to {self.action}"
            return f"pause while {who} does {self.action}"
        if self.kind == "clause":
            if self.mode == "when":
                return f"pause when clause {self.clause} starts to fire for {who}"
            return f"pause while clause {self.clause} fires for {who}"
        if self.kind == "goal":
            return f"pause when {who} reaches its goal"
        if self.mode == "when":
            return "pause when a gridlock starts" if who == "any agent" else f"pause when {who} gets stuck in a gridlock"
        return "pause while there is a gridlock" if who == "any agent" else f"pause while {who} is stuck in a gridlock"

    def explain(self) -> str:
        """The full text for a tooltip: the condition, how it triggers, and whether it is active."""
        how = {"when": "edge-triggered: fires in the step in which it becomes true",
               "while": "level-triggered: fires in every step in which it holds"}.get(self.mode or "", "")
        parts = [self.describe()]
        if how:
            parts.append(f"({how})")
        if not self.enabled:
            parts.append("— disabled")
        return " ".join(parts)

    # ---- checking ---------------------------------------------------------------------------------------------
    def subjects(self, episode) -> np.ndarray:
        """Bool mask [N] of the agents this breakpoint is about (all False: a named agent not in the episode)."""
        agents = episode.agents
        names = tuple(agents.names)
        mask = np.zeros(len(names), bool)
        if self.agent is not None:
            if self.agent in names:
                mask[names.index(self.agent)] = True
        elif self.type is not None:
            mask = np.asarray(agents.kinds) == int(Kind.CAR if self.type == "Car" else Kind.PEDESTRIAN)
        elif self.concept is not None:
            mask = np.asarray(agents.concepts.get(self.concept, mask), bool).copy()
        else:
            mask[:] = True
        return mask

    def check(self, episode, k: int) -> Hit | None:
        """Did this breakpoint fire during step ``k`` (recorded in ``episode``; state k+1 is recorded)?"""
        if not self.enabled:
            return None
        if self.kind == "step":
            return Hit(self, k, k + 1, self.describe()) if k + 1 == self.step else None
        mask = self.subjects(episode)
        if not mask.any():
            return None
        names = tuple(episode.agents.names)
        if self.kind == "gridlock":
            return self._check_gridlock(episode, k, mask, names)
        if self.kind == "goal":
            who = np.nonzero(np.asarray(episode.array("reached")[k], bool) & mask)[0]
            return Hit(self, k, k, f"{names[who[0]]} reached its goal at step {k}") if len(who) else None
        now = self._holds(episode, k, mask)
        if self.mode == "when" and k > 0:
            now &= ~self._holds(episode, k - 1, mask)
        who = np.nonzero(now)[0]
        if not len(who):
            return None
        name = names[who[0]]
        more = f" (and {len(who) - 1} more)" if len(who) > 1 else ""
        if self.kind == "action":
            verb = "starts to" if self.mode == "when" else "does"
            return Hit(self, k, k, f"{name}{more} {verb} {self.action} at step {k}")
        verb = "starts to fire" if self.mode == "when" else "fires"
        return Hit(self, k, k, f"clause {self.clause} {verb} for {name}{more} at step {k}")

    def _holds(self, episode, k: int, mask: np.ndarray) -> np.ndarray:
        if self.kind == "action":
            return (np.asarray(episode.array("decided")[k], np.int64) == ACTION_INDEX[str(self.action)]) & mask
        ids = clause_ids(self.clause, (getattr(episode, "meta", None) or {}).get("clauses"))
        fired = np.asarray(episode.array("fired")[k], np.int64)
        hit = np.zeros_like(mask)
        for c in ids:                   # one id, or the few sharing a label: cheaper than np.isin
            hit |= fired == c
        return hit & mask

    def _check_gridlock(self, episode, k: int, mask: np.ndarray, names: Sequence[str]) -> Hit | None:
        det = detector_for(episode)
        if k < det.scanned and k == episode.num_steps - 1:
            # the newest step was scanned before: the recording may have been cut and step k recorded again (a
            # branch; the worker's buffer is cut without telling anyone), so read it again (cheap, always right)
            det.rewind(episode, k)
        if det.scanned < k + 1:
            det.update(episode, k + 1)   # replaying older steps: what is scanned already stays valid

        def stuck(state: int) -> set[int]:
            return {a for g in det.active_at(state) for a in g.agents_at(state) if 0 <= a < len(mask) and mask[a]}

        now = stuck(k)
        if self.mode == "when":
            # a new gridlock detected now, or a subject agent that was not stuck one state earlier
            new = {a for g in det.gridlocks if g.step == k for a in g.agents_at(k) if 0 <= a < len(mask) and mask[a]}
            now = new | (now - stuck(k - 1) if k > 0 else now)
        if not now:
            return None
        who = ", ".join(names[a] for a in sorted(now)[:4]) + (", …" if len(now) > 4 else "")
        return Hit(self, k, k, f"gridlock at step {k}: {who} stuck")

    # ---- project.yaml -----------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The project.yaml mapping; ``mode`` only when it is not the kind's default (a file without modes reads back equal)."""
        d: dict[str, Any] = {"kind": self.kind}
        for key in ("step", "agent", "type", "concept", "action", "clause"):
            value = getattr(self, key)
            if value is not None:
                d[key] = int(value) if key == "step" else value
        if self.mode != default_mode(self.kind):
            d["mode"] = self.mode
        if not self.enabled:
            d["enabled"] = False
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Breakpoint":
        unknown = set(d) - set(KEYS)
        if unknown:
            raise ValueError(f"unknown breakpoint keys: {', '.join(sorted(map(str, unknown)))} "
                             f"(known: {', '.join(KEYS)})")
        enabled = d.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ValueError(f"enabled must be true or false, got {enabled!r}")
        return cls(str(d.get("kind")), d.get("step"), d.get("agent"), d.get("action"), enabled,
                   d.get("type"), d.get("concept"), d.get("clause"), d.get("mode"))


def clause_ids(clause: int | str | None, clauses: Sequence[Mapping[str, Any]] | None) -> set[int]:
    """The clause ids a breakpoint's ``clause`` names in an episode's ``meta.clauses``: an int is an id; a text is
    a label (``Stop#7``) or an id written as text. Unknown: empty (the breakpoint cannot fire in this episode)."""
    if clause is None:
        return set()
    if isinstance(clause, int):
        return {clause}
    text = clause.strip()
    out = {int(c["id"]) for c in clauses or () if str(c.get("label", "")) == text and "id" in c}
    if not out and text.isdigit():
        out = {int(text)}
    return out


def check_breakpoints(breakpoints: Iterable[Breakpoint], episode, k: int,
                      resume_from: int | None = None) -> Hit | None:
    """The first breakpoint that fires during step ``k``, or None.

    ``resume_from``: the state playback resumes from. A hit that would show that very state again is skipped
    (what debuggers do: the breakpoint at the current position does not fire on resume). Action and goal
    breakpoints show the state in which step k began, so without this Play after such a hit would stop at the
    same state forever; they fire again on every later step.
    """
    for bp in breakpoints:
        hit = bp.check(episode, k)
        if hit is not None and not (resume_from is not None and hit.show == resume_from):
            return hit
    return None
