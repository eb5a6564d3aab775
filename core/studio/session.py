"""The studio's session model (no Qt): the open project, its recorded timeline, cursor, selection, view options,
breakpoints, forced actions and the modified flag, with change events the views subscribe to.

Why: state kept inside the main window would make every editor or panel reach into a widget. Here it is one
plain object (napari's ``ViewerModel`` is the pattern): the Qt views and controllers read it and listen to
``session.events.<name>``; a script or a test drives the same object without a QApplication.

Who changes what:

* *User edits that belong to the project* (breakpoints, forced actions, the colour-by scheme) go through
  :meth:`Session.execute` with a command from :mod:`core.studio.commands`, so they can be undone and count as
  unsaved changes until undone back to the saved state. Commands call the ``apply_*`` methods.
* *Navigation* (cursor, selection) and *view options* that are not saved with the project (planned paths, follow,
  icon art, overlays) are set directly; undoing a scrub would only get in the way.
* *The recording* grows from the simulation (:meth:`record`) and is cut by a branch (:meth:`truncate`); these
  are unsaved changes but not undoable (the simulation cannot run backwards). An *Apply* of the editors, which
  replaces the recording, is a command (core/studio/apply_command.py): its undo puts the earlier recording back
  whole (:meth:`Session.recording`, :meth:`Session.restore_recording`).

Events (``session.events.<name>``, each callback gets an :class:`~core.studio.events.Event`):
``project`` (a project was opened), ``history`` (a new recording: reset, load), ``recorded`` (value = steps now,
``events`` = new timeline markers), ``truncated`` (value = steps kept), ``cursor`` (value = state shown),
``selection`` (value = agent index or None), ``markers`` (the marker list was rebuilt), ``view`` (value =
:class:`ViewOptions`, ``changed`` = names), ``breakpoints`` (value = tuple), ``interventions`` (value = tuple),
``modified`` (value = bool), ``saved`` (value = the manifest written), ``message`` (value = text, ``level`` =
"info" | "warning"): a report for the status line and the log, never a dialog; ``restored`` (value = the recording
put back by an undo/redo of Apply, :meth:`Session.restore_recording`: the simulation must continue that one).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from core.base.errors import LogiCityError
from core.project.load import EpisodeAgentsError, is_project, load_project, open_episode
from core.project.model import Project, new_project
from core.project.save import save_project
from core.sim.config import load_mode
from core.sim.episode import EpisodeBuffer, EpisodeView
from core.sim.events import Breakpoint, MarkerIndex
from core.sim.events import Event as MarkerEvent
from core.sim.frames import StepFrame, apply_frame, copy_episode
from core.studio.episode_file import is_episode_file, load_episode_file
from core.studio.events import EmitterGroup, EventEmitter
from core.studio.stack import Command, CommandStack
from core.view.colouring import DEFAULT_SCHEME, colour_schemes, scheme_problem

log = logging.getLogger(__name__)

PATH_MODES = ("all", "selected", "none")


@dataclass(frozen=True)
class ViewOptions:
    """How the map is drawn. Only ``colour_by`` is saved with the project (and edited by a command); the others
    are the user's preferences (the studio remembers ``paths`` in its settings)."""

    colour_by: str = DEFAULT_SCHEME
    paths: str = "all"               # planned paths: "all", "selected" (the selected agent only), "none"
    follow: bool = False             # keep the selected agent centred
    icons: bool = False              # draw agents as icon art instead of glyphs
    intersections: bool = False      # the intersection lines and boxes overlay
    goals: bool = True               # every agent's goal
    fov: bool = True                 # the selected agent's field of view
    labels: bool = False             # agent names on the map (decluttered; app/features/inspect/agents.py)


def load_target(path: str | Path) -> tuple[Project, EpisodeView | None]:
    """What File ▸ Open reads: a project folder (or its project.yaml) with its current episode, a mode file as a
    new unsaved project, or an episode file (.npz) with the project embedded in it (shown read-only: see
    core/studio/episode_file.py). Raises :class:`~core.base.errors.LogiCityError` naming the file and the problem."""
    p = Path(path)
    if is_project(p):
        project = load_project(p)
        try:
            return project, open_episode(project)
        except EpisodeAgentsError as exc:   # agents edited and saved before Apply: open the edits, keep the file
            note = (f"The recording {Path(exc.location() or '').name} was made with other agents than the saved "
                    f"ones (edited before Apply); it stays in the project folder and the agents are simulated anew")
            log.warning("%s: %s", exc.location(), exc.message)
            project.current_episode = None
            project.notes = [note]     # shown by app/features/agent_editor/controller.py
            return project, None
    if is_episode_file(p):
        return load_episode_file(p)
    if p.is_file() and p.suffix in (".yaml", ".yml"):
        return new_project(load_mode(p)), None
    if not p.exists():
        raise LogiCityError("file or folder not found", p)
    raise LogiCityError("not a project (no project.yaml), a mode file (.yaml) or an episode file (.npz)", p)


