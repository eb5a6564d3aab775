"""The studio's main window: map view in the centre, docks around it, menus, toolbar and status bar.

State it owns (GUI thread only): the open :class:`core.project.Project`, the recorded history (an
``EpisodeBuffer`` fed by the worker's frames), the timeline cursor, the selection, breakpoints and markers.
The simulation itself lives in :class:`app.worker.SimWorker` on another thread.

Playback model (what users of video players / rerun expect):

* The timeline spans every recorded state 0..T. Scrubbing, typing a step, ←/→, Home/End only *show* states.
* Play from the newest state simulates new steps live; Play from a past state first replays the recording at
  the chosen speed and continues live at its end. Breakpoints pause both.
* "Step" simulates one new step. From a past state that would overwrite the recorded future, so the studio asks
  first: branch here (discard steps after it), go to the newest state, or cancel.
"""
from __future__ import annotations

import html
import logging
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from core.codes import ACTION_NAMES, Action
from core.errors import LogiCityError
from core.project import (Project, describe_error, is_project, load_project, manifest_name, new_project,
                          open_episode, save_project)
from core.sim.episode import EpisodeBuffer
from core.sim.events import Breakpoint, MarkerIndex, check_breakpoints, event_kinds
from core.sim.frames import apply_frame, copy_episode
from core.view.colouring import DEFAULT_SCHEME, colour_schemes, scheme_problem
from core.view.inspect import Inspector
from core.view.scene import build_scene
from widgets.choice_dialog import ask_choice
from widgets.inspector import InspectorWidget
from widgets.legend import LegendWidget
from widgets.map_view import MapView
from widgets.stats import StatsWidget
from widgets.timeline import Marker, TimelineWidget

from .settings import add_recent, make_settings, recent_files, remove_recent
from .render_dock_install import install as install_render_dock
from .spf_play import install as install_spf_play
from .worker import ResetInfo, SimController

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODE = ROOT / "configs" / "modes" / "default.yaml"
SPEEDS: tuple[tuple[str, float], ...] = (("1 step/s", 1), ("2 steps/s", 2), ("5 steps/s", 5), ("10 steps/s", 10),
                                         ("20 steps/s", 20), ("50 steps/s", 50), ("As fast as possible", 0))
DEFAULT_SPEED = 10.0
#: While playing, the inspector and the statistics refresh at most this often (seconds); the map every frame.
SLOW_PERIOD = 0.25
STATE_VERSION = 1


class BreakpointCommand(QtGui.QUndoCommand):
    """Undoable change of the breakpoint list (add / remove / toggle / clear)."""

    def __init__(self, window: "MainWindow", new: list[Breakpoint], text: str) -> None:
        super().__init__(text)
        self.window = window
        self.old = list(window.breakpoints)
        self.new = list(new)

    def redo(self) -> None:
        self.window._set_breakpoints(self.new)

    def undo(self) -> None:
        self.window._set_breakpoints(self.old)


