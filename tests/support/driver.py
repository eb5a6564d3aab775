"""The studio as the tests drive it: open a project, play, seek, select, trigger a menu entry by its text, press
keys, answer the studio's questions, and read what the session and the panels show.

Why a driver: the main window is a shell with no API of its own for tests. Everything here goes through what the
studio itself offers — its menus and shortcuts, the session, the features' services (the same ones the features
use of each other, :mod:`app.shell.services`), the panels' public methods and reports — and the studio's questions
are answered by :class:`ScriptedDialogs`, the window's :class:`~app.shell.dialogs.Dialogs`, as a user would answer
them. Qt and the application are imported lazily so the Qt-free tests can import tests.support without PySide6.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

__all__ = ["StudioDriver", "ScriptedDialogs", "find_action", "studio_window"]


def _plain(text: str) -> str:
    return text.replace("&", "").strip()


def find_action(menu_bar: Any, *path: str) -> Any:
    """The QAction reached by the menu texts ``path`` (ampersands and a trailing "…" compared loosely), e.g.
    ``("File", "Save project")``; a single text is looked up in every menu. A LookupError lists what is there."""
    from PySide6 import QtWidgets

    want = [_plain(p).rstrip("…") for p in path]

    def walk(menu: QtWidgets.QMenu, trail: tuple[str, ...]):
        for a in menu.actions():
            if a.isSeparator():
                continue
            sub = a.menu()
            here = trail + (_plain(a.text()).rstrip("…"),)
            if isinstance(sub, QtWidgets.QMenu):
                yield from walk(sub, here)
            else:
                yield here, a

    found = []
    for a in menu_bar.actions():
        sub = a.menu()
        if isinstance(sub, QtWidgets.QMenu):
            found.extend(walk(sub, (_plain(a.text()),)))
    def same(shown: str, wanted: str) -> bool:   # "Undo Move Car_1": Edit ▸ Undo names the command it undoes
        return shown == wanted or shown.startswith(wanted + " ")

    for trail, action in found:
        if len(trail) >= len(want) and all(same(t, w) for t, w in zip(trail[-len(want):], want)):
            return action
    raise LookupError(f"no menu entry {' ▸ '.join(path)!r}; there are: "
                      f"{', '.join(' ▸ '.join(t) for t, _ in found)}")


class ScriptedDialogs:
    """The studio's questions answered from ``answers`` (question key → choice key; an unscripted question shows
    the real dialog, which the modal watchdog fails); errors and warnings are recorded and shown as usual."""

    def __init__(self) -> None:
        from app.shell.dialogs import QtDialogs

        self._real = QtDialogs()
        self.answers: dict[str, str] = {}
        self.asked: list[str] = []
        self.errors: list[tuple[str, str, str]] = []
        self.warnings: list[tuple[str, str]] = []

    def ask(self, parent, key: str, title: str, text: str, choices: list[tuple[str, str]], default: str) -> str:
        self.asked.append(key)
        if key in self.answers:
            return self.answers[key]
        return self._real.ask(parent, key, title, text, choices, default)

    def show_error(self, parent, title: str, file: str, problem: str, label: str) -> None:
        self.errors.append((title, file, problem))
        self._real.show_error(parent, title, file, problem, label)

    def warn(self, parent, title: str, text: str) -> None:
        self.warnings.append((title, text))
        self._real.warn(parent, title, text)

    def save_file_name(self, parent, key: str, title: str, default: str, filters: str) -> str:
        self.asked.append(key)
        if key in self.answers:
            return self.answers[key]
        return self._real.save_file_name(parent, key, title, default, filters)

    @property
    def last_warning(self) -> tuple[str, str] | None:
        return self.warnings[-1] if self.warnings else None


class StudioDriver:
    """A shown main window and the means to use it (see the module docstring)."""

    def __init__(self, window: Any, dialogs: ScriptedDialogs) -> None:
        self.window = window
        self.dialogs = dialogs
        self.session = window.session
        self.host = window.host

    # ---- what the user sees -------------------------------------------------------------------------------------
    @property
    def project(self) -> Any:
        return self.session.project

    @property
    def history(self) -> Any:
        return self.session.history

    @property
    def cursor(self) -> int:
        return self.session.cursor

    @property
    def selected(self) -> int | None:
        return self.session.selected

    @property
    def num_steps(self) -> int:
        return self.session.num_steps

    @property
    def markers(self) -> Any:
        return self.session.markers

    @property
    def breakpoints(self) -> list:
        return list(self.session.breakpoints)

    @property
    def scheme(self) -> str:
        return self.session.view.colour_by

    @scheme.setter
    def scheme(self, name: str) -> None:
        """Set the colour-by scheme as a remembered setting would (checked at the next redraw)."""
        self.session.restore_view(colour_by=name)

    @property
    def path_mode(self) -> str:
        return self.session.view.paths

    @property
    def dirty(self) -> bool:
        """Unsaved changes (the title's ``*``)."""
        return self.session.modified

    @property
    def last_message(self) -> str:
        return self.window.last_message

    @property
    def status_text(self) -> str:
        return self.window.statusBar().currentMessage()

    @property
    def last_error(self) -> tuple[str, str, str] | None:
        """(title, file, problem) of the newest error dialog the studio showed, None when it showed none."""
        return self.dialogs.errors[-1] if self.dialogs.errors else None

    @last_error.setter
    def last_error(self, value: None) -> None:
        """``= None``: forget the errors shown so far (the next check sees only new ones)."""
        assert value is None
        self.dialogs.errors.clear()

    @property
    def answers(self) -> dict[str, str]:
        """How the next questions are answered, by question key (``"unsaved"``, ``"branch"``, ``"reset"`` …)."""
        return self.dialogs.answers

    # ---- the parts of the window ------------------------------------------------------------------------------
    @property
    def map(self) -> Any:
        return self.window.map

    @property
    def docks(self) -> dict:
        return self.window.docks

    @property
    def features(self) -> dict:
        return self.window.features

    def feature(self, name: str) -> Any:
        return self.window.features[name]

    def panel(self, name: str) -> Any:
        return self.window.panels.widget(name)

    @property
    def inspector(self) -> Any:
        return self.panel("inspector")

    @property
    def stats(self) -> Any:
        return self.panel("statistics")

    @property
    def timeline(self) -> Any:
        return self.panel("timeline")

    @property
    def legend(self) -> Any:
        return self.panel("legend")

    @property
    def bp_panel(self) -> Any:
        return self.panel("breakpoints")

    @property
    def bp_list(self) -> Any:
        return self.panel("breakpoints").list

    @property
    def docks_menu(self) -> Any:
        return self.window.panels.docks_menu

    @property
    def status_labels(self) -> Any:
        return self.window.status_labels

    @property
    def undo_stack(self) -> Any:
        """The QUndoStack behind Edit ▸ Undo / Redo and the History panel."""
        return self.window.undo_adapter.qt

    @property
    def settings(self) -> Any:
        return self.window.settings

    @property
    def jobs(self) -> Any:
        return self.window.jobs

    @property
    def simulation(self) -> Any:
        """The simulation worker service (its thread, its generation)."""
        return self.window.simulation

    # ---- services ---------------------------------------------------------------------------------------------
    @property
    def playback(self) -> Any:
        return self.host.playback

    @property
    def drawing(self) -> Any:
        return self.host.drawing

    @property
    def projects(self) -> Any:
        return self.host.projects

    @property
    def playing(self) -> bool:
        return self.playback.playing

    @property
    def live(self) -> bool:
        return self.playback.live

    @property
    def replaying(self) -> bool:
        return self.playback.replaying

    @property
    def syncing(self) -> bool:
        return self.playback.syncing

    @property
    def sim_steps(self) -> int:
        return self.playback.sim_steps

    @property
    def speed(self) -> float:
        return self.playback.speed

    # ---- doing things -----------------------------------------------------------------------------------------
    def open_path(self, path: str | Path, ask_save: bool = True) -> bool:
        return self.host.projects.open_path(path, ask_save=ask_save)

    def save(self) -> bool:
        return self.host.projects.save()

    def save_to(self, folder: str | Path) -> bool:
        return self.host.projects.save_to(folder)

    def set_cursor(self, k: int, pause: bool = False) -> None:
        self.playback.set_cursor(k, pause=pause)

    seek = set_cursor

    def play(self) -> None:
        self.playback.play()

    def pause(self) -> None:
        self.playback.pause()

    def set_speed(self, sps: float) -> None:
        self.playback.set_speed(sps)

    def simulate_step(self) -> None:
        self.playback.simulate_step()

    def branch_at(self, k: int) -> None:
        self.playback.branch_at(k)

    def reset_simulation(self, seed: int | None = None, confirm: bool = True) -> bool:
        return self.playback.reset_simulation(seed, confirm=confirm)

    def force_action(self, action: int | None) -> None:
        self.playback.force_action(action)

    def next_marker(self) -> None:
        self.trigger("Timeline", "Next marker")

    def when_ready(self, fn: Callable[[], None]) -> None:
        self.playback.when_ready(fn)

    def run_steps_then(self, steps: int, done: Callable[[], None]) -> None:
        self.playback.run_steps_then(steps, done)

    def flush_redraw(self, panels: str = "now") -> None:
        """Draw the shown state now (what the next event-loop pass would draw); ``panels="later"``: the inspector
        and statistics in the next event-loop pass, as while playing."""
        self.drawing.flush_redraw(panels)

    def select_agent(self, agent: int | None) -> None:
        self.host.selection.select(agent)

    def select_agent_by_name(self, name: str) -> None:
        self.host.selection.select_by_name(name)

    def set_colour_scheme(self, name: str) -> None:
        self.feature("view").set_colour_scheme(name)

    def add_breakpoint(self, bp: Any) -> None:
        self.host.breakpoints.add(bp)

    def add_agent_breakpoint(self, action: str | None) -> None:
        self.host.breakpoints.add_for_selected(action)

    def reset_layout(self) -> None:
        self.trigger("View", "Reset layout")

    def shortcut_rows(self) -> list[tuple[str, str, str]]:
        return self.window.shortcut_rows()

    # ---- menus and keys ----------------------------------------------------------------------------------------
    def action(self, *path: str) -> Any:
        """The menu entry reached by ``path`` (see :func:`find_action`)."""
        return find_action(self.window.menuBar(), *path)

    def trigger(self, *path: str) -> Any:
        """Click the menu entry ``path`` (its action's triggered signal, as a click or its shortcut sends it)."""
        a = self.action(*path)
        assert a.isEnabled(), f"{' ▸ '.join(path)} is disabled"
        a.trigger()
        return a

    def press(self, qtbot, key: Any, modifier: Any = None, widget: Any = None) -> None:
        """A real key press on ``widget`` (default: the window), through the event loop."""
        from PySide6 import QtCore

        qtbot.keyClick(widget or self.window, key, modifier or QtCore.Qt.KeyboardModifier.NoModifier)


def studio_window(settings_path: str | Path, unattended: bool = False) -> StudioDriver:
    """A new main window (not shown) with its driver, for scripts (benchmarks, screenshot tools): its questions
    are scripted (``unattended``: answered as a --screenshot run answers them)."""
    from app.shell.dialogs import UnattendedDialogs
    from app.shell.settings import make_settings
    from app.shell.window import MainWindow

    dialogs = ScriptedDialogs()
    win = MainWindow(make_settings(Path(settings_path)), dialogs=UnattendedDialogs() if unattended else dialogs,
                     unattended=unattended)
    return StudioDriver(win, dialogs)