@dataclass(frozen=True)
class Recording:
    """What :meth:`Session.recording` takes and :meth:`Session.restore_recording` puts back: the recording shown
    (``history``, the object itself), ``cursor``, ``selected``, the forced actions, the recordings ``kept`` for the
    next save and ``changed`` (the recording was an unsaved change)."""

    history: EpisodeBuffer | None
    cursor: int
    selected: int | None
    interventions: tuple
    kept: tuple
    changed: bool


class SessionEvents(EmitterGroup):
    """The events of a :class:`Session` (one emitter per annotated name; the module docstring says what each
    carries)."""

    project: EventEmitter
    history: EventEmitter
    recorded: EventEmitter
    truncated: EventEmitter
    cursor: EventEmitter
    selection: EventEmitter
    markers: EventEmitter
    view: EventEmitter
    breakpoints: EventEmitter
    interventions: EventEmitter
    modified: EventEmitter
    saved: EventEmitter
    message: EventEmitter
    agents: EventEmitter     # an agent set was edited (value = its tab; core/studio/agent_sets.py)
    restored: EventEmitter   # undo/redo of Apply put a recording back (core/studio/apply_command.py)

    def __init__(self, source: Any) -> None:
        super().__init__(source, *SessionEvents.__annotations__)


class Session:
    """See the module docstring. GUI-thread only (like any model its views read without locks)."""

    def __init__(self) -> None:
        self.events = SessionEvents(self)
        self.project: Project | None = None
        self.history: EpisodeBuffer | None = None
        self.cursor = 0
        self.selected: int | None = None
        self.view = ViewOptions()
        self.breakpoints: tuple[Breakpoint, ...] = ()
        self.interventions: tuple[dict, ...] = ()
        self.markers = MarkerIndex()
        #: every report sent through the ``message`` event, oldest first (bad breakpoints, ignored settings)
        self.reports: list[str] = []
        self.stack = CommandStack(self)
        self.stack.events.clean.connect(lambda e: self._sync_modified())
        self.stack.events.refused.connect(lambda e: self.report(e.value, "warning"))
        self._other_changes = False      # unsaved changes outside the stack: recorded steps, seed, branch
        self._modified_seen = False      # the value the last ``modified`` event announced
        self._want_selected: str | None = None   # agent to select once a new recording starts
        #: the episode file shown as a read-only replay (it cannot be simulated further; Save As makes a project)
        self.read_only: Path | None = None
        #: recordings a branch replaced on screen, (name, episode): the next save writes them into the project as
        #: further episodes (core/project/save.py ``kept``), so a branch that starts a new recording loses nothing
        self.kept: list[tuple[str, EpisodeView]] = []

    # ---- queries ----------------------------------------------------------------------------------------------
    @property
    def num_steps(self) -> int:
        return self.history.num_steps if self.history is not None else 0

    @property
    def agent_names(self) -> tuple[str, ...]:
        return tuple(self.history.agents.names) if self.history is not None else ()

    @property
    def concepts(self) -> list[str] | None:
        """The agents' concepts (they add colour-by schemes), None before anything is loaded."""
        if self.history is not None:
            return list(self.history.agents.concepts)
        if self.project is not None:
            return list(self.project.config.agents.table().concepts)
        return None

    @property
    def modified(self) -> bool:
        """Unsaved changes: recorded steps, seed or branch, or commands since the save (undoing back to the saved
        state counts as unchanged)."""
        return self._other_changes or not self.stack.is_clean()

    def state(self) -> dict[str, Any]:
        """Everything a command may change, as plain comparable values (undo must restore an equal one)."""
        return {"breakpoints": self.breakpoints, "interventions": tuple(tuple(sorted(e.items()))
                                                                       for e in self.interventions),
                "view": self.view, "cursor": self.cursor, "selected": self.selected,
                "meta_interventions": (None if self.history is None else
                                       self.history.meta.get("interventions"))}

    # ---- messages -----------------------------------------------------------------------------------------------
    def report(self, text: str, level: str = "info") -> None:
        """A message for the status line and the log (never a dialog)."""
        self.reports.append(text)
        (log.warning if level == "warning" else log.info)(text)
        self.events.message.emit(value=text, level=level)

    # ---- opening ----------------------------------------------------------------------------------------------
    def open(self, project: Project, episode: EpisodeView | None = None,
             read_only: str | Path | None = None) -> list[str]:
        """Show ``project`` (and a recorded ``episode`` of it): the saved view state (colour-by, step, selection,
        breakpoints) is restored; forgets the undo history. ``read_only`` names the episode file when the episode
        is shown as a read-only replay. Returns the problems found in the saved view state (each also reported
        through the ``message`` event); what is wrong is left out, never silently."""
        self.read_only = Path(read_only) if read_only is not None and episode is not None else None
        concepts = list(project.config.agents.table().concepts)
        studio = dict(project.studio or {})
        problems: list[str] = []
        self.project = project
        colour = studio.get("colour_by")
        view = self.view
        if colour is not None and self._scheme_ok("the project", colour, concepts):
            view = replace(view, colour_by=colour)
        elif scheme_problem(view.colour_by, concepts) is not None:
            self._scheme_ok("the remembered settings", view.colour_by, concepts)
            view = replace(view, colour_by=DEFAULT_SCHEME)
        bps = self._breakpoints_from(studio.get("breakpoints"), tuple(project.config.agents.table().names),
                                     problems)
        self._other_changes = False
        self.kept = []
        self.stack.clear()
        self.markers.reset()
        self.selected = None
        self.view = view
        self.apply_breakpoints(bps)
        want_sel, want_step = studio.get("selected"), studio.get("step")
        if episode is not None:
            self.history = copy_episode(episode)
            self.interventions = tuple(dict(e) for e in self.history.meta.get("interventions", []) or [])
            names = list(self.history.agents.names)
            self.selected = names.index(want_sel) if want_sel in names else None
            self.markers.selected = self.selected
            self.markers.update(self.history)
            self.cursor = (want_step if isinstance(want_step, int) and 0 <= want_step <= self.num_steps
                           else self.num_steps)
            self._want_selected = None
        else:
            self.history = None
            self.interventions = ()
            self.cursor = 0
            self._want_selected = want_sel if isinstance(want_sel, str) else None
        self.events.project.emit(value=project)
        self.events.view.emit(value=self.view, changed=("colour_by",))
        self.events.interventions.emit(value=self.interventions)
        self.events.history.emit(value=self.history)
        self.events.selection.emit(value=self.selected)
        self.events.cursor.emit(value=self.cursor)
        self._sync_modified()
        return problems

    def _breakpoints_from(self, items: Any, names: tuple[str, ...], problems: list[str]) -> list[Breakpoint]:
        out: list[Breakpoint] = []
        if items is None:
            return out
        if not isinstance(items, list):
            items = [items]
        for i, d in enumerate(items):
            try:
                if not isinstance(d, Mapping):
                    raise ValueError(f"expected a mapping like {{kind: step, step: 10}}, got {d!r}")
                bp = Breakpoint.from_dict(d)
                if bp.agent is not None and bp.agent not in names:
                    raise ValueError(f"no agent {bp.agent!r} in this city")
            except (ValueError, TypeError) as exc:
                problems.append(f"breakpoint #{i + 1}: {exc}")
                continue
            if bp not in out:
                out.append(bp)
        for p in problems:
            self.report(f"Left out a breakpoint of the project: {p}", "warning")
        return out

    # ---- the recording ----------------------------------------------------------------------------------------
    def set_history(self, history: EpisodeBuffer, select: str | None = None) -> None:
        """A new recording (the simulation was reset): the current forced actions go into its meta; the agent
        named ``select`` (or the one a just-opened project saved, or the current index if it still exists) is
        selected; the cursor shows state 0."""
        want = select if select is not None else self._want_selected
        self._want_selected = None
        self.history = history
        if self.interventions:
            history.meta["interventions"] = [dict(e) for e in self.interventions]
        names = list(history.agents.names)
        if want in names:
            self.selected = names.index(want)
        elif self.selected is not None and self.selected >= len(names):
            self.selected = None
        self.markers.reset()
        self.markers.selected = self.selected
        self.markers.update(history)
        self.cursor = 0
        self.events.history.emit(value=history)
        self.events.selection.emit(value=self.selected)
        self.events.cursor.emit(value=0)

    def record(self, frames: Iterable[StepFrame]) -> list[MarkerEvent]:
        """Append simulated states to the recording; returns the new timeline markers. An unsaved change."""
        if self.history is None:
            raise ValueError("no recording to append to")
        for frame in frames:
            apply_frame(self.history, frame)
        new = self.markers.update(self.history)
        self.mark_modified()
        self.events.recorded.emit(value=self.num_steps, events=new)
        return new

    def truncate(self, k: int) -> int:
        """Branch: keep states 0..k (clamped), discard the rest and the forced actions from step k on."""
        if self.history is None:
            return 0
        k = int(min(max(k, 0), self.num_steps))
        self.history.truncate(k)
        self.markers.truncate(k)
        self.apply_interventions(tuple(e for e in self.interventions if e["step"] < k))
        self.mark_modified()
        self.events.truncated.emit(value=k)
        if self.cursor > k:
            self.set_cursor(k)
        return k

    def keep_recording(self, why: str) -> str | None:
        """Keep the shown recording for the next save (a branch is about to replace it with a new one); returns
        the name it will be saved under ("main before branch at step 8"), None when there is nothing to keep."""
        if self.history is None or self.project is None or self.read_only is not None:
            return None
        current = self.project.current_episode
        base = self.project.episodes[current].name if current is not None else "main"
        name = f"{base} {why}"
        self.kept.append((name, self.history))
        self.mark_modified()
        return name

    def recording(self) -> "Recording":
        """The shown recording and what goes with it, as :meth:`restore_recording` puts it back (undo of Apply)."""
        return Recording(self.history, self.cursor, self.selected, self.interventions, tuple(self.kept),
                         self._other_changes)

    def restore_recording(self, rec: "Recording") -> None:
        """Show ``rec`` again (the recording object itself, not a copy): its cursor, selection, forced actions,
        the recordings kept for the next save and whether it was an unsaved change. Emits ``history``,
        ``selection``, ``cursor`` and ``restored`` (``left``: the recording shown before; the playback continues
        the simulation of the restored one)."""
        left = self.history
        self.history = rec.history
        self.kept = list(rec.kept)
        self._want_selected = None
        self.selected = rec.selected
        self.markers.reset()
        self.markers.selected = self.selected
        if rec.history is not None:
            self.markers.update(rec.history)
        self.apply_interventions(rec.interventions)   # also back into the recording's meta
        self.cursor = min(rec.cursor, self.num_steps)
        self._other_changes = rec.changed
        self.events.history.emit(value=self.history)
        self.events.selection.emit(value=self.selected)
        self.events.cursor.emit(value=self.cursor)
        self._sync_modified()
        self.events.restored.emit(value=self.history, left=left)

    def restart(self, seed: int | None = None) -> None:
        """Before a reset of the simulation: a new seed (an unsaved change), no forced actions; the selected agent
        is selected again in the new recording."""
        if self.project is None:
            return
        if seed is not None:
            self.project.seed = int(seed)
        if self.history is not None and self.selected is not None:
            self._want_selected = self.history.agents.names[self.selected]
        self.apply_interventions(())
        self.mark_modified()

    # ---- navigation -------------------------------------------------------------------------------------------
    def set_cursor(self, k: int) -> int:
        """Show state ``k`` (clamped to 0..T); returns the state shown."""
        k = int(min(max(int(k), 0), self.num_steps))
        if k != self.cursor:
            self.cursor = k
            self.events.cursor.emit(value=k)
        return k

    def select(self, agent: int | None) -> None:
        """Select agent ``agent`` (an index; None or out of range: nothing). Per-agent markers follow."""
        if self.history is None:
            return
        if agent is not None and not 0 <= int(agent) < len(self.history.agents):
            agent = None
        self.selected = None if agent is None else int(agent)
        self.markers.set_selected(self.history, self.selected)
        self.events.selection.emit(value=self.selected)
        self.events.markers.emit(value=self.markers.events)

    def select_name(self, name: str) -> bool:
        if name in self.agent_names:
            self.select(self.agent_names.index(name))
            return True
        return False

    def next_marker(self) -> int | None:
        return self.markers.next_event(self.cursor)

    def previous_marker(self) -> int | None:
        return self.markers.previous_event(self.cursor)

    # ---- view options -----------------------------------------------------------------------------------------
    def set_view(self, **changes: Any) -> None:
        """Change view options that are not project edits (paths, follow, icons, overlays). ``colour_by`` is
        checked here; as a user edit it goes through :class:`~core.studio.commands.SetColourScheme`."""
        unknown = set(changes) - {f.name for f in fields(ViewOptions)}
        if unknown:
            raise TypeError(f"unknown view options: {', '.join(sorted(unknown))}")
        if "paths" in changes and changes["paths"] not in PATH_MODES:
            raise ValueError(f"paths must be one of {', '.join(PATH_MODES)}, got {changes['paths']!r}")
        if "colour_by" in changes and scheme_problem(changes["colour_by"], self.concepts) is not None:
            raise ValueError(scheme_problem(changes["colour_by"], self.concepts))
        new = replace(self.view, **changes)
        changed = tuple(k for k in changes if getattr(new, k) != getattr(self.view, k))
        if changed:
            self.view = new
            self.events.view.emit(value=new, changed=changed)

    def restore_view(self, **changes: Any) -> None:
        """Take view options remembered elsewhere (the settings, the command line) without checking them against
        the agents, which may not be loaded yet: :meth:`check_scheme` reports and replaces a stale scheme later."""
        new = replace(self.view, **changes)
        changed = tuple(k for k in changes if getattr(new, k) != getattr(self.view, k))
        if changed:
            self.view = new
            self.events.view.emit(value=new, changed=changed)

    def check_scheme(self, source: str) -> bool:
        """Is the current colour-by scheme valid for the current agents? If not, report it (naming ``source``) and
        colour by the default scheme (a redraw never fails on a stale scheme)."""
        if self._scheme_ok(source, self.view.colour_by, self.concepts):
            return True
        self.set_view(colour_by=DEFAULT_SCHEME)
        return False

    def _scheme_ok(self, source: str, name: str, concepts: list[str] | None) -> bool:
        problem = scheme_problem(name, concepts)
        if problem is None:
            return True
        fallback = self.view.colour_by if name != self.view.colour_by and \
            scheme_problem(self.view.colour_by, concepts) is None else DEFAULT_SCHEME
        self.report(f"Ignored the colour-by setting from {source}: {problem}. Colouring by {fallback}.", "warning")
        return False

    def colour_schemes(self) -> list[str]:
        return list(colour_schemes(self.concepts))

    # ---- commands and what they apply ---------------------------------------------------------------------------
    def execute(self, command: Command) -> bool:
        """Do a user edit through the undo stack; returns True when it merged into the previous one."""
        return self.stack.push(command)

    def apply_breakpoints(self, bps: Iterable[Breakpoint]) -> None:
        self.breakpoints = tuple(bps)
        self.events.breakpoints.emit(value=self.breakpoints)

    def apply_interventions(self, entries: Iterable[Mapping[str, Any]]) -> None:
        """The forced actions (``{"step", "agent", "action"}``; action None: follow the rules again), mirrored in
        the recording's meta so a saved episode can be re-simulated."""
        self.interventions = tuple(dict(e) for e in entries)
        if self.history is not None:
            if self.interventions:
                self.history.meta["interventions"] = [dict(e) for e in self.interventions]
            else:
                self.history.meta.pop("interventions", None)
        self.events.interventions.emit(value=self.interventions)

    # ---- modified flag, saving --------------------------------------------------------------------------------
    def mark_modified(self) -> None:
        self._other_changes = True
        self._sync_modified()

    def mark_saved(self) -> None:
        """The current state is the saved one (also what 'discard changes' uses before quitting)."""
        self._other_changes = False
        self.stack.set_clean()
        self._sync_modified()

    def _sync_modified(self) -> None:
        if self.modified != self._modified_seen:
            self._modified_seen = self.modified
            self.events.modified.emit(value=self.modified)

    def studio_state(self) -> dict[str, Any]:
        """The view state saved in project.yaml's ``studio:`` (docs/projects.md)."""
        d: dict[str, Any] = {"colour_by": self.view.colour_by, "step": int(self.cursor)}
        if self.selected is not None and self.history is not None:
            d["selected"] = self.history.agents.names[self.selected]
        if self.breakpoints:
            d["breakpoints"] = [b.to_dict() for b in self.breakpoints]
        return d

    def save(self, folder: str | Path, replace: bool = False) -> Path:
        """Save the project, its view state and the recording into ``folder`` (atomic, see core.project.save); raises
        what :func:`core.project.save.save_project` raises. Clears the modified flag."""
        if self.project is None:
            raise ValueError("no project to save")
        self.project.studio = self.studio_state()
        meta = {"interventions": [dict(e) for e in self.interventions]} if self.interventions else None
        path = save_project(self.project, folder, episode=self.history, episode_meta=meta, replace=replace,
                            kept=[(n, e) for n, e in self.kept if e is not self.history])
        self.kept = []
        self.mark_saved()
        self.events.saved.emit(value=path)
        return path

    def positions(self) -> np.ndarray:
        """Every recorded position (a copy), what re-simulating a loaded episode compares against."""
        if self.history is None:
            return np.zeros((0, 0, 2), np.int64)
        return np.array(self.history.array("positions"), copy=True)
