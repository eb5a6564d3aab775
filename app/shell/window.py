"""The studio's main window: a shell of menus, toolbars, docks and status bar around the map view.

The state lives in a Qt-free :class:`core.studio.session.Session` (project, recording, cursor, selection, view
options, breakpoints, forced actions, modified flag); user edits of it are undoable commands shown through
:mod:`app.shell.undo` (Edit ▸ Undo/Redo, the History panel). The simulation runs in
:class:`app.shell.worker.SimController`'s thread, a service of the window's :class:`app.shell.jobs.JobRunner`.
Everything else — playback, projects, the inspector, the editors, exports, the model panels — is a feature
(:mod:`app.shell.features`) installed with a :class:`~app.shell.features.FeatureHost`; the window knows none of
them. It builds the widgets every feature shares (map, panels, menus declared in :mod:`app.shell.menus`, status
labels), answers the :class:`~app.shell.services.Shell` protocol through its :class:`~app.shell.dialogs.Dialogs`,
and closes in order (docs/architecture.md).
"""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from app.shell import help as help_
from app.shell.dialogs import Dialogs, QtDialogs
from app.shell.features import FeatureController, FeatureHost, install_features, load_feature_modules, shutdown_features
from app.shell.jobs import JobError, JobRunner
from app.shell.layout import LayoutController
from app.shell.menus import ActionSpec, MenuBar, MenuSpec
from app.shell.panels import LEFT, PanelHost, PanelSpec
from app.shell.settings import make_settings
from app.shell.status import StatusLabels
from app.shell.undo import UndoAdapter
from app.shell.worker import SimController
from core.studio.session import Session
from widgets.map_view import MapView

__all__ = ["MainWindow"]


