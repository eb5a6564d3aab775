"""The background simulation: a worker object in its own QThread that owns the :class:`Simulation`.

It is the long-lived *service* kind of job of :mod:`app.shell.jobs`: the :class:`JobRunner` starts its thread, keeps it in
the registry that quitting waits for, hands out its generation stamps and reports its failures
(:class:`app.shell.jobs.JobError`, naming the failing component).

Threading contract (why it is safe):

* Only the worker thread touches the Simulation, its EpisodeBuffer and its checkpoints. The worker is created
  in the GUI thread but every slot runs in the worker thread (queued connections), including the one that
  builds the Simulation, so a z3 engine gets its context in that thread.
* The GUI receives only immutable :class:`core.sim.frames.StepFrame` objects (copied arrays, read-only) through
  queued signals and replays them into its own buffer.
* Every request carries a *generation* number (``JobRunner.generations``, key ``"simulation"``); the worker stamps
  frames with it and the GUI drops frames of an older generation (a reset or branch that crossed frames still in
  flight).
* A step that fails is rolled back: the worker restores the last good state (nearest checkpoint + replay), sends
  no frame for it and reports the failing component (grounding, rule engine, planner …). Continuing afterwards
  gives exactly what a fault-free run with the same seed gives.
* Checkpoints every ``CHECKPOINT_EVERY`` steps (not every step: memory; sooner in a big city, see
  ``REPLAY_AGENT_STEPS``); branching to step k restores the nearest one at or before k and replays the steps after
  it.
* Back-pressure: the worker never runs more than ``MAX_BACKLOG`` frames ahead of what the GUI has applied
  (``acked``, a plain int the GUI thread writes), so a slow GUI never accumulates an unbounded queue.
* Turn-taking at full speed: Python threads share one GIL, and a worker that computes non-stop makes every
  GUI paint several times slower (each Qt call the GUI makes can wait a whole GIL switch interval,
  ``sys.getswitchinterval()``).
  So "as fast as possible" runs a short burst of steps (``BURST``), sends them as one batch and waits until
  the GUI has applied *and drawn* them (it acks after its synchronous repaint). GUI and simulation alternate;
  the GUI never waits for the GIL behind more than one burst.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from PySide6 import QtCore

from app.shell.jobs import JobError, JobRunner, ServiceHandle
from core.base.codes import Action
from core.sim.checkpoint import CheckpointStore, replay_to
from core.sim.events import check_breakpoints
from core.sim.faults import failing_component
from core.sim.frames import FrameTap
from core.sim.simulation import Simulation

MAX_BACKLOG = 40
#: At "as fast as possible": steps per burst are limited to BURST seconds; then the worker sleeps until the GUI's
#: ack wakes it (see the module docstring), or MAX_WAIT seconds at most.
BURST = 0.008
MAX_WAIT = 1.0
#: A checkpoint every this many steps, or sooner once the steps since the last one moved REPLAY_AGENT_STEPS agents
#: in all (a step's time grows with the agents; a deterministic measure, not the clock): a seek replays at most
#: CHECKPOINT_EVERY - 1 steps of the default city and at most one of a 100-agent city, while the checkpoints add
#: far less memory per step than one after every step would (bench/gui.py prints memory per step and seek times;
#: --every-step-checkpoints compares).
CHECKPOINT_EVERY = 5
REPLAY_AGENT_STEPS = 200
#: The kind and generation key of the simulation service (app.shell.jobs).
KIND = "simulation"
#: Simulations kept for an undo/redo of Apply (each holds its recording and checkpoints); older ones re-simulate.
STASH = 4


@dataclass(frozen=True)
class ResetInfo:
    """Sent once a new Simulation exists: its initial frame and what the GUI buffer needs."""

    frame: Any
    meta: dict
    witness_vars: int
    seed: int


def active_overrides(interventions: list[dict], k: int) -> dict[int, Action]:
    """Sticky action overrides in force during step k: per agent, the latest entry with ``step <= k``
    (``action`` None ends an override)."""
    cur: dict[int, int | None] = {}
    for e in sorted(interventions, key=lambda e: e["step"]):
        if e["step"] <= k:
            cur[int(e["agent"])] = e.get("action")
    return {a: Action(int(v)) for a, v in cur.items() if v is not None}


class SimWorker(QtCore.QObject):
    """Owns the Simulation in the worker thread; requests arrive as queued slot calls (see the module docstring)."""

    frameReady = QtCore.Signal(int, object)       # generation, list[StepFrame] (one or a burst of steps)
    resetDone = QtCore.Signal(int, object)        # generation, ResetInfo
    playingChanged = QtCore.Signal(int, bool)
    breakpointHit = QtCore.Signal(int, object)    # generation, core.sim.events.Hit
    failed = QtCore.Signal(int, object)           # generation, app.shell.jobs.JobError
    branched = QtCore.Signal(int, int)            # generation, step
    syncProgress = QtCore.Signal(int, int, int)   # generation, steps re-simulated, total
    synced = QtCore.Signal(int, int)              # generation, steps that match the loaded episode
    rate = QtCore.Signal(float)                   # measured steps per second while playing

    def __init__(self) -> None:
        super().__init__()
        self.sim: Simulation | None = None
        self.tap: FrameTap | None = None
        self.checkpoints = CheckpointStore(every=CHECKPOINT_EVERY, max_replay=REPLAY_AGENT_STEPS)
        self.gen = 0
        self.playing = False
        self._resume_from: int | None = None     # see play(); used by the first step after it only
        self.period = 0.1              # seconds per step; 0 = as fast as possible
        self.breakpoints: list = []
        self.interventions: list[dict] = []
        self.sent = 0                  # state index of the newest frame sent
        self.acked = 0                 # written by the GUI thread: newest state index applied
        self._timer: QtCore.QTimer | None = None
        self._sync: dict | None = None
        self._rate_t0 = 0.0
        self._rate_n = 0
        self._burst_end = 0.0
        self._stash: dict[int, tuple[Simulation, FrameTap | None, CheckpointStore, list[dict]]] = {}

    # ---- helpers ----------------------------------------------------------------------------------------------
    def _ensure_timer(self) -> QtCore.QTimer:
        if self._timer is None:
            self._timer = QtCore.QTimer(self)
            self._timer.setSingleShot(True)
            self._timer.setTimerType(QtCore.Qt.TimerType.PreciseTimer)
            self._timer.timeout.connect(self._tick)
        return self._timer

    def _fail(self, what: str, exc: BaseException, component: str = "") -> None:
        self._set_playing(False)
        err = JobError.from_exception(KIND, exc, component)
        if err.details:
            import sys

            print(f"simulation: {what}:\n{err.details}", file=sys.stderr, flush=True)
        self.failed.emit(self.gen, JobError(KIND, f"{what}: {err.message}", component, err.details))

    def _overrides(self, k: int) -> dict[int, Action] | None:
        return active_overrides(self.interventions, k) or None

    def _goto(self, k: int) -> None:
        """Put the simulation into state k (nearest checkpoint + replay) and cut the recording after it."""
        assert self.sim is not None and self.tap is not None
        replay_to(self.sim, self.checkpoints, k, self._overrides, len(self.sim.agents))
        if self.sim.buffer is not None and self.sim.buffer.num_steps > k:
            self.sim.buffer.truncate(k)
        self.tap.rewind(k)

    def _set_playing(self, on: bool) -> None:
        if on != self.playing:
            self.playing = on
            self._rate_t0, self._rate_n = time.perf_counter(), 0
            self.playingChanged.emit(self.gen, on)
        if not on and self._timer is not None:
            self._timer.stop()

    # ---- requests (run in the worker thread) -----------------------------------------------------------------
    @QtCore.Slot(int, object, int)
    def reset(self, gen: int, config: Any, seed: int) -> None:
        """Build a new Simulation from ``config`` with ``seed`` and send its initial state."""
        if self._build(gen, config, seed):
            self._send_reset(gen, seed)

    def _send_reset(self, gen: int, seed: int) -> None:
        """Answer a reset with the new simulation's initial state."""
        assert self.sim is not None and self.sim.buffer is not None and self.tap is not None   # built recording
        frame = self.tap.initial(self.sim.agents)
        self.sent = self.acked = 0
        wit = self.sim.buffer.array("witness")
        self.resetDone.emit(gen, ResetInfo(frame, dict(self.sim.buffer.meta), int(wit.shape[2]), int(seed)))

    def _build(self, gen: int, config: Any, seed: int, made: Any = None) -> bool:
        """``made``: a Simulation built already (a scene), else one is built from ``config`` and ``seed``."""
        self.gen = gen
        self._set_playing(False)
        self._sync = None
        self.sim = None
        self.checkpoints.clear()
        self.interventions = []
        try:
            from core.studio.apply import new_simulation  # from step 0, or an agent editor branch's scene

            sim = made if made is not None else new_simulation(config, seed=seed, record=True)
        except Exception as exc:  # noqa: BLE001 - reported to the GUI
            self._fail("could not start the simulation", exc)
            return False
        self.sim = sim
        self.tap = FrameTap(sim.buffer)
        self.checkpoints.add(sim)
        return True

    @QtCore.Slot(int, object, int, object, object)
    def sync(self, gen: int, config: Any, seed: int, positions: Any, interventions: Any) -> None:
        """Rebuild the Simulation and silently re-run a loaded episode (``positions`` [T+1, N, 2]) so the user
        can continue it. Stops where the re-run differs from the recording and reports how far it matched."""
        if not self._build(gen, config, seed):
            return
        assert self.sim is not None
        self.interventions = list(interventions or [])
        self._sync = {"positions": positions, "total": int(len(positions) - 1)}
        if not (positions[0] == self.sim.positions).all():
            self._finish_sync(0)
            return
        self._ensure_timer().start(0)

    def _sync_chunk(self) -> None:
        s = self._sync
        assert s is not None and self.sim is not None
        t_end = time.perf_counter() + 0.05
        while self.sim.step_index < s["total"] and time.perf_counter() < t_end:
            k = self.sim.step_index
            try:
                self.sim.step(self._overrides(k))
            except Exception as exc:  # noqa: BLE001
                self._sync = None
                component = failing_component(exc)
                if not self._roll_back(k, exc, component):
                    return
                self._finish_sync(k)   # continuable up to the last good state
                self._fail(f"re-simulating step {k} of the loaded episode failed", exc, component)
                return
            self.checkpoints.add(self.sim, len(self.sim.agents))
            if not (s["positions"][k + 1] == self.sim.positions).all():
                self._goto(k)
                self._finish_sync(k)
                return
        self.syncProgress.emit(self.gen, self.sim.step_index, s["total"])
        if self.sim.step_index >= s["total"]:
            self._finish_sync(self.sim.step_index)
        else:
            self._ensure_timer().start(0)

    def _finish_sync(self, matched: int) -> None:
        self._sync = None
        assert self.tap is not None
        self.tap.rewind(matched)
        self.sent = self.acked = matched
        self.synced.emit(self.gen, matched)

    @QtCore.Slot(int, int)
    def play(self, gen: int, resume_from: int = -1) -> None:
        """Play on. ``resume_from`` (>= 0): the state the user resumed at; a breakpoint hit of the first step that
        would show that very state is skipped (core.sim.breakpoints.check_breakpoints), as the GUI's replay does."""
        if gen != self.gen or self.sim is None or self._sync is not None:
            return
        self._resume_from = resume_from if resume_from >= 0 else None
        self._set_playing(True)
        self._ensure_timer().start(0)

    @QtCore.Slot()
    def pause(self) -> None:
        self._set_playing(False)

    @QtCore.Slot(int)
    def step_once(self, gen: int) -> None:
        if gen != self.gen or self.sim is None or self._sync is not None:
            return
        self._set_playing(False)
        self._do_step()

    @QtCore.Slot(float)
    def set_speed(self, steps_per_second: float) -> None:
        self.period = 0.0 if steps_per_second <= 0 else 1.0 / steps_per_second

    @QtCore.Slot(object)
    def set_breakpoints(self, bps: Any) -> None:
        self.breakpoints = list(bps)

    @QtCore.Slot(int, object)
    def set_interventions(self, gen: int, interventions: Any) -> None:
        if gen == self.gen:
            self.interventions = list(interventions)

    @QtCore.Slot(int, int)
    def branch(self, gen: int, k: int) -> None:
        """Return to state k, forgetting everything after it (the GUI has already cut its copy)."""
        self._set_playing(False)
        self.gen = gen
        if self.sim is None:
            return
        try:
            self._goto(k)
            self.sent = self.acked = k
        except Exception as exc:  # noqa: BLE001
            self._fail("could not branch", exc, failing_component(exc))
            return
        self.branched.emit(gen, k)

    @QtCore.Slot(int, object, object, int, int)
    def reset_scene(self, gen: int, config: Any, scene: Any, seed: int, from_state: int) -> None:
        """Start a new recording whose state 0 is ``scene`` (a core.sim.scene.Scene), simulated with ``config``
        (the rule editor's "Load as scene"). ``scene`` None: the current simulation's state ``from_state``
        (captured with its random state, so the new recording continues it with ``config``'s rules)."""
        from core.sim.scene import build_simulation, capture_scene

        self._set_playing(False)
        self.gen = gen          # a failure below is reported under the generation the GUI now waits for
        try:
            if scene is None:
                if self.sim is None:
                    raise RuntimeError("no simulation to continue from")
                self._goto(from_state)
                scene = capture_scene(self.sim)
            made = build_simulation(config, scene, seed=seed, record=True)
        except Exception as exc:  # noqa: BLE001 - reported to the GUI, the old simulation stays
            self._fail("could not start the simulation from the scene", exc, failing_component(exc))
            return
        if self._build(gen, config, seed, made):
            self._send_reset(gen, seed)

    @QtCore.Slot(int, object)
    def stash(self, key: int, interventions: Any) -> None:
        """Keep the current simulation, with the forced actions it ran with, under ``key`` (an Apply replaces it;
        undoing that Apply continues it)."""
        if self.sim is None or self._sync is not None:
            return
        self._stash[key] = (self.sim, self.tap, self.checkpoints, list(interventions))
        self.checkpoints = CheckpointStore(every=CHECKPOINT_EVERY, max_replay=REPLAY_AGENT_STEPS)
        while len(self._stash) > STASH:
            del self._stash[next(iter(self._stash))]

    @QtCore.Slot()
    def forget_stash(self) -> None:
        self._stash.clear()

    @QtCore.Slot(int, int, int)
    def unstash(self, gen: int, key: int, k: int) -> None:
        """Continue the simulation kept under ``key`` from its state ``k`` (where the recording the GUI shows again
        ends), answered by ``synced(gen, k)``; ``synced(gen, -1)``: it is not kept (any more), re-sync instead."""
        self._set_playing(False)
        self.gen = gen
        self._sync = None
        kept = self._stash.pop(key, None)
        if kept is None or kept[0].step_index < k:
            self.synced.emit(gen, -1)
            return
        self.sim, self.tap, self.checkpoints, self.interventions = kept
        try:
            if self.sim.step_index != k:
                self._goto(k)      # the steps it sent that the GUI dropped when the Apply replaced it
        except Exception as exc:  # noqa: BLE001
            self.sim = None
            self.synced.emit(gen, -1)
            self._fail("could not continue the kept simulation", exc, failing_component(exc))
            return
        self.sent = self.acked = k
        self.synced.emit(gen, k)

    @QtCore.Slot()
    def kick(self) -> None:
        """The GUI acked a burst: continue at once when playing as fast as possible."""
        if self.playing and self.period <= 0 and self._sync is None and self.acked >= self.sent:
            self._ensure_timer().start(0)

    @QtCore.Slot()
    def shutdown(self) -> None:
        self._set_playing(False)
        self._sync = None
        if self._timer is not None:
            self._timer.stop()
        self.sim = None

    # ---- stepping ----------------------------------------------------------------------------------------------
    def _do_step(self, batch: list | None = None) -> bool:
        """One step. Its frame is sent at once, or appended to ``batch`` (the caller sends the burst).
        Returns False when playback must stop (error or breakpoint; a pending batch is sent first)."""
        sim = self.sim
        assert sim is not None and self.tap is not None
        k = sim.step_index
        resume_from, self._resume_from = self._resume_from, None
        try:
            out = sim.step(self._overrides(k))
        except Exception as exc:  # noqa: BLE001
            self._flush(batch)
            component = failing_component(exc)
            if self._roll_back(k, exc, component):
                self._fail(f"step {k} failed in the {component} and was undone (the simulation is back at step "
                           f"{k}, as before it)", exc, component)
            return False
        self.checkpoints.add(sim, len(sim.agents))
        frame = self.tap.frame(sim.agents, out.seconds)
        self.sent = frame.state_index
        if batch is None:
            self.frameReady.emit(self.gen, [frame])
        else:
            batch.append(frame)
        if self.breakpoints:
            hit = check_breakpoints(self.breakpoints, sim.buffer, k, resume_from=resume_from)
            if hit is not None:
                # frames, then the hit, then "not playing": the GUI must learn why playback stops before it
                # learns that it stopped, or it may show the newest state as a plain stop in between (a test
                # waiting for "not playing" read state k + 1 instead of the hit's state k)
                self._flush(batch)
                self.breakpointHit.emit(self.gen, hit)
                self._set_playing(False)
                return False
        return True

    def _roll_back(self, k: int, exc: BaseException, component: str) -> bool:
        """A step from state k failed half-way (positions, RNG, plans may be partly changed): restore state k.
        False (and reported) when even that fails; the simulation is then dropped and must be reset."""
        try:
            self._goto(k)
        except Exception as exc2:  # noqa: BLE001
            self.sim = None
            self._fail(f"step {k} failed in the {component} ({type(exc).__name__}: {exc}) and the simulation could "
                       f"not be restored; reset it", exc2, component)
            return False
        self.sent = k
        return True

    def _flush(self, batch: list | None) -> None:
        if batch:
            self.frameReady.emit(self.gen, list(batch))
            batch.clear()

    def _tick(self) -> None:
        if self._sync is not None:
            self._sync_chunk()
            return
        if not self.playing or self.sim is None:
            return
        timer = self._ensure_timer()
        if self.period <= 0 and self.acked < self.sent and time.perf_counter() - self._burst_end < MAX_WAIT:
            timer.start(int(MAX_WAIT * 1000))    # the GUI has not drawn the last burst yet: its turn (kick wakes)
            return
        if self.sent - self.acked >= MAX_BACKLOG:   # the GUI is behind: wait for it
            timer.start(5)
            return
        t0 = time.perf_counter()
        if self.period > 0:
            if not self._do_step():
                return
            n = 1
        else:   # as fast as possible: a burst of steps sent as one batch, then a rest (see BURST)
            batch: list = []
            n = 0
            while True:
                ok = self._do_step(batch)
                n += 1
                if not ok:
                    return
                if time.perf_counter() - t0 >= BURST or self.sent - self.acked >= MAX_BACKLOG:
                    break
                time.sleep(0)   # hand the GIL to the GUI thread if it is waiting for it (no switch-interval wait)
            self._flush(batch)
            self._burst_end = time.perf_counter()
        self._rate_n += n
        now = time.perf_counter()
        if now - self._rate_t0 >= 1.0:
            self.rate.emit(self._rate_n / (now - self._rate_t0))
            self._rate_t0, self._rate_n = now, 0
        if self.period > 0:
            timer.start(int(round(max(0.0, self.period - (now - t0)) * 1000)))
        else:
            timer.start(int(MAX_WAIT * 1000))   # normally the GUI's ack (kick) comes first


