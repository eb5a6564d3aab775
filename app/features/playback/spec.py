"""The playback feature: the Simulation and Timeline menus, the playback toolbar, the Timeline panel, the status
bar's step and speed labels, and the playback, drawing and timeline services the other features use."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from app.features.playback.controller import PlaybackController
from app.features.playback.drawing import DrawController
from app.features.playback.speed import SpeedControls
from app.features.playback.timeline import TimelineController
from app.shell.features import FeatureHost, FeatureSpec, register
from app.shell.menus import ActionSpec, MenuSpec
from app.shell.panels import BOTTOM, PanelSpec
from app.shell.panels import register as register_panel
from app.shell.services import DRAWING, PLAYBACK, TIMELINE
from core.base.codes import ACTION_NAMES
from core.sim.events import event_kinds
from widgets.timeline import TimelineWidget

SP = QtWidgets.QStyle.StandardPixmap


def _timeline_panel(session, jobs) -> QtWidgets.QWidget:
    t = TimelineWidget()
    t.set_lanes([(k.name, k.label, k.colour) for k in event_kinds().values()])
    return t


def install(host: FeatureHost) -> PlaybackController:
    s, panels = host.session, host.panels
    drawing = DrawController(s, host.simulation, host.map, panels.widget("legend"), panels.widget("inspector"),
                             panels.widget("statistics"), host.shell.dialog_parent)
    pb = PlaybackController(host.shell, s, host.simulation, drawing, host.shell.dialog_parent)
    timeline = TimelineController(s, panels.widget("timeline"), pb, pb)
    host.provide(PLAYBACK, pb)
    host.provide(DRAWING, drawing)
    host.provide(TIMELINE, timeline)

    def act(text, slot, shortcut=None, tip=None, menu=None, section="", icon=None, toolbar=None):
        return host.add(ActionSpec(text, slot, shortcut, tip, icon=icon, menu=menu, section=section,
                                   toolbar=toolbar))

    # the toolbar shows Reset, Play, Step; the Simulation menu Play, Step, Reset
    reset = act("&Reset simulation", lambda: pb.reset_simulation(), "Ctrl+R",
                "Discard the recording and restart from the seed", icon=SP.SP_BrowserReload, toolbar="playback")
    play = act("&Play", pb.toggle_play, "Space", "Play / pause", icon=SP.SP_MediaPlay, toolbar="playback")
    step = act("&Step (simulate one)", pb.simulate_step, ("Ctrl+Right", "F10"),
               "Simulate one step from the shown state", icon=SP.SP_MediaSkipForward, toolbar="playback")
    host.add_to_menu("simulation", play, step, reset, section="run")
    run = dict(menu="simulation", section="run")
    act("&Branch here", pb.branch_here, "Ctrl+Shift+B", "Discard every step after the shown one", **run)
    act("Set s&eed…", pb.seed_dialog, None, "Choose the random seed and restart", **run)
    speed_menu = host.menu("simulation/speed", MenuSpec("simulation/speed", "S&peed"), section="speed")
    speed = SpeedControls(pb, speed_menu)
    speed_menu.addSeparator()
    for text, d, key, tip in (("Faster", +1, "Ctrl+Up", "Increase the speed"),
                              ("Slower", -1, "Ctrl+Down", "Decrease the speed")):
        speed_menu.addAction(act(text, lambda d=d: pb.nudge_speed(d), key, tip))
    force = host.menu("simulation/force", MenuSpec("simulation/force", "&Force selected agent's action"),
                      section="force")
    for label, action in (("Follow the rules", None),) + tuple((n, i) for i, n in enumerate(ACTION_NAMES)):
        force.addAction(label).triggered.connect(lambda _=False, action=action: pb.force_action(action))

    tl = dict(menu="timeline")
    act("Step &back", pb.step_back, "Left", "Show the previous step", **tl)
    act("Step &forward", pb.step_forward, "Right", "Show the next step (simulates one at the newest step)", **tl)
    act("&First step", lambda: pb.set_cursor(0, pause=True), "Home", "Show step 0", **tl)
    act("&Newest step", lambda: pb.set_cursor(s.num_steps, pause=True), "End", "Show the newest recorded step", **tl)
    act("Previous marker", pb.previous_marker, "[", "Jump to the previous timeline marker", **tl)
    act("Next &marker", pb.next_marker, "]", "Jump to the next timeline marker", **tl)
    act("&Go to step…", pb.goto_dialog, "Ctrl+G", "Type a step to show", **tl)

    bar = host.toolbar("playback", "Playback")
    bar.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    bar.addSeparator()
    bar.addWidget(QtWidgets.QLabel(" Speed "))
    bar.addWidget(speed.combo)

    def sync_play_action() -> None:
        playing = pb.playing
        play.setText("&Pause" if playing else "&Play")
        play.setIcon(bar.style().standardIcon(SP.SP_MediaPause if playing else SP.SP_MediaPlay))

    labels = host.status_labels

    def show_status() -> None:
        target = "max" if pb.speed <= 0 else f"{pb.speed:g}"
        measured = f" ({pb.measured_rate:.1f} measured)" if pb.live and pb.measured_rate else ""
        state = None if pb.syncing else "▶ simulating" if pb.live else "▶ replaying" if pb.replaying else \
            "❚❚ paused"   # while re-simulating, the label shows its progress
        labels.show(s.cursor, s.num_steps, len(s.agent_names), f"Speed: {target} steps/s{measured}", state)

    pb.changed.connect(sync_play_action)
    for signal in (pb.changed, pb.speedChanged, drawing.drawn, s.events.cursor):
        signal.connect(lambda *_: show_status())
    pb.syncProgress.connect(lambda d, t: labels.show_state(f"re-simulating {d}/{t}"))
    show_status()

    pb.restore_speed()
    return pb


register_panel(PanelSpec("timeline", "Timeline", BOTTOM, _timeline_panel))
register(FeatureSpec("playback", install))
