"""Playback: the link to the simulation worker and the play / replay / step / branch / reset / force controls.

Playback model (what users of video players / rerun expect):

* The timeline spans every recorded state 0..T. Scrubbing, typing a step, ←/→, Home/End only *show* states.
* Play from the newest state simulates new steps live; Play from a past state first replays the recording at
  the chosen speed and continues live at its end. Breakpoints pause both.
* "Step" simulates one new step. From a past state that would overwrite the recorded future, so the studio asks
  first: branch here (discard steps after it), go to the newest state, or cancel.

The recording itself lives in the session; this controller feeds it the worker's frames, moves its cursor and tells
the worker about breakpoints and forced actions as the session announces them.
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6 import QtCore, QtWidgets

from app.features.playback.applied import AppliedRecordings
from app.features.playback.drawing import DrawController
from app.features.playback.speed import DEFAULT_SPEED, SPEEDS
from app.shell.features import FeatureController
from app.shell.services import Shell
from app.shell.worker import SimController
from core.base.codes import ACTION_NAMES
from core.project.model import Project
from core.sim.episode import EpisodeBuffer
from core.sim.events import check_breakpoints
from core.sim.frames import apply_frame
from core.studio.apply import start_config
from core.studio.commands import ForceAction
from core.studio.problems import blocking_message, collect
from core.studio.session import Session

__all__ = ["DEFAULT_SPEED", "SPEEDS", "PlaybackController"]


class PlaybackController(FeatureController):
    """See the module docstring. ``sim`` is the simulation worker service."""

    changed = QtCore.Signal()                 # playing/replaying, sync state or the measured rate changed
    speedChanged = QtCore.Signal(float)
    syncProgress = QtCore.Signal(int, int)    # steps re-simulated, total (a loaded episode)
    refused = QtCore.Signal(str)              # simulating was refused: the errors in Problems (the text says why)

    def __init__(self, shell: Shell, session: Session, sim: SimController, drawing: DrawController,
                 parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.session = session
        self.sim = sim
        self.drawing = drawing
        self.live = False             # the worker is playing
        self.replaying = False        # the GUI is replaying recorded states
        self.syncing = False          # the worker re-simulates a loaded episode
        self.sim_steps = 0            # recorded steps the worker's simulation has reproduced (== T normally)
        self.speed = DEFAULT_SPEED
        self.measured_rate = 0.0
        self._resume_from: int | None = None   # the state Play resumed replaying from (see _replay_tick)
        self._pending_after_reset: list[Callable[[], None]] = []
        self._hint: tuple[str, str] | None = None   # (status text with "Press Space to play", the text without)
        self._screenshot_target: tuple[int, Callable[[], None]] | None = None
        self._replay_timer = QtCore.QTimer(self)
        self._replay_timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
        self._replay_timer.timeout.connect(self._replay_tick)
        w = sim.worker
        w.frameReady.connect(self._on_frame)
        w.resetDone.connect(self._on_reset_done)
        w.playingChanged.connect(self._on_worker_playing)
        w.breakpointHit.connect(self._on_breakpoint)
        w.failed.connect(self._on_worker_failed)   # play state; the dialog comes through the job runner
        w.branched.connect(self._on_branched)
        w.syncProgress.connect(self._on_sync_progress)
        w.synced.connect(self._on_synced)
        w.rate.connect(self._on_rate)
        sim.set_speed(self.speed)
        session.events.breakpoints.connect(lambda e: sim.set_breakpoints(e.value))
        session.events.interventions.connect(lambda e: sim.set_interventions(e.value))
        self.applied = AppliedRecordings(self)

    @property
    def playing(self) -> bool:
        return self.live or self.replaying

    def notify_changed(self) -> None:
        """Playing, replaying or the sync state changed: the drawing paces itself, listeners hear ``changed``."""
        self.drawing.set_playing(self.live, self.replaying, self.speed)
        if self.playing and self._hint is not None:   # "Press Space to play" must not stay up while playing
            if self.shell.last_message == self._hint[0]:
                self.shell.status(self._hint[1])
            self._hint = None
        self.changed.emit()

    # ---- a project was opened -----------------------------------------------------------------------------------
    def start(self, project: Project) -> None:
        """Start the simulation of the project the session just opened: re-simulate its recording (so it can be
        continued) or reset to its seed."""
        s = self.session
        self.sim_steps = 0
        if s.read_only is not None:   # a replay of an episode file: nothing to simulate, stale frames dropped
            self.sim.next_generation()
            self.sim.pause()
            self.syncing = False
            self.sim_steps = s.num_steps
            self._hint = None
            self.shell.status(f"Read-only replay of {s.read_only.name} ({s.num_steps} steps): play, scrub and "
                              f"inspect it; it cannot be simulated further. File ▸ Save project as… makes it a "
                              f"project that can.", 20000)
            self.notify_changed()
            pending, self._pending_after_reset = self._pending_after_reset, []
            for fn in pending:
                fn()
            return
        if s.history is not None:
            self.syncing = True
            self.sim.sync(start_config(project.config, s.history.meta), int(s.history.meta.get("seed", project.seed)),
                          s.positions(), s.interventions)   # start_config: a branch re-simulates from its scene
        else:
            self.syncing = False
            self.sim.reset(project.config, project.seed)
        self.notify_changed()

    # ---- the worker's messages ----------------------------------------------------------------------------------
    def _on_reset_done(self, gen: int, info: Any) -> None:
        if gen != self.sim.gen:
            return
        history = EpisodeBuffer(info.frame.agents, info.meta, witness_vars=info.witness_vars)
        apply_frame(history, info.frame)
        self.sim.ack(0)
        self.sim_steps = 0
        self.syncing = False
        self.session.set_history(history)
        self.set_cursor(0)
        ready = f"Ready: {len(history.agents)} agents, seed {info.seed}."
        self._hint = (f"{ready} Press Space to play.", ready)
        self.shell.status(self._hint[0])
        self.notify_changed()
        pending, self._pending_after_reset = self._pending_after_reset, []
        for fn in pending:
            fn()

    def _on_frame(self, gen: int, frames: Any) -> None:
        s = self.session
        if gen != self.sim.gen or s.history is None:
            return
        was_newest = s.cursor >= s.num_steps
        try:
            s.record(frames)
        except ValueError as exc:   # should not happen: a frame out of order
            self._on_worker_failed(gen, f"internal: {exc}")
            return
        if not self.live:
            self.sim.ack(s.history.num_states - 1)
        self.sim_steps = s.num_steps
        if was_newest or self.live:
            self.set_cursor(s.num_steps)
        else:
            self.changed.emit()
        if self._screenshot_target is not None:
            self._screenshot_progress()

    def _on_worker_playing(self, gen: int, on: bool) -> None:
        if gen != self.sim.gen:
            return
        self.live = on
        self.notify_changed()

    def _on_breakpoint(self, gen: int, hit: Any) -> None:
        if gen != self.sim.gen:
            return
        self.live = False
        self.set_cursor(min(hit.show, self.session.num_steps))   # before anyone hears that playback stopped
        self.notify_changed()
        self.shell.status(f"Breakpoint: {hit.text}")

    def _on_worker_failed(self, gen: int, error: Any) -> None:
        """The simulation stopped on an error (its dialog comes from the job runner; the worker has rolled a failed
        step back, so the recording stays as it was). A text is an error found here in the GUI thread."""
        self.live = False
        self.notify_changed()
        if isinstance(error, str):
            self.shell.show_error("Simulation problem", "(studio)", error, label="Component")

    def _on_branched(self, gen: int, k: int) -> None:
        if gen == self.sim.gen:
            self.sim_steps = k
            self.shell.status(f"Branched at step {k}: the steps after it were discarded")

    def _on_sync_progress(self, gen: int, done: int, total: int) -> None:
        if gen == self.sim.gen:
            self.syncProgress.emit(done, total)

    def _on_synced(self, gen: int, matched: int) -> None:
        if gen != self.sim.gen:
            return
        if matched < 0:          # the simulation kept for a restored recording is gone: re-simulate it
            self.applied.resync()
            return
        self.syncing = False
        self.sim_steps = matched
        t = self.session.num_steps
        restored, self.applied.restoring = self.applied.restoring, False
        if restored and matched >= t:
            self.shell.status(f"Recording shown again ({t} steps); it can be continued.")
        elif matched < t:
            self.shell.status(f"The loaded episode can be continued from step {matched} only (re-simulation differs "
                              f"after it); stepping beyond offers to branch there.", 12000)
        else:
            self.shell.status(f"Loaded episode ready ({t} steps); it can be continued.")
        self.notify_changed()

    def _on_rate(self, r: float) -> None:
        self.measured_rate = r
        self.changed.emit()

    # ---- showing states -----------------------------------------------------------------------------------------
    def set_cursor(self, k: int, pause: bool = False) -> None:
        """Show state k (clamped to 0..T) at once."""
        if pause:
            self.pause()
        self.session.set_cursor(k)
        self.drawing.schedule_redraw()

    def request_cursor(self, k: int) -> None:
        """The user asked for step k (typed, clicked, dragged): stop playing so the view stays there."""
        if self.playing:
            self.pause()
        self.set_cursor(k)

    def step_forward(self) -> None:
        """→: show the next recorded state, or simulate one step at the newest state."""
        self.pause()
        if self.session.cursor < self.session.num_steps:
            self.set_cursor(self.session.cursor + 1)
        else:
            self.simulate_step()

    def step_back(self) -> None:
        self.pause()
        self.set_cursor(self.session.cursor - 1)

    def next_marker(self) -> None:
        k = self.session.next_marker()
        if k is not None:
            self.set_cursor(k, pause=True)

    def previous_marker(self) -> None:
        k = self.session.previous_marker()
        if k is not None:
            self.set_cursor(k, pause=True)

    def goto_dialog(self) -> None:
        s = self.session
        k, ok = QtWidgets.QInputDialog.getInt(self.shell.dialog_parent, "Go to step",
                                              f"Step (0–{s.num_steps}):", s.cursor, 0, s.num_steps)
        if ok:
            self.set_cursor(k, pause=True)

    # ---- play, pause, speed -------------------------------------------------------------------------------------
    def toggle_play(self) -> None:
        self.pause() if self.playing else self.play()

    def play(self) -> None:
        s = self.session
        if s.history is None:
            return
        if s.cursor < s.num_steps:
            self._resume_from = s.cursor   # a breakpoint that shows this state does not fire again at once
            self.replaying = True
            self._replay_timer.start(self._replay_interval())
        else:
            self._play_live(resume_from=s.cursor)   # likewise for the first step the worker simulates
        self.notify_changed()

    def _replay_interval(self) -> int:
        return 16 if self.speed <= 0 else max(1, int(1000 / self.speed))

    def refused_read_only(self, doing: str) -> bool:
        """True (and says why in the status line) when a read-only replay is shown: ``doing`` is not possible."""
        s = self.session
        if s.read_only is None:
            return False
        self.shell.status(f"Cannot {doing}: {s.read_only.name} is a read-only replay of a recorded episode "
                          f"(step {s.num_steps} is its end). File ▸ Save project as… makes it a project that can "
                          f"be simulated further.", 12000)
        return True

    def refused_problems(self, doing: str) -> bool:
        """True (and says why) when the Problems checks find errors: the simulation does not start on them."""
        try:
            why = blocking_message(collect(self.session))
        except Exception as exc:  # noqa: BLE001 - a broken checker must not stop playback for good
            why, _ = None, exc
        if why is None:
            return False
        self.shell.status(f"Cannot {doing}: {why}", 15000)
        self.refused.emit(why)
        return True

    def _play_live(self, resume_from: int | None = None) -> None:
        if self.refused_read_only("play past the end") or self.refused_problems("simulate"):
            return
        if self.syncing:
            self.shell.status("Still re-simulating the loaded episode; play again in a moment.")
            return
        if self.sim_steps < self.session.num_steps and not self.offer_branch(self.sim_steps):
            return
        self.live = True
        self.sim.play(resume_from)

    def pause(self) -> None:
        was = self.playing
        self._replay_timer.stop()
        self.replaying = False
        if self.live:
            self.sim.pause()
        self.live = False
        if self.session.history is not None:
            self.sim.ack(self.session.history.num_states - 1)
        if was:
            self.notify_changed()

    def _replay_tick(self) -> None:
        s = self.session
        if s.cursor >= s.num_steps:
            self._replay_timer.stop()
            self.replaying = False
            self._play_live()
            self.notify_changed()
            return
        k = s.cursor
        self.set_cursor(k + 1)
        resume_from, self._resume_from = self._resume_from, None
        hit = check_breakpoints(s.breakpoints, s.history, k, resume_from=resume_from) if s.breakpoints else None
        if hit is not None:
            self.pause()
            self.shell.status(f"Breakpoint: {hit.text}")
            self.set_cursor(hit.show)

    def set_speed(self, sps: float) -> None:
        self.speed = float(sps)
        self.sim.set_speed(self.speed)
        if self.replaying:
            self._replay_timer.setInterval(self._replay_interval())
        self.drawing.set_playing(self.live, self.replaying, self.speed)
        self.speedChanged.emit(self.speed)

    def nudge_speed(self, d: int) -> None:
        values = [s for _, s in SPEEDS]
        i = values.index(self.speed) if self.speed in values else 3
        self.set_speed(values[min(max(i + d, 0), len(values) - 1)])

    # ---- simulating, branching, resetting -----------------------------------------------------------------------
    def simulate_step(self) -> None:
        """Simulate one new step from the shown state (asks before discarding a recorded future)."""
        s = self.session
        if s.history is None:
            return
        self.pause()
        if self.refused_read_only("simulate a step") or self.refused_problems("simulate a step"):
            return
        if self.syncing:
            self.shell.status("Still re-simulating the loaded episode; step again in a moment.")
            return
        if (s.cursor < s.num_steps or self.sim_steps < s.num_steps) and \
                not self.offer_branch(min(s.cursor, self.sim_steps)):
            return
        self.sim.step()

    def offer_branch(self, k: int) -> bool:
        """Ask whether to branch at state k. Returns True when the simulation now continues from the newest
        state (after a branch or after moving the cursor there)."""
        t = self.session.num_steps
        if k >= t and self.sim_steps >= t:
            return True
        newest_ok = self.sim_steps >= t
        if self.sim_steps < t and self.session.cursor > self.sim_steps:
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
        ans = self.shell.ask("branch", "Branch the episode?", text, choices, "newest" if newest_ok else "cancel")
        if ans == "branch":
            self.branch_at(k)
            return True
        if ans == "newest" and newest_ok:
            self.set_cursor(t)
            return True
        return False

    def branch_here(self) -> None:
        s = self.session
        if self.refused_read_only("branch"):
            return
        if s.history is None or s.cursor >= s.num_steps:
            self.shell.status("Nothing to discard: the shown step is the newest.")
            return
        self.offer_branch(s.cursor)

    def branch_at(self, k: int) -> None:
        """Discard every recorded step after state k; the simulation continues from k."""
        s = self.session
        if s.history is None:
            return
        self.pause()
        k = int(min(max(k, 0), s.num_steps, self.sim_steps))
        self.sim_steps = k
        s.truncate(k)                       # recording, markers and forced actions from step k on
        self.sim.branch(k)
        self.sim.set_interventions(s.interventions)
        self.set_cursor(k)
        self.drawing.flush_redraw()

    def reset_simulation(self, seed: int | None = None, confirm: bool = True) -> bool:
        """Discard the recording and start again from the seed (asks first when steps are recorded); False when
        refused or cancelled."""
        s = self.session
        if s.project is None or self.refused_read_only("reset the simulation") or \
                self.refused_problems("start the simulation"):
            return False
        if confirm and s.num_steps > 0:
            ans = self.shell.ask("reset", "Reset the simulation?",
                                 f"This discards the {s.num_steps} recorded steps and restarts from the seed.",
                                 [("reset", "Reset"), ("cancel", "Cancel")], "reset")
            if ans != "reset":
                return False
        self.pause()
        s.restart(seed)
        self.sim.reset(s.project.config, s.project.seed)
        return True

    def reset_scene(self, config: Any, scene: Any, seed: int) -> None:
        """Start a new recording whose state 0 is ``scene`` (the session was restarted by the caller)."""
        self.sim.reset_scene(config, scene, seed)

    def launch(self, config: Any, previous: Any) -> None:
        """An Apply (see :meth:`AppliedRecordings.launch`)."""
        self.applied.launch(config, previous)

    def schedule_redraw(self) -> None:
        self.drawing.schedule_redraw()

    def seed_dialog(self) -> None:
        if self.session.project is None or self.refused_read_only("change the seed"):
            return
        seed, ok = QtWidgets.QInputDialog.getInt(self.shell.dialog_parent, "Random seed",
                                                 "Seed (restarts the simulation):", int(self.session.project.seed),
                                                 0, 2**31 - 1)
        if ok:
            self.reset_simulation(seed)

    def force_action(self, action: int | None) -> None:
        """Override the selected agent's decision from the newest step on (None: follow the rules again); an
        undoable command until a step is simulated with it."""
        s = self.session
        if self.refused_read_only("force an action"):
            return
        if s.history is None or s.selected is None:
            self.shell.status("Select an agent first.")
            return
        if (s.cursor < s.num_steps or self.sim_steps < s.num_steps) and \
                not self.offer_branch(min(s.cursor, self.sim_steps)):
            return
        k = s.num_steps
        name = s.agent_names[s.selected]
        s.execute(ForceAction(s.selected, action, k, name))
        self.shell.status(f"{name} follows the rules again from step {k}" if action is None else
                          f"{name} is forced to {ACTION_NAMES[action]} from step {k}")

    # ---- unattended runs (run_studio --screenshot) --------------------------------------------------------------
    def run_steps_then(self, steps: int, done: Callable[[], None]) -> None:
        """Simulate until ``steps`` steps are recorded (one request per frame), then call ``done``."""
        self._screenshot_target = (int(steps), done)
        self._screenshot_progress()

    def _screenshot_progress(self) -> None:
        target = self._screenshot_target
        if target is None or self.session.history is None:
            return
        steps, done = target
        if self.session.num_steps >= steps or self.session.read_only is not None:   # a replay ends where it ends
            self._screenshot_target = None
            done()
        else:
            self.sim.step()

    def when_ready(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once the current project's simulation has sent its first state."""
        if self.session.history is not None and not self._pending_after_reset:
            fn()
        else:
            self._pending_after_reset.append(fn)

    def shutdown(self, wait_ms: int) -> bool:
        """Closing: stop playing first (the other features' background work is asked next)."""
        self.pause()
        return True

    def stop(self) -> None:
        """Closing: stop playing, replaying and drawing; the speed is remembered for the next run."""
        self.pause()
        self._replay_timer.stop()
        self.drawing.stop()
        self.shell.settings.setValue("sim/speed", self.speed)

    def restore_speed(self) -> None:
        """The speed of the last run (settings key ``sim/speed``), when it is one of :data:`SPEEDS`."""
        value = self.shell.settings.value("sim/speed", DEFAULT_SPEED)   # an INI file gives back a str
        sp = float(value) if isinstance(value, (str, int, float)) else DEFAULT_SPEED
        if sp in [v for _, v in SPEEDS]:
            self.set_speed(sp)