class SimController(QtCore.QObject):
    """GUI-thread handle of the simulation service: forwards requests to the worker as queued signals.

    The worker's thread is a service of ``runner`` (a private :class:`JobRunner` when none is given): it shares
    the runner's shutdown, registry (quitting waits for it) and generation stamps. ``failed`` also reaches
    ``runner.failed`` (a :class:`JobError` naming the failing component)."""

    #: the worker's thread; the name hides ``QObject.thread()``, as :attr:`app.shell.jobs.JobHandle.thread` does
    thread: QtCore.QThread  # type: ignore[assignment]

    _reset = QtCore.Signal(int, object, int)
    _sync = QtCore.Signal(int, object, int, object, object)
    _play = QtCore.Signal(int, int)
    _pause = QtCore.Signal()
    _step = QtCore.Signal(int)
    _speed = QtCore.Signal(float)
    _breakpoints = QtCore.Signal(object)
    _interventions = QtCore.Signal(int, object)
    _branch = QtCore.Signal(int, int)
    _shutdown = QtCore.Signal()
    _kick = QtCore.Signal()
    _reset_scene = QtCore.Signal(int, object, object, int, int)
    _stash = QtCore.Signal(int, object)
    _unstash = QtCore.Signal(int, int, int)
    _forget_stash = QtCore.Signal()

    def __init__(self, parent: QtCore.QObject | None = None, runner: JobRunner | None = None) -> None:
        super().__init__(parent)
        self.runner = runner if runner is not None else JobRunner(self)
        self.worker = SimWorker()
        self._reset.connect(self.worker.reset)
        self._sync.connect(self.worker.sync)
        self._play.connect(self.worker.play)
        self._pause.connect(self.worker.pause)
        self._step.connect(self.worker.step_once)
        self._speed.connect(self.worker.set_speed)
        self._breakpoints.connect(self.worker.set_breakpoints)
        self._interventions.connect(self.worker.set_interventions)
        self._branch.connect(self.worker.branch)
        self._shutdown.connect(self.worker.shutdown)
        self._kick.connect(self.worker.kick)
        self._reset_scene.connect(self.worker.reset_scene)
        self._stash.connect(self.worker.stash)
        self._unstash.connect(self.worker.unstash)
        self._forget_stash.connect(self.worker.forget_stash)
        self.worker.failed.connect(self._on_failed)
        self.service: ServiceHandle = self.runner.start_service(
            self.worker, kind="simulation-worker", on_stop=self._shutdown.emit,
            waiting_message="waiting for the simulation step to finish…")
        self.thread = self.service.thread
        self.stopped = False

    @property
    def gen(self) -> int:
        """The newest generation: frames and answers stamped otherwise are stale."""
        return self.runner.generations.current(KIND)

    def next_generation(self) -> int:
        return self.runner.generations.next(KIND)

    def _on_failed(self, gen: int, error: JobError) -> None:
        if gen == self.gen:
            self.runner.report(error)

    def reset(self, config, seed: int) -> int:
        gen = self.next_generation()
        self._reset.emit(gen, config, int(seed))
        return gen

    def sync(self, config, seed: int, positions, interventions) -> int:
        gen = self.next_generation()
        self._sync.emit(gen, config, int(seed), positions, list(interventions))
        return gen

    def play(self, resume_from: int | None = None) -> None:
        """``resume_from``: the state the user pressed Play at, when playing on from it (see SimWorker.play)."""
        self._play.emit(self.gen, -1 if resume_from is None else int(resume_from))

    def pause(self) -> None:
        self._pause.emit()

    def step(self) -> None:
        self._step.emit(self.gen)

    def set_speed(self, sps: float) -> None:
        self._speed.emit(float(sps))

    def set_breakpoints(self, bps) -> None:
        self._breakpoints.emit(list(bps))

    def set_interventions(self, interventions) -> None:
        self._interventions.emit(self.gen, list(interventions))

    def branch(self, k: int) -> int:
        gen = self.next_generation()
        self._branch.emit(gen, int(k))
        return gen

    def reset_scene(self, config, scene, seed: int, from_state: int = 0) -> int:
        """A new recording starting from ``scene`` (None: from the current simulation's state ``from_state``),
        simulated with ``config``; answered by ``resetDone`` like :meth:`reset`."""
        gen = self.next_generation()
        self._reset_scene.emit(gen, config, scene, int(seed), int(from_state))
        return gen

    def stash(self, key: int, interventions) -> None:
        """The worker keeps its simulation under ``key`` (see SimWorker.stash)."""
        self._stash.emit(int(key), list(interventions))

    def forget_stash(self) -> None:
        """The kept simulations are no longer needed (the undo history was cleared: another project)."""
        self._forget_stash.emit()

    def unstash(self, key: int, k: int) -> int:
        """Continue the simulation kept under ``key`` from state ``k``; answered by ``synced`` (-1: not kept)."""
        gen = self.next_generation()
        self._unstash.emit(gen, int(key), int(k))
        return gen

    def ack(self, state_index: int) -> None:
        """The GUI applied frames up to ``state_index`` (plain int write; read by the worker thread)."""
        w = self.worker
        behind = w.acked < w.sent
        w.acked = int(state_index)
        if behind and w.acked >= w.sent and w.playing and w.period <= 0:
            self._kick.emit()

    def shutdown(self, timeout_ms: int = 10000) -> bool:
        """Stop playing, end the thread's event loop and wait for it (the current step finishes first)."""
        if self.stopped:
            return True
        self.stopped = True
        return self.service.stop(timeout_ms)
