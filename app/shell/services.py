"""What a feature may use of the studio besides the session: the shell (questions, errors, status line) and the
services other features provide, each behind a typed protocol.

Why protocols and keys: a feature (app/features/<name>) never imports another feature and never sees the window.
When it needs playback, the selection or the Problems panel, it asks its :class:`~app.shell.features.FeatureHost`
for the service by its key (``host.get(PLAYBACK)``, or the ``host.playback`` shorthand); the feature that provides
it registered an object that satisfies the protocol (``host.provide(PLAYBACK, controller)``), which mypy checks
where it is provided. A service that is not installed is a clear error naming it, not an ``AttributeError`` deep in
a slot.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Protocol, TypeVar

from PySide6 import QtCore, QtWidgets

from app.shell.dialogs import Dialogs

__all__ = ["Shell", "Service", "Playback", "Drawing", "Timeline", "Selection", "Problems", "Projects",
           "Breakpoints", "PLAYBACK", "DRAWING", "TIMELINE", "SELECTION", "PROBLEMS", "PROJECTS", "BREAKPOINTS"]

T = TypeVar("T")


class Shell(Protocol):
    """What every feature may ask of the shell: a question, an error dialog that never blocks, the status line,
    the settings, and the widget its dialogs open over."""

    settings: QtCore.QSettings
    last_message: str   # the newest status-line message
    unattended: bool    # nobody answers (a --screenshot run): questions get their "discard"/"cancel" answer
    dialogs: Dialogs    # how questions are asked, for a feature's own windows (the SPF play window)

    def ask(self, key: str, title: str, text: str, choices: list[tuple[str, str]], default: str) -> str:
        """The key of the chosen answer (``key`` names the question, so a script can answer it)."""
        ...

    def show_error(self, title: str, file: str, problem: str, label: str = "File") -> None:
        """A non-blocking error dialog naming the file (or, with ``label``, the component) and the problem."""
        ...

    def status(self, text: str, ms: int = 6000) -> None:
        """A status-line message (remembered as ``last_message``)."""
        ...

    @property
    def dialog_parent(self) -> QtWidgets.QWidget:
        """The widget a feature's dialogs and file choosers open over."""
        ...


@dataclass(frozen=True)
class Service(Generic[T]):
    """The typed key of a service: ``PLAYBACK: Service[Playback]``."""

    name: str


class Drawing(Protocol):
    """Drawing the shown state: coalesced redraws of the map and the panels that show it."""

    drawn: QtCore.SignalInstance            # the state just drawn on the map

    def schedule_redraw(self) -> None: ...

    def flush_redraw(self, panels: str = "now") -> None:
        """Draw the shown state now (scripts and screenshots); the inspector and statistics ``"now"`` or
        ``"later"`` (in their own event-loop pass)."""
        ...

    def scene_at(self, k: int) -> Any:
        """The map scene of state ``k`` as it is drawn (colours, selection, paths, field of view)."""
        ...

    def set_config(self, config: Any) -> None:
        """The project now runs ``config`` (edited rules): explanations use its program from now on."""
        ...

    @property
    def inspector_model(self) -> Any:
        """The open project's :class:`core.view.inspect.Inspector` (None before a project is open)."""
        ...


class Playback(Protocol):
    """The simulation as the user runs it: show a state, play, step, branch, reset, force an action."""

    changed: QtCore.SignalInstance           # playing, sync state or the measured rate changed
    refused: QtCore.SignalInstance           # simulating was refused on errors (the text says why)
    live: bool
    replaying: bool
    syncing: bool
    sim_steps: int
    speed: float

    @property
    def playing(self) -> bool: ...

    def set_cursor(self, k: int, pause: bool = False) -> None: ...

    def request_cursor(self, k: int) -> None: ...

    def play(self) -> None: ...

    def pause(self) -> None: ...

    def set_speed(self, sps: float) -> None: ...

    def simulate_step(self) -> None: ...

    def branch_at(self, k: int) -> None: ...

    def reset_simulation(self, seed: int | None = None, confirm: bool = True) -> bool: ...

    def reset_scene(self, config: Any, scene: Any, seed: int) -> None:
        """Start a new recording whose state 0 is ``scene`` (a witness or deadlock loaded from the analysis)."""
        ...

    def launch(self, config: Any, previous: Any) -> None:
        """An Apply: keep the simulation of the ``previous`` recording for an undo, then simulate ``config`` (None:
        the recording branched in place)."""
        ...

    def start(self, project: Any) -> None:
        """Start the simulation of the project the session just opened."""
        ...

    def force_action(self, action: int | None) -> None: ...

    def refused_read_only(self, doing: str) -> bool: ...

    def when_ready(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once the current project's simulation has sent its first state."""
        ...

    def run_steps_then(self, steps: int, done: Callable[[], None]) -> None: ...


class Timeline(Protocol):
    """Extra marker lanes on the studio's timeline (a model's disagreements, its violations)."""

    def set_extra(self, group: str, lanes: list[tuple[str, str, tuple[int, int, int]]] | None = None,
                  markers: list[Any] | None = None) -> None: ...


class Selection(Protocol):
    """Which agent is selected (the session holds it; this also tells the user)."""

    def select(self, agent: int | None) -> None: ...

    def select_by_name(self, name: str) -> None: ...


class Problems(Protocol):
    """The Problems panel: every checker's findings."""

    def show_panel(self) -> None: ...

    def schedule(self) -> None: ...


class Projects(Protocol):
    """Opening and saving projects."""

    def install(self, project: Any, episode: Any = None, read_only: Path | None = None) -> None:
        """Show ``project`` (with a recorded ``episode``) and start its simulation."""
        ...

    def open_path(self, path: str | Path, ask_save: bool = True) -> bool: ...

    def save(self) -> bool: ...

    def save_to(self, folder: str | Path) -> bool: ...

    def maybe_save(self, doing: str) -> bool: ...


class Breakpoints(Protocol):
    """Adding breakpoints (the Breakpoints dock and menu)."""

    def add(self, bp: Any) -> None: ...

    def add_for_selected(self, action: str | None) -> None: ...


PLAYBACK: Service[Playback] = Service("playback")
DRAWING: Service[Drawing] = Service("drawing")
TIMELINE: Service[Timeline] = Service("timeline")
SELECTION: Service[Selection] = Service("selection")
PROBLEMS: Service[Problems] = Service("problems")
PROJECTS: Service[Projects] = Service("projects")
BREAKPOINTS: Service[Breakpoints] = Service("breakpoints")