class MainWindow(QtWidgets.QMainWindow):
    """See the module docstring. Tests drive it through its public methods and actions."""

    projectLoaded = QtCore.Signal()
    cursorChanged = QtCore.Signal(int)
    historyReset = QtCore.Signal()
    frameDrawn = QtCore.Signal(int)

    def __init__(self, settings: QtCore.QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings if settings is not None else make_settings()
        self.setWindowTitle("LogiCity Studio")
        self.project: Project | None = None
        self.history: EpisodeBuffer | None = None
        self.inspector_model: Inspector | None = None
        self.cursor = 0
        self.selected: int | None = None
        self.scheme = DEFAULT_SCHEME
        #: Set for unattended runs (--screenshot): questions are answered without a dialog (unsaved changes
        #: are discarded, everything else cancelled) so the process always ends.
        self.non_interactive = False
        self.path_mode = "all"
        self.breakpoints: list[Breakpoint] = []
        self.markers = MarkerIndex()
        self.interventions: list[dict] = []
        self.undo = QtGui.QUndoStack(self)   # breakpoint edits; its clean state is part of "unsaved changes"
        self.undo.cleanChanged.connect(self._on_undo_clean_changed)
        self._other_changes = False          # unsaved changes outside the undo stack (steps, seed, forcing)
        self.sim_steps = 0            # recorded steps the worker's simulation has reproduced (== T normally)
        self.syncing = False
        self.live = False             # the worker is playing
        self.replaying = False        # the GUI is replaying recorded states
        self.speed = DEFAULT_SPEED
        self.last_error: tuple[str, str, str] | None = None   # (title, file, problem) of the last error dialog
        self.last_message = ""
        self.answers: dict[str, str] = {}   # tests pre-answer questions by key (see ask())
        self._pending_after_reset: list[Callable[[], None]] = []
        self._redraw_due = False
        self._last_draw = 0.0
        self._measured_rate = 0.0
        self._closing = False
        self._resume_from: int | None = None   # the state Play resumed replaying from (see _replay_tick)

        self.controller = SimController(self)
        app = QtWidgets.QApplication.instance()
        if app is not None:   # also stop the worker when the application quits without closing this window
            app.aboutToQuit.connect(self.controller.shutdown)
        w = self.controller.worker
        w.frameReady.connect(self._on_frame)
        w.resetDone.connect(self._on_reset_done)
        w.playingChanged.connect(self._on_worker_playing)
        w.breakpointHit.connect(self._on_breakpoint)
        w.failed.connect(self._on_worker_failed)
        w.branched.connect(self._on_branched)
        w.syncProgress.connect(self._on_sync_progress)
        w.synced.connect(self._on_synced)
        w.rate.connect(self._on_rate)
        self.controller.set_speed(self.speed)

        self._redraw_timer = QtCore.QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.timeout.connect(lambda: self.flush_redraw("later"))
        self._slow_dirty = False
        self._last_slow = 0.0
        self._ack_due: int | None = None
        self._ack_fallback = QtCore.QTimer(self)     # when the map is hidden nothing paints: ack anyway
        self._ack_fallback.setSingleShot(True)
        self._ack_fallback.timeout.connect(self._send_ack)
        self._painted = False
        self._slow_pending = False
        dispatcher = QtCore.QAbstractEventDispatcher.instance(QtCore.QThread.currentThread())
        if dispatcher is not None:
            dispatcher.aboutToBlock.connect(self._on_idle)
        self._replay_timer = QtCore.QTimer(self)
        self._replay_timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
        self._replay_timer.timeout.connect(self._replay_tick)

        self._build_ui()
        install_spf_play(self)   # Simulation ▸ Safe Path Following: drive the ego car (app/spf_play.py)
        install_render_dock(self)  # View ▸ Docks ▸ Render: icon generation (app/render_dock_install.py)
        self._restore_layout()

    # =========================================================================================================
    # UI construction
    # =========================================================================================================
    def _build_ui(self) -> None:
        self.map = MapView(self)
        self.map.setObjectName("mapView")
        self.setCentralWidget(self.map)
        self.map.agentClicked.connect(self._on_agent_clicked)
        self.map.painted.connect(self._on_map_painted)
        self.map.hovered.connect(self._on_hover)
        self.setDockOptions(QtWidgets.QMainWindow.DockOption.AnimatedDocks
                            | QtWidgets.QMainWindow.DockOption.AllowTabbedDocks
                            | QtWidgets.QMainWindow.DockOption.AllowNestedDocks)

        self.timeline = TimelineWidget()
        self.timeline.stepRequested.connect(self._on_timeline_request)
        self.timeline.scrubbing.connect(lambda on: on and self.pause())
        self.timeline.set_lanes([(k.name, k.label, k.colour) for k in event_kinds().values()])
        self.inspector = InspectorWidget()
        self.inspector.stepRequested.connect(lambda k: self.set_cursor(k))
        self.inspector.agentRequested.connect(lambda a: self.select_agent(a))
        self.stats = StatsWidget()
        self.stats.stepRequested.connect(lambda k: self.set_cursor(k))
        self.legend = LegendWidget()
        from widgets.map_view import glyph_symbols

        self.legend.set_glyphs(glyph_symbols())
        self.bp_list = QtWidgets.QListWidget()
        self.bp_list.itemChanged.connect(self._on_bp_item_changed)
        bp_panel = QtWidgets.QWidget()
        bl = QtWidgets.QVBoxLayout(bp_panel)
        bl.setContentsMargins(4, 4, 4, 4)
        bl.addWidget(self.bp_list)
        row = QtWidgets.QHBoxLayout()
        self.bp_remove_btn = QtWidgets.QPushButton("Remove")
        self.bp_remove_btn.clicked.connect(self._remove_selected_breakpoint)
        self.bp_clear_btn = QtWidgets.QPushButton("Clear all")
        self.bp_clear_btn.clicked.connect(lambda: self.clear_breakpoints())
        row.addWidget(self.bp_remove_btn)
        row.addWidget(self.bp_clear_btn)
        row.addStretch(1)
        bl.addLayout(row)

        self.docks: dict[str, QtWidgets.QDockWidget] = {}
        B, R, L = (QtCore.Qt.DockWidgetArea.BottomDockWidgetArea, QtCore.Qt.DockWidgetArea.RightDockWidgetArea,
                   QtCore.Qt.DockWidgetArea.LeftDockWidgetArea)
        self._build_actions()
        self._build_menus()
        self.add_dock(self.timeline, "Timeline", B, "timeline")
        scroll = QtWidgets.QScrollArea()        # a short dock scrolls instead of forcing a tall window
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self.inspector)
        self.inspector.setMinimumHeight(520)
        self.add_dock(scroll, "Inspector", R, "inspector")
        self.add_dock(self.stats, "Statistics", R, "statistics")
        self.add_dock(self.legend, "Legend", L, "legend")
        self.add_dock(bp_panel, "Breakpoints", L, "breakpoints")
        self.tabifyDockWidget(self.docks["legend"], self.docks["breakpoints"])
        self.docks["legend"].raise_()
        self.splitDockWidget(self.docks["inspector"], self.docks["statistics"], QtCore.Qt.Orientation.Vertical)
        self.resizeDocks([self.docks["inspector"], self.docks["statistics"]], [520, 300],
                         QtCore.Qt.Orientation.Vertical)
        self.resizeDocks([self.docks["inspector"]], [430], QtCore.Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["legend"]], [210], QtCore.Qt.Orientation.Horizontal)
        self._default_state = None
        self._build_toolbar()
        self._build_statusbar()

    def add_dock(self, widget: QtWidgets.QWidget, title: str, area: QtCore.Qt.DockWidgetArea,
                 name: str) -> QtWidgets.QDockWidget:
        """Dock ``widget`` and list it in View ▸ Docks. This is how further panels (e.g. the render dock:
        ``window.add_dock(RenderDock(...), "Render", Qt.RightDockWidgetArea, "render")``) join the window;
        ``name`` keys the remembered layout."""
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
        if checkable:
            a.setCheckable(True)
        if icon is not None:
            a.setIcon(self.style().standardIcon(icon))
        if slot is not None:
            (a.toggled if checkable else a.triggered).connect(slot)
        self.addAction(a)   # shortcuts work whatever has focus (except text fields)
        return a

    def _build_actions(self) -> None:
        SP = QtWidgets.QStyle.StandardPixmap
        A: dict[str, QtGui.QAction] = {}
        A["open"] = self._act("&Open project…", self.open_dialog, "Ctrl+O", "Open a project folder or a mode file",
                              icon=SP.SP_DialogOpenButton)
        A["open_default"] = self._act("Open the &default city", lambda: self.open_path(DEFAULT_MODE), None,
                                      "Open the bundled default city (configs/modes/default.yaml)")
        A["save"] = self._act("&Save project", self.save, "Ctrl+S", "Save the project (city, rules, episode)",
                              icon=SP.SP_DialogSaveButton)
        A["save_as"] = self._act("Save project &as…", self.save_as, "Ctrl+Shift+S", "Save into a new folder")
        A["export_png"] = self._act("Export view as &PNG…", self.export_png, "Ctrl+E", "Save the map view as PNG")
        A["export_anim"] = self._act("Export steps as GIF / &images…", self.export_animation, "Ctrl+Shift+E",
                                     "Export a step range as an animated GIF or an image sequence")
        A["quit"] = self._act("&Quit", self.close, "Ctrl+Q", "Quit the studio")
        A["undo"] = self.undo.createUndoAction(self, "&Undo")
        A["undo"].setShortcut(QtGui.QKeySequence("Ctrl+Z"))
        A["redo"] = self.undo.createRedoAction(self, "&Redo")
        A["redo"].setShortcuts([QtGui.QKeySequence("Ctrl+Shift+Z"), QtGui.QKeySequence("Ctrl+Y")])
        for k in ("undo", "redo"):
            self.addAction(A[k])
        A["play"] = self._act("&Play", self.toggle_play, "Space", "Play / pause", icon=SP.SP_MediaPlay)
        A["step"] = self._act("&Step (simulate one)", self.simulate_step, ["Ctrl+Right", "F10"],
                              "Simulate one step from the shown state", icon=SP.SP_MediaSkipForward)
        A["forward"] = self._act("Step &forward", self.step_forward, "Right",
                                 "Show the next step (simulates one at the newest step)")
        A["back"] = self._act("Step &back", self.step_back, "Left", "Show the previous step")
        A["first"] = self._act("&First step", lambda: self.set_cursor(0, pause=True), "Home", "Show step 0")
        A["last"] = self._act("&Newest step", lambda: self.set_cursor(self.num_steps, pause=True), "End",
                              "Show the newest recorded step")
        A["next_marker"] = self._act("Next &marker", self.next_marker, "]", "Jump to the next timeline marker")
        A["prev_marker"] = self._act("Previous marker", self.previous_marker, "[",
                                     "Jump to the previous timeline marker")
        A["goto"] = self._act("&Go to step…", self.goto_dialog, "Ctrl+G", "Type a step to show")
        A["reset"] = self._act("&Reset simulation", self.reset_simulation, "Ctrl+R",
                               "Discard the recording and restart from the seed", icon=SP.SP_BrowserReload)
        A["branch"] = self._act("&Branch here", self.branch_here, "Ctrl+Shift+B",
                                "Discard every step after the shown one")
        A["seed"] = self._act("Set s&eed…", self.seed_dialog, None, "Choose the random seed and restart")
        A["faster"] = self._act("Faster", lambda: self._nudge_speed(+1), "Ctrl+Up", "Increase the speed")
        A["slower"] = self._act("Slower", lambda: self._nudge_speed(-1), "Ctrl+Down", "Decrease the speed")
        A["fit"] = self._act("&Fit city", self.map_fit, "F", "Show the whole city", icon=SP.SP_TitleBarMaxButton)
        A["zoom_in"] = self._act("Zoom &in", lambda: self.map.zoom(0.8), ["+", "="], "Zoom in")
        A["zoom_out"] = self._act("Zoom &out", lambda: self.map.zoom(1.25), "-", "Zoom out")
        A["follow"] = self._act("F&ollow selected agent", self.set_follow, "L",
                                "Keep the selected agent centred", checkable=True)
        A["deselect"] = self._act("&Deselect", lambda: self.select_agent(None), "Escape", "Clear the selection")
        A["goals"] = self._act("Show &goals", lambda on: self.map.set_overlays(goals=on), "G",
                               "Show every agent's goal", checkable=True)
        A["goals"].setChecked(True)
        A["fov"] = self._act("Show field of &view", lambda on: self.map.set_overlays(fov=on), "V",
                             "Show the selected agent's field of view", checkable=True)
        A["fov"].setChecked(True)
        A["intersections"] = self._act("Show &intersections", self._toggle_intersections, "I",
                                       "Overlay the intersection lines and boxes", checkable=True)
        A["icons"] = self._act("Draw agents as icon &art", self._toggle_icons, "A",
                               "Switch between glyphs and the renderer's icon art", checkable=True)
        A["bp_step"] = self._act("Pause at step…", self.add_step_breakpoint_dialog, None,
                                 "Add a breakpoint at a step")
        A["bp_here"] = self._act("Toggle breakpoint at this step", self.toggle_breakpoint_here, "Ctrl+B",
                                 "Pause when the shown step is reached")
        A["bp_goal_any"] = self._act("Pause when any agent reaches its goal",
                                     lambda: self.add_breakpoint(Breakpoint("goal")))
        A["bp_clear"] = self._act("Clear breakpoints", self.clear_breakpoints, None, "Remove every breakpoint")
        A["shortcuts"] = self._act("&Keyboard shortcuts", self.show_shortcuts, "F1", "List every shortcut")
        A["about"] = self._act("&About LogiCity Studio", self.show_about)
        A["reset_layout"] = self._act("Reset &layout", self.reset_layout, None, "Restore the default dock layout")
        self.actions_by_name = A

    def _build_menus(self) -> None:
        A = self.actions_by_name
        mb = self.menuBar()
        m = mb.addMenu("&File")
        m.addActions([A["open"], A["open_default"]])
        self.recent_menu = m.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        m.addSeparator()
        m.addActions([A["save"], A["save_as"]])
        m.addSeparator()
        m.addActions([A["export_png"], A["export_anim"]])
        m.addSeparator()
        m.addAction(A["quit"])
        m = mb.addMenu("&Edit")
        m.addActions([A["undo"], A["redo"]])
        m = mb.addMenu("&View")
        m.addActions([A["fit"], A["zoom_in"], A["zoom_out"], A["follow"], A["deselect"]])
        m.addSeparator()
        self.colour_menu = m.addMenu("&Colour agents by")
        self.colour_group = QtGui.QActionGroup(self)
        self.colour_group.triggered.connect(lambda a: self.set_colour_scheme(a.text()))
        self._fill_colour_menu(list(colour_schemes()))
        paths = m.addMenu("Planned &paths")
        self.path_group = QtGui.QActionGroup(self)
        for label, mode in (("All agents", "all"), ("Selected agent only", "selected"), ("None", "none")):
            a = paths.addAction(label)
            a.setCheckable(True)
            a.setData(mode)
            a.setChecked(mode == self.path_mode)
            self.path_group.addAction(a)
        self.path_group.triggered.connect(lambda a: self.set_path_mode(a.data()))
        m.addActions([A["goals"], A["fov"], A["intersections"], A["icons"]])
        m.addSeparator()
        self.docks_menu = m.addMenu("&Docks")
        m.addAction(A["reset_layout"])
        m = mb.addMenu("&Simulation")
        m.addActions([A["play"], A["step"], A["reset"], A["branch"], A["seed"]])
        speed = m.addMenu("S&peed")
        self.speed_group = QtGui.QActionGroup(self)
        for label, sps in SPEEDS:
            a = speed.addAction(label)
            a.setCheckable(True)
            a.setData(sps)
            a.setChecked(sps == self.speed)
            self.speed_group.addAction(a)
        self.speed_group.triggered.connect(lambda a: self.set_speed(float(a.data())))
        speed.addSeparator()
        speed.addActions([A["faster"], A["slower"]])
        self.force_menu = m.addMenu("&Force selected agent's action")
        for label, act in (("Follow the rules", None),) + tuple((n, i) for i, n in enumerate(ACTION_NAMES)):
            a = self.force_menu.addAction(label)
            a.triggered.connect(lambda _=False, act=act: self.force_action(act))
        m = mb.addMenu("&Timeline")
        m.addActions([A["back"], A["forward"], A["first"], A["last"], A["prev_marker"], A["next_marker"],
                      A["goto"]])
        m = mb.addMenu("&Breakpoints")
        m.addActions([A["bp_here"], A["bp_step"]])
        self.bp_agent_menu = m.addMenu("Pause when selected agent does")
        for n in ACTION_NAMES:
            a = self.bp_agent_menu.addAction(n)
            a.triggered.connect(lambda _=False, n=n: self.add_agent_breakpoint(n))
        goal = m.addAction("Pause when selected agent reaches its goal")
        goal.triggered.connect(lambda: self.add_agent_breakpoint(None))
        m.addAction(A["bp_goal_any"])
        m.addSeparator()
        m.addAction(A["bp_clear"])
        m = mb.addMenu("&Help")
        m.addActions([A["shortcuts"], A["about"]])

    def _fill_colour_menu(self, names: list[str]) -> None:
        self.colour_menu.clear()
        for a in list(self.colour_group.actions()):
            self.colour_group.removeAction(a)
        for name in names:
            a = self.colour_menu.addAction(name)
            a.setCheckable(True)
            a.setChecked(name == self.scheme)
            self.colour_group.addAction(a)
        if hasattr(self, "colour_combo"):
            self.colour_combo.blockSignals(True)
            self.colour_combo.clear()
            self.colour_combo.addItems(names)
            self.colour_combo.setCurrentText(self.scheme)
            self.colour_combo.blockSignals(False)

    def _build_toolbar(self) -> None:
        A = self.actions_by_name
        tb = self.addToolBar("Playback")
        tb.setObjectName("toolbar_playback")
        tb.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        tb.addActions([A["reset"], A["play"], A["step"]])
        tb.addSeparator()
        tb.addWidget(QtWidgets.QLabel(" Speed "))
        self.speed_combo = QtWidgets.QComboBox()
        for label, sps in SPEEDS:
            self.speed_combo.addItem(label, sps)
        self.speed_combo.setCurrentIndex([s for _, s in SPEEDS].index(self.speed))
        self.speed_combo.currentIndexChanged.connect(lambda i: self.set_speed(float(self.speed_combo.itemData(i))))
        self.speed_combo.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        tb.addWidget(self.speed_combo)
        tb.addSeparator()
        tb.addWidget(QtWidgets.QLabel(" Colour by "))
        self.colour_combo = QtWidgets.QComboBox()
        self.colour_combo.addItems(list(colour_schemes()))
        self.colour_combo.setCurrentText(self.scheme)
        self.colour_combo.textActivated.connect(self.set_colour_scheme)
        self.colour_combo.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        tb.addWidget(self.colour_combo)
        tb.addSeparator()
        tb.addActions([A["fit"], A["follow"]])

    def _build_statusbar(self) -> None:
        sb = self.statusBar()
        self.hover_label = QtWidgets.QLabel("")
        self.hover_label.setMinimumWidth(200)
        sb.addWidget(self.hover_label, 1)
        self.state_label = QtWidgets.QLabel("")
        self.step_label = QtWidgets.QLabel("Step 0 / 0")
        self.agents_label = QtWidgets.QLabel("0 agents")
        self.speed_label = QtWidgets.QLabel("")
        for w in (self.state_label, self.step_label, self.agents_label, self.speed_label):
            w.setContentsMargins(8, 0, 8, 0)
            sb.addPermanentWidget(w)
        self._update_status()

    # =========================================================================================================
    # layout persistence
    # =========================================================================================================
    def _restore_layout(self) -> None:
        self._default_state = self.saveState(STATE_VERSION)
        # which docks the default layout shows (the Render dock starts hidden); the window is not shown yet, so
        # "not explicitly hidden" is what counts
        self._default_visible = {name: not d.isHidden() for name, d in self.docks.items()}
        geo = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geo is not None:
            self.restoreGeometry(geo)
        else:
            self.resize(1400, 900)
        if state is not None:
            self.restoreState(state, STATE_VERSION)
        self.scheme = str(self.settings.value("view/colour_by", self.scheme))
        self._check_scheme("the remembered settings")
        self.path_mode = str(self.settings.value("view/paths", self.path_mode))
        for a in self.path_group.actions():
            a.setChecked(a.data() == self.path_mode)
        self.map.set_overlays(paths=self.path_mode)
        sp = float(self.settings.value("sim/speed", DEFAULT_SPEED))
        if sp in [s for _, s in SPEEDS]:
            self.set_speed(sp)

    def save_layout(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState(STATE_VERSION))
        self.settings.setValue("view/colour_by", self.scheme)
        self.settings.setValue("view/paths", self.path_mode)
        self.settings.setValue("sim/speed", self.speed)
        self.settings.sync()

    def reset_layout(self) -> None:
        if self._default_state is not None:
            self.restoreState(self._default_state, STATE_VERSION)
            for name, d in self.docks.items():
                d.setVisible(self._default_visible.get(name, True))

    # =========================================================================================================
    # dialogs (tests pre-answer through self.answers)
    # =========================================================================================================
    def ask(self, key: str, title: str, text: str, choices: list[tuple[str, str]], default: str) -> str:
        """Ask the user to choose; returns a choice key. ``self.answers[key]`` answers without a dialog."""
        if key in self.answers:
            return self.answers[key]
        if self.non_interactive:
            keys = [ck for ck, _ in choices]
            return "discard" if "discard" in keys else "cancel"
        return ask_choice(self, title, text, choices, default)

    def show_error(self, title: str, file: str, problem: str) -> None:
        """A non-blocking error dialog naming the file and the problem; the studio keeps running."""
        self.last_error = (title, file, problem)
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Critical, title,
                                    f"<b>{html.escape(title)}</b>", QtWidgets.QMessageBox.StandardButton.Ok, self)
        box.setInformativeText(f"<p><b>File:</b> {html.escape(file)}</p><p><b>Problem:</b> "
                               f"{html.escape(problem)}</p>")
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setObjectName("errorDialog")
        box.open()
        self.status(f"{title}: {problem}")

    def status(self, text: str, ms: int = 6000) -> None:
        self.last_message = text
        self.statusBar().showMessage(text, ms)

    # =========================================================================================================
    # project handling
    # =========================================================================================================
    def open_default(self) -> bool:
        return self.open_path(DEFAULT_MODE)

    def open_dialog(self) -> None:
        if not self._maybe_save("open another project"):
            return
        start = str(self.project.root) if self.project and self.project.root else str(ROOT / "configs" / "modes")
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Open project or mode file", start,
            "Projects and mode files (project.yaml *.yaml *.yml);;All files (*)")
        if path:
            self.open_path(path, ask_save=False)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        files = recent_files(self.settings)
        if not files:
            a = self.recent_menu.addAction("(none yet)")
            a.setEnabled(False)
        for f in files:
            a = self.recent_menu.addAction(f)
            a.triggered.connect(lambda _=False, f=f: self.open_path(f))
        if files:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list").triggered.connect(
                lambda: self.settings.setValue("recent/files", []))

    def open_path(self, path: str | Path, ask_save: bool = True) -> bool:
        """Open a project folder, its project.yaml, or a mode file. Errors show a dialog; returns success."""
        if ask_save and not self._maybe_save("open another project"):
            return False
        p = Path(path)
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.WaitCursor)
        try:
            if is_project(p):
                project = load_project(p)
                episode = open_episode(project)
            elif p.is_file() and p.suffix in (".yaml", ".yml"):
                from core.sim.config import load_mode

                project = new_project(load_mode(p))
                episode = None
            elif not p.exists():
                raise LogiCityError("file or folder not found", p)
            else:
                raise LogiCityError("not a project (no project.yaml) and not a mode file (.yaml)", p)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a dialog, the studio keeps running
            file, problem = describe_error(exc)
            if file == "(internal error)":
                file = str(p)
            self.show_error("Could not open the project", file, problem)
            if recent_files(self.settings) and str(p.resolve()) in recent_files(self.settings) and not p.exists():
                remove_recent(self.settings, str(p.resolve()))
            return False
        finally:
            QtWidgets.QApplication.restoreOverrideCursor()
        try:
            self._install_project(project, episode)
        except Exception as exc:  # noqa: BLE001 - a project that loads but cannot be shown: report, start clean
            file, problem = describe_error(exc)
            self.show_error("Could not show the project", str(p) if file == "(internal error)" else file, problem)
            return False
        if project.root is not None:
            add_recent(self.settings, project.root)
        elif p.exists():
            add_recent(self.settings, p)
        return True

    def _install_project(self, project: Project, episode) -> None:
        self.pause()
        self.project = project
        cfg = project.config
        self.inspector_model = Inspector(cfg)
        self.map.set_city(cfg.city)
        concepts = list(cfg.agents.table().concepts)
        self._fill_colour_menu(list(colour_schemes(concepts)))
        studio = dict(project.studio or {})
        if studio.get("colour_by") is not None and not self._check_scheme("the project", studio["colour_by"],
                                                                            concepts):
            pass   # reported; the current scheme stays
        elif studio.get("colour_by") is not None:
            self.scheme = studio["colour_by"]
        self._check_scheme("the remembered settings", concepts=concepts)
        self._fill_colour_menu(list(colour_schemes(concepts)))
        bps = []
        for d in studio.get("breakpoints", []) or []:
            try:
                bps.append(Breakpoint.from_dict(d))
            except (ValueError, TypeError):
                pass
        self.undo.clear()
        self._set_breakpoints(bps)
        self.selected = None
        self.inspector.clear()
        self.stats.clear()
        self.markers.reset()
        self.timeline.set_markers([])
        want_sel = studio.get("selected")
        want_step = studio.get("step")
        if episode is not None:
            self.history = copy_episode(episode)
            self.interventions = list(self.history.meta.get("interventions", []) or [])
            names = list(self.history.agents.names)
            self.selected = names.index(want_sel) if want_sel in names else None
            self.markers.selected = self.selected
            self._after_history_reset()
            k = want_step if isinstance(want_step, int) and 0 <= want_step <= self.num_steps else self.num_steps
            self.set_cursor(k)
            self.syncing = True
            self.sim_steps = 0
            positions = np.array(self.history.array("positions"), copy=True)
            self.controller.sync(cfg, int(self.history.meta.get("seed", project.seed)), positions,
                                 self.interventions)
            self.dirty = False
        else:
            self.history = None
            self.interventions = []
            self.syncing = False
            self.sim_steps = 0
            self._want_selected = want_sel
            self.controller.reset(cfg, project.seed)
            self.dirty = False
        self._update_title()
        self._update_status()
        self.projectLoaded.emit()

    def _check_scheme(self, source: str, name: str | None = None, concepts: list[str] | None = None) -> bool:
        """Is ``name`` (default: the current scheme) a colour-by scheme? If not, say so in the status line and
        the log, naming where it came from, and colour by the default scheme when it was the current one."""
        name = self.scheme if name is None else name
        problem = scheme_problem(name, concepts)
        if problem is None:
            return True
        if name == self.scheme:
            self.scheme = DEFAULT_SCHEME
        text = f"Ignored the colour-by setting from {source}: {problem}. Colouring by {self.scheme}."
        log.warning(text)
        self.status(text, 15000)
        return False

    def _update_title(self) -> None:
        name = self.project.name if self.project else "no project"
        where = f" — {self.project.root}" if self.project and self.project.root else " (not saved)"
        self.setWindowTitle(f"{name}[*]{where} · LogiCity Studio")
        self.setWindowModified(self.dirty)

    def _on_undo_clean_changed(self, _clean: bool) -> None:
        try:
            self._update_title()
        except RuntimeError:   # the window is being destroyed (its undo stack goes with it)
            pass

    @property
    def dirty(self) -> bool:
        """Unsaved changes: recorded steps, seed or forced actions, or breakpoint edits since the last save (the
        undo stack is clean at the save point, so undoing back to it counts as unchanged)."""
        return self._other_changes or not self.undo.isClean()

    @dirty.setter
    def dirty(self, on: bool) -> None:
        self._other_changes = bool(on)
        if not on:
            self.undo.setClean()

    def _set_dirty(self, on: bool = True) -> None:
        was = self.dirty
        self.dirty = on
        if self.dirty != was:
            self._update_title()

    def _studio_state(self) -> dict[str, Any]:
        d: dict[str, Any] = {"colour_by": self.scheme, "step": int(self.cursor)}
        if self.selected is not None and self.history is not None:
            d["selected"] = self.history.agents.names[self.selected]
        if self.breakpoints:
            d["breakpoints"] = [b.to_dict() for b in self.breakpoints]
        return d

    def save(self) -> bool:
        if self.project is None:
            return False
        if self.project.root is None:
            return self.save_as()
        return self.save_to(self.project.root)

    def save_as(self) -> bool:
        if self.project is None:
            return False
        start = str(self.project.root.parent if self.project.root else Path.home())
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Save project into folder (new or empty)", start)
        if not folder:
            return False
        return self.save_to(folder)

    def save_to(self, folder: str | Path) -> bool:
        """Save the project and the current recording into ``folder`` (atomic; errors show a dialog)."""
        if self.project is None:
            return False
        folder = Path(folder)
        own = self.project.root is not None and folder.resolve() == Path(self.project.root).resolve()
        if folder.exists() and not folder.is_dir():
            self.show_error("Could not save the project", str(folder), "this is a file, not a folder")
            return False
        if not own and folder.is_dir() and any(folder.iterdir()) and not is_project(folder):
            self.show_error("Could not save the project", str(folder),
                            "the folder is not empty and holds no project; choose an empty or new folder")
            return False
        replace = False
        if not own and is_project(folder):
            other = manifest_name(folder)
            ans = self.ask("overwrite", "Replace the project?",
                           f"The folder {folder} already holds the project “{other}”.\n\nReplace it with "
                           f"“{self.project.name}”? The files of “{other}” are deleted (other files in the folder "
                           f"stay).", [("replace", "Replace"), ("cancel", "Cancel")], "cancel")
            if ans != "replace":
                self.status("Not saved: the folder holds another project")
                return False
            replace = True
        self.project.studio = self._studio_state()
        meta = {"interventions": self.interventions} if self.interventions else None
        try:
            save_project(self.project, folder, episode=self.history, episode_meta=meta, replace=replace)
        except Exception as exc:  # noqa: BLE001
            file, problem = describe_error(exc)
            self.show_error("Could not save the project", str(folder) if file == "(internal error)" else file,
                            problem)
            return False
        add_recent(self.settings, folder)
        self._set_dirty(False)
        self._update_title()
        self.status(f"Saved to {folder}")
        return True

    def _maybe_save(self, doing: str) -> bool:
        """Unsaved-changes prompt. Returns False when the user cancels."""
        if not self.dirty or self.project is None:
            return True
        ans = self.ask("unsaved", "Unsaved changes",
                       f"The project “{self.project.name}” has unsaved changes (recorded steps, breakpoints). "
                       f"Save them before you {doing}?",
                       [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")], "save")
        if ans == "save":
            return self.save()
        return ans == "discard"

    # =========================================================================================================
    # history / frames from the worker
    # =========================================================================================================
    @property
    def num_steps(self) -> int:
        return self.history.num_steps if self.history is not None else 0

    def _on_reset_done(self, gen: int, info: ResetInfo) -> None:
        if gen != self.controller.gen:
            return
        self.history = EpisodeBuffer(info.frame.agents, info.meta, witness_vars=info.witness_vars)
        apply_frame(self.history, info.frame)
        self.controller.ack(0)
        if self.interventions:
            self.history.meta["interventions"] = list(self.interventions)
        self.sim_steps = 0
        self.syncing = False
        want = getattr(self, "_want_selected", None)
        names = list(self.history.agents.names)
        self.selected = names.index(want) if want in names else (self.selected if self.selected is not None
                                                                 and self.selected < len(names) else None)
        self._want_selected = None
        self.markers.reset()
        self.markers.selected = self.selected
        self._after_history_reset()
        self.set_cursor(0)
        self.status(f"Ready: {len(names)} agents, seed {info.seed}. Press Space to play.")
        pending, self._pending_after_reset = self._pending_after_reset, []
        for fn in pending:
            fn()

    def _refresh_lanes(self, kinds=None) -> None:
        """One timeline lane per registered event kind (kinds registered after start-up get theirs too)."""
        kinds = kinds if kinds is not None else event_kinds()
        lanes = [(k.name, k.label, k.colour) for k in kinds.values()]
        if lanes != self.timeline.bar.lanes:
            self.timeline.set_lanes(lanes)

    def _after_history_reset(self) -> None:
        assert self.history is not None
        self._refresh_lanes()
        self.timeline.set_range(self.num_steps)
        self.timeline.set_markers([])
        self.markers.scanned = 0
        self._add_markers(self.markers.update(self.history))
        self.stats.clear()
        self._slow_dirty = True
        self._refresh_slow()
        self.historyReset.emit()

    def _add_markers(self, events) -> None:
        kinds = event_kinds()
        self.timeline.add_markers([Marker(e.step, e.kind, kinds[e.kind].colour, e.text) for e in events
                                   if e.kind in kinds])

    def _rebuild_markers(self) -> None:
        kinds = event_kinds()
        self._refresh_lanes(kinds)
        self.timeline.set_markers([Marker(e.step, e.kind, kinds[e.kind].colour, e.text)
                                   for e in self.markers.events if e.kind in kinds])

    def _on_frame(self, gen: int, frames) -> None:
        if gen != self.controller.gen or self.history is None:
            return
        was_newest = self.cursor >= self.num_steps
        try:
            for frame in frames:
                apply_frame(self.history, frame)
        except ValueError as exc:   # should not happen: a frame out of order
            self._on_worker_failed(gen, f"internal: {exc}")
            return
        if not self.live:
            self.controller.ack(self.history.num_states - 1)
        self.sim_steps = self.num_steps
        self._add_markers(self.markers.update(self.history))
        self.timeline.set_range(self.num_steps)
        self._set_dirty(True)
        self._slow_dirty = True
        if was_newest or self.live:
            self.set_cursor(self.num_steps)
        else:
            self._update_status()
        if getattr(self, "_screenshot_target", None) is not None:
            self._screenshot_progress()

    def _on_worker_playing(self, gen: int, on: bool) -> None:
        if gen != self.controller.gen:
            return
        self.live = on
        self._sync_play_action()
        if not on:
            self._slow_dirty = True
            self._refresh_slow()

    def _on_breakpoint(self, gen: int, hit) -> None:
        if gen != self.controller.gen:
            return
        self.live = False
        self._sync_play_action()
        self.status(f"Breakpoint: {hit.text}")
        self.set_cursor(min(hit.show, self.num_steps))

    def _on_worker_failed(self, gen: int, text: str) -> None:
        self.live = False
        self._sync_play_action()
        self.show_error("Simulation problem", self.project.config.source or "(configuration)"
                        if self.project else "(no project)", text)

    def _on_branched(self, gen: int, k: int) -> None:
        if gen == self.controller.gen:
            self.sim_steps = k
            self.status(f"Branched at step {k}: the steps after it were discarded")

    def _on_sync_progress(self, gen: int, done: int, total: int) -> None:
        if gen == self.controller.gen:
            self.state_label.setText(f"re-simulating {done}/{total}")

    def _on_synced(self, gen: int, matched: int) -> None:
        if gen != self.controller.gen:
            return
        self.syncing = False
        self.sim_steps = matched
        if matched < self.num_steps:
            self.status(f"The loaded episode can be continued from step {matched} only (re-simulation differs "
                        f"after it); stepping beyond offers to branch there.", 12000)
        else:
            self.status(f"Loaded episode ready ({self.num_steps} steps); it can be continued.")
        self._update_status()

    def _on_rate(self, r: float) -> None:
        self._measured_rate = r
        self._update_status()

    # =========================================================================================================
    # cursor, selection, drawing
    # =========================================================================================================
    def set_cursor(self, k: int, pause: bool = False) -> None:
        """Show state k (clamped to 0..T) at once."""
        if pause:
            self.pause()
        k = int(min(max(k, 0), self.num_steps))
        changed = k != self.cursor
        self.cursor = k
        self.timeline.set_value(k)
        self._schedule_redraw()
        if changed:
            self.cursorChanged.emit(k)

    def _on_timeline_request(self, k: int) -> None:
        """The user asked for step k (typed, clicked, dragged): stop playing so the view stays there."""
        if self.replaying or self.live:
            self.pause()
        self.set_cursor(k)

    def _on_map_painted(self) -> None:
        self._painted = True

    def _on_idle(self) -> None:
        """The GUI event loop is about to sleep: everything queued (deferred plot paints included) is done,
        so the worker may compute the next burst without competing for the GIL."""
        if self._ack_due is not None and self._painted and not self._slow_pending:
            self._send_ack()

    def _deferred_slow(self) -> None:
        self._slow_pending = False
        self._refresh_slow()

    def _send_ack(self) -> None:
        self._ack_fallback.stop()
        if self._ack_due is not None and self.history is not None:
            self._ack_due = None
            self.controller.ack(self.history.num_states - 1)

    def _schedule_redraw(self) -> None:
        """Coalesce redraws: at most one per event-loop pass, and at most 60 per second while playing."""
        if self._redraw_timer.isActive():
            return
        wait = 0
        if self.replaying or (self.live and self.speed > 0):
            wait = max(0, int(1000 / 60 - (time.perf_counter() - self._last_draw) * 1000))
        self._redraw_timer.start(wait)

    def flush_redraw(self, panels: str = "now") -> None:
        """Draw the current state now (the redraw timer calls this; benchmarks and tests may too).

        ``panels``: refresh the inspector and statistics ``"now"`` (tests, explicit calls) or ``"later"`` (in
        their own event-loop pass right after the map frame; what scrubbing does, so the map answers first).
        """
        self._redraw_timer.stop()
        self._last_draw = time.perf_counter()
        if self.history is None or self.project is None:
            self._update_status()
            return
        k = min(self.cursor, self.num_steps)
        if self.scheme not in colour_schemes(list(self.history.agents.concepts)):   # never a KeyError per frame
            self._check_scheme("the view", concepts=list(self.history.agents.concepts))
            self._fill_colour_menu(list(colour_schemes(list(self.history.agents.concepts))))
        sc = build_scene(self.history, k, scheme=self.scheme, selected=self.selected, paths=self.path_mode,
                         grounder=self._grounder(), clause_labels=self._clause_labels())
        self.map.show_scene(sc)
        self.legend.set_agents(sc.colouring.title, sc.colouring.legend())
        self._update_status()
        self._slow_dirty = True
        playing = self.live or self.replaying
        if not playing and panels == "now":
            self._refresh_slow()
        elif not playing:
            if not self._slow_pending:
                self._slow_pending = True
                QtCore.QTimer.singleShot(0, self._deferred_slow)
        elif self._last_draw - self._last_slow >= SLOW_PERIOD and not self._slow_pending:
            # a little later, in its own event-loop pass: the map frame and the plots never share one stall
            self._slow_pending = True
            self._last_slow = self._last_draw
            QtCore.QTimer.singleShot(12, self._deferred_slow)
        if playing:
            # ack once this frame is on screen: GUI and simulation take turns (see app/worker.py)
            self._ack_due = self.history.num_states - 1
            self._painted = False
            self._ack_fallback.start(100)
        self.frameDrawn.emit(k)

    def _grounder(self):
        if self.inspector_model is None:
            return None
        try:
            return self.inspector_model.grounder
        except Exception:  # noqa: BLE001 - no field of view is better than no map
            return None

    def _clause_labels(self) -> list[str]:
        from core.view.stats import clause_labels

        return clause_labels(self.history) if self.history is not None else []

    def _refresh_slow(self) -> None:
        """Inspector and statistics: at once when paused; while playing, every SLOW_PERIOD and one of the two
        per frame (alternating), so no single frame pays for every plot."""
        if not self._slow_dirty or self.history is None:
            return
        self._last_slow = time.perf_counter()
        k = min(self.cursor, self.num_steps)
        if self.live or self.replaying:
            self._slow_turn = not getattr(self, "_slow_turn", False)
            if self._slow_turn and self.docks["statistics"].isVisible():
                self.stats.refresh(self.history, k)
            elif self.docks["inspector"].isVisible():
                self.update_inspector()
            return
        self._slow_dirty = False
        self.stats.refresh(self.history, k)
        self.update_inspector()

    def update_inspector(self) -> None:
        if self.history is None or self.selected is None or self.inspector_model is None:
            self.inspector.clear()
            return
        k = min(self.cursor, self.num_steps)
        rep = self.inspector_model.report(self.history, k, self.selected, seed=int(self.history.meta.get("seed", 0)))
        colour = None
        sc = self.map.scene_data
        if sc is not None and sc.step == k and self.selected < len(sc.rgb):
            colour = tuple(int(v) for v in sc.rgb[self.selected])
        self.inspector.set_report(rep, colour)

    def select_agent(self, agent: int | None) -> None:
        if self.history is None:
            return
        if agent is not None and not 0 <= agent < len(self.history.agents):
            agent = None
        self.selected = agent
        self.markers.set_selected(self.history, agent)
        self._rebuild_markers()
        self._slow_dirty = True
        self._schedule_redraw()
        self.flush_redraw() if not (self.live or self.replaying) else None
        if agent is not None:
            self.status(f"Selected {self.history.agents.names[agent]}")

    def select_agent_by_name(self, name: str) -> None:
        if self.history is not None and name in self.history.agents.names:
            self.select_agent(self.history.agents.names.index(name))

    def _on_agent_clicked(self, agent: int) -> None:
        self.select_agent(None if agent < 0 else agent)

    def _on_hover(self, info) -> None:
        if info is None:
            self.hover_label.setText("")
            return
        text = f"cell ({info.row}, {info.col}) · {info.semantic}"
        if info.agent is not None and self.history is not None:
            k = min(self.cursor, self.num_steps)
            act = ""
            if k < self.num_steps:
                act = f", {ACTION_NAMES[int(self.history.step_record(k).decided[info.agent])]}"
            text += f" · {info.agent_name}{act}"
        self.hover_label.setText(text)

    def set_colour_scheme(self, name: str) -> None:
        concepts = list(self.history.agents.concepts) if self.history is not None else None
        if name not in colour_schemes(concepts):
            return
        self.scheme = name
        for a in self.colour_group.actions():
            a.setChecked(a.text() == name)
        if self.colour_combo.currentText() != name:
            self.colour_combo.setCurrentText(name)
        self._schedule_redraw()

    def set_path_mode(self, mode: str) -> None:
        self.path_mode = mode
        self.map.set_overlays(paths=mode)
        self._schedule_redraw()

    def set_follow(self, on: bool) -> None:
        self.map.set_follow(on)

    def map_fit(self) -> None:
        self.actions_by_name["follow"].setChecked(False)
        self.map.fit()

    def _toggle_intersections(self, on: bool) -> None:
        self.map.set_intersections_visible(on)
        self.legend.set_intersections_visible(on)

    def _toggle_icons(self, on: bool) -> None:
        try:
            self.map.set_style("icons" if on else "glyphs")
        except Exception as exc:  # noqa: BLE001 - icon art unavailable: stay with glyphs
            self.map.set_style("glyphs")
            self.actions_by_name["icons"].setChecked(False)
            self.show_error("Icon art unavailable", "(icon set)", f"{type(exc).__name__}: {exc}")

    def _update_status(self) -> None:
        t = self.num_steps
        self.step_label.setText(f"Step {min(self.cursor, t)} / {t}")
        n = len(self.history.agents) if self.history is not None else 0
        self.agents_label.setText(f"{n} agents")
        target = "max" if self.speed <= 0 else f"{self.speed:g}"
        measured = f" ({self._measured_rate:.1f} measured)" if self.live and self._measured_rate else ""
        self.speed_label.setText(f"Speed: {target} steps/s{measured}")
        if self.syncing:
            pass
        elif self.live:
            self.state_label.setText("▶ simulating")
        elif self.replaying:
            self.state_label.setText("▶ replaying")
        else:
            self.state_label.setText("❚❚ paused")

    # =========================================================================================================
    # playback
    # =========================================================================================================
    @property
    def playing(self) -> bool:
        return self.live or self.replaying

    def _sync_play_action(self) -> None:
        a = self.actions_by_name["play"]
        SP = QtWidgets.QStyle.StandardPixmap
        if self.playing:
            a.setText("&Pause")
            a.setIcon(self.style().standardIcon(SP.SP_MediaPause))
        else:
            a.setText("&Play")
            a.setIcon(self.style().standardIcon(SP.SP_MediaPlay))
        self._update_status()

    def toggle_play(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def play(self) -> None:
        if self.history is None:
            return
        if self.cursor < self.num_steps:
            self._resume_from = self.cursor   # a breakpoint that shows this state does not fire again at once
            self.replaying = True
            self._replay_timer.start(self._replay_interval())
        else:
            self._play_live()
        self._sync_play_action()

    def _replay_interval(self) -> int:
        return 16 if self.speed <= 0 else max(1, int(1000 / self.speed))

    def _play_live(self) -> None:
        if self.syncing:
            self.status("Still re-simulating the loaded episode; play again in a moment.")
            return
        if self.sim_steps < self.num_steps:
            if not self._offer_branch(self.sim_steps, reason="continue"):
                return
        self.live = True
        self.controller.play()

    def pause(self) -> None:
        was = self.playing
        self._replay_timer.stop()
        self.replaying = False
        if self.live:
            self.controller.pause()
        self.live = False
        if self.history is not None:
            self.controller.ack(self.history.num_states - 1)
        if was:
            self._sync_play_action()
            self._slow_dirty = True
            self._refresh_slow()

    def _replay_tick(self) -> None:
        if self.cursor >= self.num_steps:
            self._replay_timer.stop()
            self.replaying = False
            self._play_live()
            self._sync_play_action()
            return
        k = self.cursor
        self.set_cursor(k + 1)
        resume_from, self._resume_from = getattr(self, "_resume_from", None), None
        hit = check_breakpoints(self.breakpoints, self.history, k,
                                resume_from=resume_from) if self.breakpoints else None
        if hit is not None:
            self.pause()
            self.status(f"Breakpoint: {hit.text}")
            self.set_cursor(hit.show)

    def set_speed(self, sps: float) -> None:
        self.speed = float(sps)
        self.controller.set_speed(self.speed)
        if self.replaying:
            self._replay_timer.setInterval(self._replay_interval())
        for a in self.speed_group.actions():
            a.setChecked(float(a.data()) == self.speed)
        if hasattr(self, "speed_combo"):
            i = [s for _, s in SPEEDS].index(self.speed) if self.speed in [s for _, s in SPEEDS] else -1
            if i >= 0 and self.speed_combo.currentIndex() != i:
                self.speed_combo.blockSignals(True)
                self.speed_combo.setCurrentIndex(i)
                self.speed_combo.blockSignals(False)
        self._update_status()

    def _nudge_speed(self, d: int) -> None:
        values = [s for _, s in SPEEDS]
        i = values.index(self.speed) if self.speed in values else 3
        self.set_speed(values[min(max(i + d, 0), len(values) - 1)])

    def step_forward(self) -> None:
        """→: show the next recorded state, or simulate one step at the newest state."""
        self.pause()
        if self.cursor < self.num_steps:
            self.set_cursor(self.cursor + 1)
        else:
            self.simulate_step()

    def step_back(self) -> None:
        self.pause()
        self.set_cursor(self.cursor - 1)

    def simulate_step(self) -> None:
        """Simulate one new step from the shown state (asks before discarding a recorded future)."""
        if self.history is None:
            return
        self.pause()
        if self.syncing:
            self.status("Still re-simulating the loaded episode; step again in a moment.")
            return
        if self.cursor < self.num_steps or self.sim_steps < self.num_steps:
            at = min(self.cursor, self.sim_steps)
            if not self._offer_branch(at, reason="step"):
                return
        self.controller.step()

    def _offer_branch(self, k: int, reason: str) -> bool:
        """Ask whether to branch at state k. Returns True when the simulation now continues from the newest
        state (after a branch or after moving the cursor there)."""
        t = self.num_steps
        if k >= t and self.sim_steps >= t:
            return True
        newest_ok = self.sim_steps >= t
        if self.sim_steps < t and self.cursor > self.sim_steps:
            text = (f"The loaded episode can only be continued from step {self.sim_steps} (the re-simulation "
                    f"differs after it). Branch at step {self.sim_steps}, discarding steps "
                    f"{self.sim_steps + 1}–{t}?")
            k = self.sim_steps
        else:
            text = (f"Step {k} of {t} is shown. Simulating from here would replace the recorded steps "
                    f"{k + 1}–{t}.\n\nBranch at step {k} (discard the steps after it)"
                    + (", or go to the newest step and simulate from there?" if newest_ok else "?"))
        choices = [("branch", f"Branch at step {k}")]
        if newest_ok:
            choices.append(("newest", "Go to newest step"))
        choices.append(("cancel", "Cancel"))
        ans = self.ask("branch", "Branch the episode?", text, choices, "newest" if newest_ok else "cancel")
        if ans == "branch":
            self.branch_at(k)
            return True
        if ans == "newest" and newest_ok:
            self.set_cursor(t)
            return True
        return False

    def branch_here(self) -> None:
        if self.history is None or self.cursor >= self.num_steps:
            self.status("Nothing to discard: the shown step is the newest.")
            return
        self._offer_branch(self.cursor, reason="branch")

    def branch_at(self, k: int) -> None:
        """Discard every recorded step after state k; the simulation continues from k."""
        if self.history is None:
            return
        self.pause()
        k = int(min(max(k, 0), self.num_steps, self.sim_steps))
        self.history.truncate(k)
        self.markers.truncate(k)
        self.interventions = [e for e in self.interventions if e["step"] < k]
        if self.interventions:
            self.history.meta["interventions"] = list(self.interventions)
        else:
            self.history.meta.pop("interventions", None)
        self.controller.branch(k)
        self.controller.set_interventions(self.interventions)
        self.sim_steps = k
        self._rebuild_markers()
        self.timeline.set_range(k)
        self.stats.clear()
        self._set_dirty(True)
        self.set_cursor(k)
        self.flush_redraw()

    def reset_simulation(self, seed: int | None = None, confirm: bool = True) -> None:
        """Discard the recording and start again from the seed (asks first when steps are recorded)."""
        if self.project is None:
            return
        if confirm and self.num_steps > 0:
            ans = self.ask("reset", "Reset the simulation?",
                           f"This discards the {self.num_steps} recorded steps and restarts from the seed.",
                           [("reset", "Reset"), ("cancel", "Cancel")], "reset")
            if ans != "reset":
                return
        self.pause()
        if seed is not None:
            self.project.seed = int(seed)
        self.interventions = []
        if self.history is not None and self.selected is not None:
            self._want_selected = self.history.agents.names[self.selected]
        self.controller.reset(self.project.config, self.project.seed)
        self._set_dirty(True)

    def seed_dialog(self) -> None:
        if self.project is None:
            return
        seed, ok = QtWidgets.QInputDialog.getInt(self, "Random seed", "Seed (restarts the simulation):",
                                                 int(self.project.seed), 0, 2**31 - 1)
        if ok:
            self.reset_simulation(seed)

    def goto_dialog(self) -> None:
        k, ok = QtWidgets.QInputDialog.getInt(self, "Go to step", f"Step (0–{self.num_steps}):", self.cursor, 0,
                                              self.num_steps)
        if ok:
            self.set_cursor(k, pause=True)

    def next_marker(self) -> None:
        k = self.markers.next_event(self.cursor)
        if k is not None:
            self.set_cursor(k, pause=True)

    def previous_marker(self) -> None:
        k = self.markers.previous_event(self.cursor)
        if k is not None:
            self.set_cursor(k, pause=True)

    def force_action(self, action: int | None) -> None:
        """Override the selected agent's decision from the shown step on (None: follow the rules again)."""
        if self.history is None or self.selected is None:
            self.status("Select an agent first.")
            return
        if self.cursor < self.num_steps or self.sim_steps < self.num_steps:
            if not self._offer_branch(min(self.cursor, self.sim_steps), reason="force"):
                return
        k = self.num_steps
        self.interventions = [e for e in self.interventions if not (e["step"] == k and e["agent"] == self.selected)]
        self.interventions.append({"step": k, "agent": int(self.selected),
                                   "action": None if action is None else int(action)})
        self.history.meta["interventions"] = list(self.interventions)
        self.controller.set_interventions(self.interventions)
        name = self.history.agents.names[self.selected]
        self.status(f"{name} follows the rules again from step {k}" if action is None else
                    f"{name} is forced to {ACTION_NAMES[action]} from step {k}")
        self._set_dirty(True)

    # =========================================================================================================
    # breakpoints
    # =========================================================================================================
    def _set_breakpoints(self, bps: list[Breakpoint]) -> None:
        self.breakpoints = list(bps)
        self.controller.set_breakpoints(self.breakpoints)
        self.timeline.set_breakpoints([b.step for b in self.breakpoints if b.kind == "step" and b.enabled
                                       and b.step is not None])
        self.bp_list.blockSignals(True)
        self.bp_list.clear()
        for b in self.breakpoints:
            it = QtWidgets.QListWidgetItem(b.describe())
            it.setToolTip(b.describe())
            it.setFlags(it.flags() | QtCore.Qt.ItemFlag.ItemIsUserCheckable)
            it.setCheckState(QtCore.Qt.CheckState.Checked if b.enabled else QtCore.Qt.CheckState.Unchecked)
            self.bp_list.addItem(it)
        self.bp_list.blockSignals(False)

    def add_breakpoint(self, bp: Breakpoint) -> None:
        if bp in self.breakpoints:
            return
        self.undo.push(BreakpointCommand(self, self.breakpoints + [bp], f"Add breakpoint: {bp.describe()}"))
        self.status(f"Breakpoint added: {bp.describe()}")

    def remove_breakpoint(self, index: int) -> None:
        if 0 <= index < len(self.breakpoints):
            new = self.breakpoints[:index] + self.breakpoints[index + 1:]
            self.undo.push(BreakpointCommand(self, new, f"Remove breakpoint: {self.breakpoints[index].describe()}"))

    def clear_breakpoints(self) -> None:
        if self.breakpoints:
            self.undo.push(BreakpointCommand(self, [], "Clear breakpoints"))

    def _remove_selected_breakpoint(self) -> None:
        self.remove_breakpoint(self.bp_list.currentRow())

    def _on_bp_item_changed(self, item: QtWidgets.QListWidgetItem) -> None:
        i = self.bp_list.row(item)
        if 0 <= i < len(self.breakpoints):
            on = item.checkState() == QtCore.Qt.CheckState.Checked
            b = self.breakpoints[i]
            if b.enabled != on:
                from dataclasses import replace

                new = list(self.breakpoints)
                new[i] = replace(b, enabled=on)
                self.undo.push(BreakpointCommand(self, new, ("Enable" if on else "Disable") + " breakpoint"))

    def toggle_breakpoint_here(self) -> None:
        k = self.cursor
        existing = [i for i, b in enumerate(self.breakpoints) if b.kind == "step" and b.step == k]
        if existing:
            self.remove_breakpoint(existing[0])
        else:
            self.add_breakpoint(Breakpoint("step", step=k))

    def add_step_breakpoint_dialog(self) -> None:
        k, ok = QtWidgets.QInputDialog.getInt(self, "Pause at step", "Pause when this step is reached:",
                                              self.num_steps + 10, 0, 10**9)
        if ok:
            self.add_breakpoint(Breakpoint("step", step=k))

    def add_agent_breakpoint(self, action: str | None) -> None:
        if self.history is None or self.selected is None:
            self.status("Select an agent first (click it on the map).")
            return
        name = self.history.agents.names[self.selected]
        self.add_breakpoint(Breakpoint("action", agent=name, action=action) if action else
                            Breakpoint("goal", agent=name))

    # =========================================================================================================
    # export
    # =========================================================================================================
    def export_png(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QtWidgets.QFileDialog.getSaveFileName(self, "Export map view", "map.png", "PNG image (*.png)")
            if not path:
                return False
        from .export import save_view_png

        try:
            save_view_png(self.map, path)
        except Exception as exc:  # noqa: BLE001
            self.show_error("Could not export the view", str(path), f"{type(exc).__name__}: {exc}")
            return False
        self.status(f"Saved {path}")
        return True

    def export_animation(self) -> None:
        if self.history is None:
            return
        from .export import ExportDialog

        ExportDialog(self).open()

    # =========================================================================================================
    # help
    # =========================================================================================================
    def all_actions(self) -> list[QtGui.QAction]:
        """Every action of the window: the named ones, then those added elsewhere (menus built by installers such
        as the Safe Path Following entry, dock toggles), each once, in menu order."""
        seen: set[int] = set()
        out: list[QtGui.QAction] = []

        def add(a: QtGui.QAction) -> None:
            if id(a) in seen or a.isSeparator():
                return
            seen.add(id(a))
            out.append(a)
            if a.menu() is not None:
                for sub in a.menu().actions():
                    add(sub)

        for a in self.actions_by_name.values():
            add(a)
        for a in self.menuBar().actions():
            add(a)
        for a in self.actions():
            add(a)
        for a in self.findChildren(QtGui.QAction):
            add(a)
        return out

    def shortcut_rows(self) -> list[tuple[str, str, str]]:
        """(shortcut(s), action, description) of every action with a shortcut, for Help ▸ Keyboard shortcuts
        (built from the actions themselves, so a shortcut added anywhere is listed)."""
        rows = []
        for a in self.all_actions():
            keys = ", ".join(s.toString(QtGui.QKeySequence.SequenceFormat.NativeText) for s in a.shortcuts())
            if keys:
                rows.append((keys, a.text().replace("&", "").rstrip("…").strip() or a.toolTip(), a.statusTip()))
        return rows

    def shortcuts_html(self) -> str:
        body = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(n)}</td>"
                       f"<td style='color:gray'>{html.escape(d)}</td></tr>" for k, n, d in self.shortcut_rows())
        return ("<table cellspacing=4>" + body + "</table><p>Mouse: drag the map to pan, wheel to zoom, click an "
                "agent to select it; drag or click the timeline to show a step.</p>")

    def show_shortcuts(self) -> None:
        dlg = QtWidgets.QDialog(self)
        dlg.setWindowTitle("Keyboard shortcuts")
        dlg.setObjectName("shortcutsDialog")
        lay = QtWidgets.QVBoxLayout(dlg)
        text = QtWidgets.QTextBrowser()
        text.setHtml(self.shortcuts_html())
        lay.addWidget(text)
        bb = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        bb.rejected.connect(dlg.reject)
        lay.addWidget(bb)
        dlg.resize(640, 560)
        dlg.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.open()

    def show_about(self) -> None:
        QtWidgets.QMessageBox.about(self, "About LogiCity Studio",
                                    "<b>LogiCity Studio</b><p>Design abstract cities, write first-order-logic "
                                    "traffic rules, run and inspect the rule-governed simulation.</p>")

    # =========================================================================================================
    # shutdown
    # =========================================================================================================
    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:  # noqa: N802
        spf = getattr(self, "spf_play_window", None)
        if not self._closing and spf is not None and spf.isVisible():
            # quitting closes the Safe Path Following window too, with its own "Save this run?" (Cancel: stay)
            if self.non_interactive:
                spf.answers.setdefault("unsaved_run", "discard")
            if not spf.close():
                ev.ignore()
                self.status("Quit cancelled: the Safe Path Following window stays open")
                return
        if not self._closing and not self._maybe_save("quit"):
            ev.ignore()
            return
        self._closing = True
        self.pause()
        dock = getattr(self, "render_dock", None)
        if dock is not None and not dock.shutdown(wait_ms=300):
            # the icon generator is loading a model (cannot be interrupted) or finishing an image: close once it
            # has stopped; destroying its running thread would abort the process (finished images are saved)
            ev.ignore()
            self._close_when_icongen_stops(dock)
            return
        self._replay_timer.stop()
        self._redraw_timer.stop()
        self.save_layout()
        self.controller.shutdown()
        ev.accept()

    def _close_when_icongen_stops(self, dock) -> None:
        """Show that closing waits for the icon generator, and close when its job has finished."""
        self.statusBar().showMessage("Waiting for the icon generator to stop… the studio closes by itself "
                                     "(a model that is loading cannot be interrupted; finished icons are saved)")
        if getattr(self, "_close_pending", False):
            return
        self._close_pending = True
        for w in [self.menuBar(), self.centralWidget(), *self.docks.values(),
                  *self.findChildren(QtWidgets.QToolBar)]:
            w.setEnabled(False)  # the save question was answered: no more edits
        dock.generationFinished.connect(lambda *_: QtCore.QTimer.singleShot(0, self.close))

    # =========================================================================================================
    # screenshot mode (run_studio --screenshot)
    # =========================================================================================================
    def run_steps_then(self, steps: int, done: Callable[[], None]) -> None:
        """Simulate until ``steps`` steps are recorded (one request per frame), then call ``done``."""
        self._screenshot_target = (int(steps), done)
        self._screenshot_progress()

    def _screenshot_progress(self) -> None:
        target = getattr(self, "_screenshot_target", None)
        if target is None or self.history is None:
            return
        steps, done = target
        if self.num_steps >= steps:
            self._screenshot_target = None
            done()
        else:
            self.controller.step()

    def when_ready(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once the current project's simulation has sent its first state."""
        if self.history is not None and not self._pending_after_reset:
            fn()
        else:
            self._pending_after_reset.append(fn)