class MainWindow(QtWidgets.QMainWindow):
    """See the module docstring. ``dialogs`` asks the questions and shows the errors (default: real dialogs;
    :class:`~app.shell.dialogs.UnattendedDialogs` for runs nobody watches); ``unattended`` tells features that
    nobody answers (an unsaved SPF run is discarded on quit)."""

    def __init__(self, settings: QtCore.QSettings | None = None, dialogs: Dialogs | None = None,
                 unattended: bool = False) -> None:
        super().__init__()
        self.settings = settings if settings is not None else make_settings()
        self.dialogs: Dialogs = dialogs if dialogs is not None else QtDialogs()
        self.unattended = unattended
        self.last_message = ""
        self.setWindowTitle("LogiCity Studio")
        self._closing = False
        self._close_pending = False

        self.session = Session()
        self.undo_adapter = UndoAdapter(self.session.stack, self)
        self.jobs = JobRunner(self)   # every background job and the simulation service (app/shell/jobs.py)
        self.jobs.failed.connect(self._on_job_failed)
        self.simulation = SimController(self, runner=self.jobs)
        app = QtWidgets.QApplication.instance()
        if app is not None:   # also stop the worker when the application quits without closing this window
            app.aboutToQuit.connect(self.simulation.shutdown)

        load_feature_modules()   # features register their panels before the panels are built
        self.map = MapView(self)
        self.map.setObjectName("mapView")
        self.setCentralWidget(self.map)
        self.setDockOptions(QtWidgets.QMainWindow.DockOption.AnimatedDocks
                            | QtWidgets.QMainWindow.DockOption.AllowTabbedDocks
                            | QtWidgets.QMainWindow.DockOption.AllowNestedDocks)
        self.menus = MenuBar(self.menuBar())
        self.panels = PanelHost(self, self.session, self.jobs, self.menus.declare(MenuSpec("view/docks", "&Docks"),
                                                                                 "docks"))
        self.docks = self.panels.docks
        self.panels.create()
        self.panels.add(PanelSpec("history", "History", LEFT, tabify_with="breakpoints"),
                        self.undo_adapter.history_view())
        self.status_labels = StatusLabels(self.statusBar(), self)
        self.layout_ctl = LayoutController(self, self.settings, self.session, self.docks)
        self.host = FeatureHost(self, self, self.session, self.jobs, self.simulation, self.map, self.panels,
                                self.docks, self.menus, self.status_labels)
        self._add_shell_actions()
        self.panels.dock()   # every registered panel, placed and sized as its PanelSpec says
        self.features: dict[str, FeatureController] = install_features(self.host)
        ev = self.session.events
        ev.message.connect(lambda e: self.status(e.value, 15000))
        for emitter in (ev.modified, ev.saved, ev.project):   # the folder is in the title
            emitter.connect(lambda e: self._update_title())
        self.layout_ctl.restore()

    def _add_shell_actions(self) -> None:
        add = self.host.add
        add(ActionSpec("&Quit", self.close, "Ctrl+Q", "Quit the studio", menu="file", section="quit"))
        undo, redo = self.undo_adapter.actions(self)
        self.addActions([undo, redo])
        self.host.add_to_menu("edit", undo, redo)
        add(ActionSpec("Reset &layout", self.layout_ctl.reset, None, "Restore the default dock layout", menu="view",
                       section="docks"))
        add(ActionSpec("&Keyboard shortcuts", self.show_shortcuts, "F1", "List every shortcut", menu="help"))
        add(ActionSpec("&About LogiCity Studio", lambda: help_.show_about(self), menu="help"))

    # ---- the shell: questions, errors, status (app/shell/services.Shell) -----------------------------------------
    @property
    def dialog_parent(self) -> QtWidgets.QWidget:
        return self

    def ask(self, key: str, title: str, text: str, choices: list[tuple[str, str]], default: str) -> str:
        return self.dialogs.ask(self, key, title, text, choices, default)

    def show_error(self, title: str, file: str, problem: str, label: str = "File") -> None:
        """A non-blocking error dialog naming the file (or, with ``label``, the component) and the problem; the
        studio keeps running."""
        self.dialogs.show_error(self, title, file, problem, label)
        self.status(f"{title}: {problem}")

    def status(self, text: str, ms: int = 6000) -> None:
        self.last_message = text
        self.statusBar().showMessage(text, ms)

    def _on_job_failed(self, error: JobError) -> None:
        """A background job or the simulation failed: a dialog naming the failing component (or the job)."""
        title = "Simulation problem" if error.kind == "simulation" else f"The {error.kind} failed"
        self.show_error(title, error.component or error.kind, error.message, label="Component")

    def _update_title(self) -> None:
        p = self.session.project
        name = p.name if p else "no project"
        ro = self.session.read_only
        where = f" — {p.root}" if p and p.root else f" — read-only replay of {ro}" if ro else " (not saved)"
        self.setWindowTitle(f"{name}[*]{where} · LogiCity Studio")
        self.setWindowModified(self.session.modified)

    # ---- help -------------------------------------------------------------------------------------------------
    def all_actions(self) -> list[QtGui.QAction]:
        return help_.all_actions(self, self.menus.actions())

    def shortcut_rows(self) -> list[tuple[str, str, str]]:
        return help_.shortcut_rows(self.all_actions())

    def show_shortcuts(self) -> None:
        help_.show_shortcuts(self, help_.shortcuts_html(self.shortcut_rows()))

    # ---- shutdown -----------------------------------------------------------------------------------------------
    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:  # noqa: N802
        if not self._closing and not self.host.may_close():   # unsaved project or run: the user cancelled
            ev.ignore()
            return
        self._closing = True
        busy = self.panels.shutdown(wait_ms=300) + shutdown_features(self.features, wait_ms=300)
        if busy:
            # e.g. the icon generator is loading a model (cannot be interrupted) or finishing an image: close once
            # it has stopped; destroying its running thread would abort the process (finished images are saved)
            ev.ignore()
            self._close_when_idle(busy)
            return
        for controller in self.features.values():
            controller.stop()
        self.layout_ctl.save()
        self.simulation.shutdown()
        ev.accept()

    def _close_when_idle(self, busy: list[FeatureController]) -> None:
        """Show what closing waits for (a panel's background work), and close once it has stopped."""
        waits = "; ".join(c.waiting_message or "waiting for background work to stop…" for c in busy)
        self.statusBar().showMessage(waits[:1].upper() + waits[1:] + " The studio closes by itself.")
        if self._close_pending:
            return
        self._close_pending = True
        for w in [self.menuBar(), self.centralWidget(), *self.docks.values(),
                  *self.findChildren(QtWidgets.QToolBar)]:
            if w is not None:   # centralWidget() is None until one is set
                w.setEnabled(False)  # the save question was answered: no more edits
        for c in busy:
            c.idle.connect(lambda: QtCore.QTimer.singleShot(0, self.close))
