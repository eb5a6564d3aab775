"""The studio's main window: a shell of menus, toolbar, docks and status bar around the map view.

The state lives in a Qt-free :class:`core.studio.session.Session` (project, recording, cursor, selection, view
options, breakpoints, forced actions, modified flag); user edits of it are undoable commands shown through
:mod:`app.shell.undo` (Edit ▸ Undo/Redo, the History panel). The work is done by the controllers in :mod:`app.shell.services`
(projects, playback, drawing, timeline, selection, view options, breakpoints, layout, help); the simulation runs in
:class:`app.shell.worker.SimController`'s thread, a service of the window's :class:`app.shell.jobs.JobRunner`. This module only
builds the widgets and menus and wires them to those objects (docs/architecture.md).

Tests and scripts drive the window through the forwarders at the end of the class (``win.play()``,
``win.history`` …), which read and call the session and the controllers.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Callable

from PySide6 import QtCore, QtGui, QtWidgets

from core.base.codes import ACTION_NAMES
from core.sim.events import Breakpoint
from core.studio.session import Session
from widgets.choice_dialog import ask_choice
from widgets.map_view import MapView

from app.shell.services import Forward
from app.shell import help as help_
from app.features.inspect.agents import AgentsController
from app.features.breakpoints.controller import BreakpointsController
from app.features.playback.drawing import DrawController
from app.features.inspect.gridlock import GridlockController
from app.shell.layout import LayoutController
from app.features.playback.controller import DEFAULT_SPEED, SPEEDS, PlaybackController, SpeedControls
from app.features.project.controller import DEFAULT_MODE, ProjectController
from app.features.inspect.selection import SelectionController
from app.shell.status import StatusLabels
from app.features.playback.timeline import TimelineController
from app.features.view.controller import ViewController
from app.features.export.animation import ExportController
from app.shell.features import install_features, load_feature_modules, shutdown_features
from app.shell.jobs import JobError, JobRunner
from app.shell.panels import PanelHost
from app.shell.settings import make_settings
from app.features.spf.play import SPFLauncher
from app.shell.undo import UndoAdapter
from app.shell.worker import SimController

__all__ = ["DEFAULT_MODE", "DEFAULT_SPEED", "SPEEDS", "MainWindow"]


class MainWindow(QtWidgets.QMainWindow):
    """See the module docstring."""

    projectLoaded = QtCore.Signal()
    cursorChanged = QtCore.Signal(int)
    historyReset = QtCore.Signal()
    frameDrawn = QtCore.Signal(int)

    def __init__(self, settings: QtCore.QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else make_settings()
        self.setWindowTitle("LogiCity Studio")
        #: Set for unattended runs (--screenshot): questions are answered without a dialog (unsaved changes
        #: are discarded, everything else cancelled) so the process always ends.
        self.non_interactive = False
        self.answers: dict[str, str] = {}   # tests pre-answer questions by key (see ask())
        self.last_error: tuple[str, str, str] | None = None   # (title, file, problem) of the last error dialog
        self.last_message = ""
        self._closing = False
        self._close_pending = False

        self.session = Session()
        self.undo_adapter = UndoAdapter(self.session.stack, self)
        self.undo = self.undo_adapter.qt        # Edit ▸ Undo/Redo and the History panel show the session's commands
        self.jobs = JobRunner(self)   # every background job and the simulation service (app/shell/jobs.py)
        self.jobs.failed.connect(self._on_job_failed)
        self.controller = SimController(self, runner=self.jobs)
        app = QtWidgets.QApplication.instance()
        if app is not None:   # also stop the worker when the application quits without closing this window
            app.aboutToQuit.connect(self.controller.shutdown)

        self.spf = SPFLauncher(self)   # Simulation ▸ Safe Path Following: drive the ego car (app/features/spf/play.py)
        load_feature_modules()   # editors and tools register their panels before the panels are built
        self._build_widgets()
        s = self.session
        self.drawing = DrawController(s, self.controller, self.map, self.legend, self.inspector, self.stats,
                                      self.docks, self)
        self.playback = PlaybackController(self, s, self.controller, self.drawing, self)
        self.timeline_ctl = TimelineController(s, self.timeline, self.playback, self)
        self.selection = SelectionController(self, s, self.playback, self.map, self.inspector, self.stats,
                                             self.hover_label, self)
        self.view = ViewController(self, s, self.map, self.legend, self)
        self.bp = BreakpointsController(self, s, self.bp_panel, self)
        self.projects = ProjectController(self, s, self.playback, self)
        self.layout_ctl = LayoutController(self, self.settings, s, self.playback, self.docks)
        self.exporter = ExportController(self, s, self.jobs, self.map, self.drawing.scene_at, self.playback.pause)
        self.gridlock = GridlockController(self, s, self.map, self.playback, self)   # View ▸ Show the gridlock cycle
        self.agents_ctl = AgentsController(s, self.map, self.panels, self.docks, self.drawing,   # Agents, Compare,
                                           self.selection.select, self)                    # labels, witness
        self._build_actions()
        self._build_menus()
        self._build_docks()
        self._build_toolbar()
        self._wire()
        self.features = install_features(self)   # registered editors and tools (app/shell/features.py)
        self.layout_ctl.restore()

    # ---- construction ---------------------------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        self.map = MapView(self)
        self.map.setObjectName("mapView")
        self.setCentralWidget(self.map)
        self.setDockOptions(QtWidgets.QMainWindow.DockOption.AnimatedDocks
                            | QtWidgets.QMainWindow.DockOption.AllowTabbedDocks
                            | QtWidgets.QMainWindow.DockOption.AllowNestedDocks)
        # the docked panels come from the registry (app/shell/panels.py): built from the session and the job runner
        self.panels = PanelHost(self, self.session, self.jobs)
        self.panels.create()
        P = self.panels.widget
        self.timeline, self.inspector, self.stats = P("timeline"), P("inspector"), P("statistics")
        self.legend, self.bp_panel, self.render_dock = P("legend"), P("breakpoints"), P("render")
        self.bp_list = self.bp_panel.list
        self.docks: dict[str, QtWidgets.QDockWidget] = {}
        self.status_labels = StatusLabels(self.statusBar(), self.session, self)

    def _build_docks(self) -> None:
        self.panels.dock()   # every registered panel, placed and sized as its PanelSpec says
        self.add_dock(self.undo_adapter.history_view(), "History", QtCore.Qt.DockWidgetArea.LeftDockWidgetArea,
                      "history")
        self.tabifyDockWidget(self.docks["breakpoints"], self.docks["history"])
        self.docks["legend"].raise_()
        render = self.render_dock   # accepted icons show in the map's icon art at once
        render.iconsChanged.connect(lambda semantic: self.map.reload_icons(semantic, render.library))

    def add_dock(self, widget: QtWidgets.QWidget, title: str, area: QtCore.Qt.DockWidgetArea,
                 name: str) -> QtWidgets.QDockWidget:
        """Dock ``widget`` and list it in View ▸ Docks; ``name`` keys the remembered layout."""
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(widget)
        dock.setFeatures(QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        self.docks[name] = dock
        act = dock.toggleViewAction()
        act.setText(title)
        act.triggered.connect(lambda on, d=dock: d.raise_() if on else None)   # not hidden behind a tab sibling
        self.docks_menu.addAction(act)
        return dock

    def _act(self, text: str, slot: Callable | None = None, shortcut: str | list | None = None,
             tip: str | None = None, checkable: bool = False, icon: QtWidgets.QStyle.StandardPixmap | None = None
             ) -> QtGui.QAction:
        a = QtGui.QAction(text, self)
        if shortcut:
            seqs = shortcut if isinstance(shortcut, list) else [shortcut]
            a.setShortcuts([QtGui.QKeySequence(s) for s in seqs])
            a.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        if tip:
            a.setStatusTip(tip)
            a.setToolTip(f"{tip} ({a.shortcut().toString()})" if shortcut else tip)
        a.setCheckable(checkable)
        if icon is not None:
            a.setIcon(self.style().standardIcon(icon))
        if slot is not None:   # a plain action's slot gets no argument: `checked` must never reach a parameter
            a.toggled.connect(slot) if checkable else a.triggered.connect(lambda _checked=False, f=slot: f())
        self.addAction(a)   # shortcuts work whatever has focus (except text fields)
        return a

    def _build_actions(self) -> None:
        SP = QtWidgets.QStyle.StandardPixmap
        pj, pb, bp, v = self.projects, self.playback, self.bp, self.view
        a = self._act
        A: dict[str, QtGui.QAction] = {
            "open": a("&Open project…", pj.open_dialog, "Ctrl+O", "Open a project folder or a mode file",
                      icon=SP.SP_DialogOpenButton),
            "open_default": a("Open the &default city", lambda: pj.open_path(DEFAULT_MODE), None,
                              "Open the bundled default city (configs/modes/default.yaml)"),
            "save": a("&Save project", pj.save, "Ctrl+S", "Save the project (city, rules, episode)",
                      icon=SP.SP_DialogSaveButton),
            "save_as": a("Save project &as…", pj.save_as, "Ctrl+Shift+S", "Save into a new folder"),
            "export_png": a("Export view as &PNG…", self.export_png, "Ctrl+E", "Save the map view as PNG"),
            "export_anim": a("Export steps as GIF / &images…", self.export_animation, "Ctrl+Shift+E",
                             "Export a step range as an animated GIF or an image sequence"),
            "quit": a("&Quit", self.close, "Ctrl+Q", "Quit the studio"),
            "play": a("&Play", pb.toggle_play, "Space", "Play / pause", icon=SP.SP_MediaPlay),
            "step": a("&Step (simulate one)", pb.simulate_step, ["Ctrl+Right", "F10"],
                      "Simulate one step from the shown state", icon=SP.SP_MediaSkipForward),
            "forward": a("Step &forward", pb.step_forward, "Right",
                         "Show the next step (simulates one at the newest step)"),
            "back": a("Step &back", pb.step_back, "Left", "Show the previous step"),
            "first": a("&First step", lambda: pb.set_cursor(0, pause=True), "Home", "Show step 0"),
            "last": a("&Newest step", lambda: pb.set_cursor(self.session.num_steps, pause=True), "End",
                      "Show the newest recorded step"),
            "next_marker": a("Next &marker", pb.next_marker, "]", "Jump to the next timeline marker"),
            "prev_marker": a("Previous marker", pb.previous_marker, "[", "Jump to the previous timeline marker"),
            "goto": a("&Go to step…", pb.goto_dialog, "Ctrl+G", "Type a step to show"),
            "reset": a("&Reset simulation", pb.reset_simulation, "Ctrl+R",
                       "Discard the recording and restart from the seed", icon=SP.SP_BrowserReload),
            "branch": a("&Branch here", pb.branch_here, "Ctrl+Shift+B", "Discard every step after the shown one"),
            "seed": a("Set s&eed…", pb.seed_dialog, None, "Choose the random seed and restart"),
            "faster": a("Faster", lambda: pb.nudge_speed(+1), "Ctrl+Up", "Increase the speed"),
            "slower": a("Slower", lambda: pb.nudge_speed(-1), "Ctrl+Down", "Decrease the speed"),
            "fit": a("&Fit city", v.fit, "F", "Show the whole city", icon=SP.SP_TitleBarMaxButton),
            "zoom_in": a("Zoom &in", lambda: self.map.zoom(0.8), ["+", "="], "Zoom in"),
            "zoom_out": a("Zoom &out", lambda: self.map.zoom(1.25), "-", "Zoom out"),
            "follow": a("F&ollow selected agent", None, "L", "Keep the selected agent centred", checkable=True),
            "deselect": a("&Deselect", lambda: self.selection.select(None), "Escape", "Clear the selection"),
            "goals": a("Show &goals", None, "G", "Show every agent's goal", checkable=True),
            "fov": a("Show field of &view", None, "V", "Show the selected agent's field of view", checkable=True),
            "intersections": a("Show &intersections", None, "I", "Overlay the intersection lines and boxes",
                               checkable=True),
            "icons": a("Draw agents as icon &art", None, "A", "Switch between glyphs and the renderer's icon art",
                       checkable=True),
            "bp_step": a("Pause at step…", bp.add_step_dialog, None, "Add a breakpoint at a step"),
            "bp_here": a("Toggle breakpoint at this step", bp.toggle_here, "Ctrl+B",
                         "Pause when the shown step is reached"),
            "bp_goal_any": a("Pause when any agent reaches its goal", lambda: bp.add(Breakpoint("goal"))),
            "bp_clear": a("Clear breakpoints", bp.clear, None, "Remove every breakpoint"),
            "shortcuts": a("&Keyboard shortcuts", self.show_shortcuts, "F1", "List every shortcut"),
            "about": a("&About LogiCity Studio", lambda: help_.show_about(self)),
            "reset_layout": a("Reset &layout", self.layout_ctl.reset, None, "Restore the default dock layout"),
        }
        A["undo"], A["redo"] = self.undo_adapter.actions(self)
        self.addActions([A["undo"], A["redo"]])
        for option in ("follow", "goals", "fov", "intersections", "icons"):
            v.bind(option, A[option])
        self.actions_by_name = A

    def _build_menus(self) -> None:
        A = self.actions_by_name
        mb = self.menuBar()
        m = mb.addMenu("&File")
        m.addActions([A["open"], A["open_default"]])
        self.recent_menu = m.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(lambda: self.projects.fill_recent(self.recent_menu))
        for group in ((A["save"], A["save_as"]), (A["export_png"], A["export_anim"]), (A["quit"],)):
            m.addSeparator()
            m.addActions(list(group))
        mb.addMenu("&Edit").addActions([A["undo"], A["redo"]])
        m = mb.addMenu("&View")
        m.addActions([A["fit"], A["zoom_in"], A["zoom_out"], A["follow"], A["deselect"]])
        m.addSeparator()
        m.addMenu(self.view.colour_menu)
        m.addMenu(self.view.path_menu)
        m.addActions([A["goals"], A["fov"], A["intersections"], A["icons"], self.agents_ctl.action,
                      self.gridlock.action])
        m.addSeparator()
        self.docks_menu = m.addMenu("&Docks")
        m.addAction(A["reset_layout"])
        m = mb.addMenu("&Simulation")
        m.addActions([A["play"], A["step"], A["reset"], A["branch"], A["seed"]])
        speed = m.addMenu("S&peed")
        self.speed_controls = SpeedControls(self.playback, speed)
        speed.addSeparator()
        speed.addActions([A["faster"], A["slower"]])
        self.force_menu = m.addMenu("&Force selected agent's action")
        for label, action in (("Follow the rules", None),) + tuple((n, i) for i, n in enumerate(ACTION_NAMES)):
            self.force_menu.addAction(label).triggered.connect(
                lambda _=False, action=action: self.playback.force_action(action))
        m.addSeparator()
        m.addAction(self.spf.action)
        self.addAction(self.spf.action)   # its shortcut works whatever has focus
        m = mb.addMenu("&Timeline")
        m.addActions([A[k] for k in ("back", "forward", "first", "last", "prev_marker", "next_marker", "goto")])
        m = mb.addMenu("&Breakpoints")
        m.addActions([A["bp_here"], A["bp_step"]])
        self.bp.fill_agent_menu(m.addMenu("Pause when selected agent does"))
        m.addAction("Pause when selected agent reaches its goal").triggered.connect(
            lambda: self.bp.add_for_selected(None))
        m.addAction(A["bp_goal_any"])
        m.addSeparator()
        m.addAction(A["bp_clear"])
        mb.addMenu("&Help").addActions([A["shortcuts"], A["about"]])

    def _build_toolbar(self) -> None:
        A = self.actions_by_name
        tb = self.addToolBar("Playback")
        tb.setObjectName("toolbar_playback")
        tb.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        tb.addActions([A["reset"], A["play"], A["step"]])
        tb.addSeparator()
        tb.addWidget(QtWidgets.QLabel(" Speed "))
        self.speed_combo = self.speed_controls.combo
        tb.addWidget(self.speed_combo)
        tb.addSeparator()
        tb.addWidget(QtWidgets.QLabel(" Colour by "))
        self.colour_combo = self.view.colour_combo
        tb.addWidget(self.colour_combo)
        tb.addSeparator()
        tb.addActions([A["fit"], A["follow"]])

    def _wire(self) -> None:
        """Status bar, title and play button follow the session and the playback controller."""
        ev = self.session.events
        ev.message.connect(lambda e: self.status(e.value, 15000))
        ev.modified.connect(lambda e: self._update_title())
        ev.saved.connect(lambda e: self._update_title())     # the folder is in the title
        ev.project.connect(lambda e: (self._update_title(), self.projectLoaded.emit()))
        ev.history.connect(lambda e: self.historyReset.emit())
        ev.cursor.connect(lambda e: self.cursorChanged.emit(e.value))
        self.drawing.drawn.connect(self.frameDrawn.emit)
        self.playback.changed.connect(self._sync_play_action)
        self.status_labels.follow(self.playback)

    # ---- shell: questions, errors, status (controllers use these) -------------------------------------------------
    def ask(self, key: str, title: str, text: str, choices: list[tuple[str, str]], default: str) -> str:
        """Ask the user to choose; returns a choice key. ``self.answers[key]`` answers without a dialog."""
        if key in self.answers:
            return self.answers[key]
        if self.non_interactive:
            keys = [ck for ck, _ in choices]
            return "discard" if "discard" in keys else "cancel"
        return ask_choice(self, title, text, choices, default)

    def show_error(self, title: str, file: str, problem: str, label: str = "File") -> None:
        """A non-blocking error dialog naming the file (or, with ``label``, the component) and the problem; the
        studio keeps running."""
        self.last_error = (title, file, problem)
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Critical, title,
                                    f"<b>{html.escape(title)}</b>", QtWidgets.QMessageBox.StandardButton.Ok, self)
        box.setInformativeText(f"<p><b>{html.escape(label)}:</b> {html.escape(file)}</p><p><b>Problem:</b> "
                               f"{html.escape(problem)}</p>")
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setObjectName("errorDialog")
        box.open()
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

    def _sync_play_action(self) -> None:
        a = self.actions_by_name["play"]
        SP = QtWidgets.QStyle.StandardPixmap
        playing = self.playback.playing
        a.setText("&Pause" if playing else "&Play")
        a.setIcon(self.style().standardIcon(SP.SP_MediaPause if playing else SP.SP_MediaPlay))

    # ---- export and help --------------------------------------------------------------------------------------
    def export_png(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export map view", str(
                self.exporter.default_folder() / "map.png"), "PNG image (*.png)")
            if not path:
                return False
        from app.features.export.animation import save_view_png

        try:
            save_view_png(self.map, path)
        except Exception as exc:  # noqa: BLE001
            self.show_error("Could not export the view", str(path), f"{type(exc).__name__}: {exc}")
            return False
        self.exporter.remember_folder(Path(path).parent)
        self.status(f"Saved {path}")
        return True

    def export_animation(self) -> None:
        if self.session.history is not None:
            self.exporter.dialog().open()

    def all_actions(self) -> list[QtGui.QAction]:
        return help_.all_actions(self, self.actions_by_name.values())

    def shortcut_rows(self) -> list[tuple[str, str, str]]:
        return help_.shortcut_rows(self.all_actions())

    def shortcuts_html(self) -> str:
        return help_.shortcuts_html(self.shortcut_rows())

    def show_shortcuts(self) -> None:
        help_.show_shortcuts(self, self.shortcuts_html())

    # ---- shutdown -----------------------------------------------------------------------------------------------
    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:  # noqa: N802
        # quitting closes the Safe Path Following window too, with its own "Save this run?" (Cancel: stay)
        if not self._closing and not self.spf.close_window(discard=self.non_interactive):
            ev.ignore()
            self.status("Quit cancelled: the Safe Path Following window stays open")
            return
        if not self._closing and not self.projects.maybe_save("quit"):
            ev.ignore()
            return
        self._closing = True
        self.playback.pause()
        busy = self.panels.shutdown(wait_ms=300) + shutdown_features(self.features, wait_ms=300)
        if busy:
            # e.g. the icon generator is loading a model (cannot be interrupted) or finishing an image: close once
            # it has stopped; destroying its running thread would abort the process (finished images are saved)
            ev.ignore()
            self._close_when_idle(busy)
            return
        self.playback.stop()
        self.drawing.stop()
        self.layout_ctl.save()
        self.controller.shutdown()
        ev.accept()

    def _close_when_idle(self, busy: list[QtCore.QObject]) -> None:
        """Show what closing waits for (a panel's background work), and close once it has stopped."""
        waits = "; ".join(getattr(c, "waiting_message", "") or "waiting for background work to stop…" for c in busy)
        self.statusBar().showMessage(waits[:1].upper() + waits[1:] + " The studio closes by itself.")
        if self._close_pending:
            return
        self._close_pending = True
        for w in [self.menuBar(), self.centralWidget(), *self.docks.values(),
                  *self.findChildren(QtWidgets.QToolBar)]:
            w.setEnabled(False)  # the save question was answered: no more edits
        for c in busy:
            c.idle.connect(lambda: QtCore.QTimer.singleShot(0, self.close))

    # ---- forwarders for tests and scripts (the state is the session's, the work the controllers') ---------------
    spf_play_action = property(lambda self: self.spf.action)
    spf_play_window = property(lambda self: self.spf.window)
    project = Forward("session")
    history = Forward("session")
    cursor = Forward("session")
    selected = Forward("session")
    num_steps = Forward("session")
    markers = Forward("session")
    playing = Forward("playback")
    live = Forward("playback")
    replaying = Forward("playback")
    syncing = Forward("playback")
    sim_steps = Forward("playback")
    speed = Forward("playback")
    open_path = Forward("projects")
    save = Forward("projects", settable=True)   # a test replaces it
    save_to = Forward("projects")
    save_as = Forward("projects")
    _install_project = Forward("projects", "install")
    set_cursor = Forward("playback")
    play = Forward("playback")
    pause = Forward("playback")
    set_speed = Forward("playback")
    simulate_step = Forward("playback")
    branch_at = Forward("playback")
    reset_simulation = Forward("playback")
    force_action = Forward("playback")
    next_marker = Forward("playback")
    when_ready = Forward("playback")
    run_steps_then = Forward("playback")
    flush_redraw = Forward("drawing")
    _grounder = Forward("drawing", "grounder")
    _clause_labels = Forward("drawing", "clause_labels")
    select_agent = Forward("selection", "select")
    select_agent_by_name = Forward("selection", "select_by_name")
    set_colour_scheme = Forward("view")
    add_breakpoint = Forward("bp", "add")
    add_agent_breakpoint = Forward("bp", "add_for_selected")
    reset_layout = Forward("layout_ctl", "reset")
    hover_label = Forward("status_labels")
    state_label = Forward("status_labels")
    step_label = Forward("status_labels")
    agents_label = Forward("status_labels")
    speed_label = Forward("status_labels")

    @property
    def breakpoints(self) -> list[Breakpoint]:
        return list(self.session.breakpoints)

    @property
    def path_mode(self) -> str:
        return self.session.view.paths

    @property
    def scheme(self) -> str:
        """The colour-by scheme; set directly (command line, tests) it is checked at the next redraw."""
        return self.session.view.colour_by

    @scheme.setter
    def scheme(self, name: str) -> None:
        self.session.restore_view(colour_by=name)

    @property
    def dirty(self) -> bool:
        """Unsaved changes (the session's modified flag); ``dirty = False`` discards them, e.g. before quitting."""
        return self.session.modified

    @dirty.setter
    def dirty(self, on: bool) -> None:
        self.session.mark_modified() if on else self.session.mark_saved()
