"""A trained SPF model driving the selected car of the studio's recording from the shown step.

Flow (docs/spf.md "In the studio"): *Drive selected car from shown step* checks the request (a car selected, the
model's observation layout equals the project's, no unapplied edits, the shown step simulated), then a job
(:func:`core.tasks.spf.drive.drive_branch`) rebuilds the recording's simulation up to that step and lets the model
choose the car's action each step — until the car reaches its goal, breaks a dead task rule or the step budget
runs out; everybody else follows the rules. Back in the GUI thread the studio branches at that step (asking first
when recorded steps would be discarded), adds the model's actions as forced actions with one undoable
:class:`core.studio.model_commands.DriveWithModel`, and lets its own simulation worker simulate them. When the
worker's steps are in, the car's recorded cells are compared with the model's run; a difference is reported, never
hidden. The panel's step view then follows the studio's cursor (and moves it), and the car's field of view and
observed entities are drawn on the studio's map for the state shown. The studio's timeline marks the steps where
the model disagreed with the oracle or broke a rule (tooltip: the two actions, the violated rule) until the branch
leaves the recording (a new recording, a branch before the model's steps cuts them) or the model is unloaded.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from PySide6 import QtCore

from app.shell.features import FeatureHost
from app.shell.jobs import JobHandle
from widgets.spf.observation_overlay import ObservationOverlay
from widgets.timeline import Marker

if TYPE_CHECKING:   # the drive module loads the SPF task stack: imported where a model drives
    from core.tasks.spf.drive import BranchDrive

#: the studio timeline's marker group of a model-driven branch, and its two lanes
TIMELINE_GROUP = "spf_model"
DISAGREES_LANE = ("spf_model_disagrees", "Model ≠ oracle", (185, 90, 0))     # darker than "action changed"
VIOLATION_LANE = ("spf_model_violation", "Model broke a rule", (110, 0, 0))   # darker than "stops"


def timeline_markers(drive) -> list[Marker]:
    """The timeline markers of a model-driven branch: at the state each of its steps was decided on, one where the
    model's action differs from the oracle's and one where it broke a task rule."""
    from core.base.codes import ACTION_NAMES

    ep, out = drive.episode, []
    for st in ep.steps:
        k = drive.start + st.step - 1
        who = f"{ep.policy} driving {drive.ego_name}"
        model, oracle = ACTION_NAMES[st.model_action], ACTION_NAMES[st.oracle_action]
        if st.disagrees:
            out.append(Marker(k, DISAGREES_LANE[0], DISAGREES_LANE[2], f"{who}: model {model} vs oracle {oracle}"))
        if st.violations:
            out.append(Marker(k, VIOLATION_LANE[0], VIOLATION_LANE[2],
                              f"{who}: {model} violated " + "; ".join(st.violations)))
    return out


class BranchDriver(QtCore.QObject):
    """The studio side of a model-driven branch; ``panel`` is the Models panel."""

    finished = QtCore.Signal(object)   # the BranchDrive once the studio's simulation has the steps

    def __init__(self, panel, host: FeatureHost) -> None:
        super().__init__(panel)
        self.panel = panel
        self.shell = host.shell
        self.session = host.session
        self.playback = host.playback
        self.timeline = host.timeline
        self.overlay = ObservationOverlay(host.map.vb)
        self.drive: BranchDrive | None = None   # the branch shown
        self.mismatch: int | None = None
        self.handle: JobHandle | None = None
        self._syncing = False
        self.session.events.cursor.connect(lambda e: self._on_cursor(e.value))
        self.session.events.history.connect(lambda e: self.forget())
        self.session.events.truncated.connect(lambda e: self._on_truncated(e.value))

    # ---- request -----------------------------------------------------------------------------------------------
    def refusal(self, policy) -> str | None:
        from core.studio.apply import apply_status
        from core.tasks.spf.drive import branch_problem

        s, pb = self.session, self.playback
        if policy is None:
            return "load a trained run first"
        if s.project is None or s.history is None:
            return "open a project and simulate some steps first"
        if s.read_only is not None:
            return (f"{s.read_only.name} is a read-only replay; File ▸ Save project as… makes it a project that can "
                    "be simulated")
        if pb.syncing:
            return "the studio is still re-simulating the loaded episode; try again in a moment"
        st = apply_status(s)
        if st is not None and st.pending:
            return "the city or agents were edited since this recording; Apply them first"
        if s.cursor > pb.sim_steps:
            return (f"the loaded episode can only be continued from step {pb.sim_steps}; show that step or an "
                    f"earlier one")
        if self.handle is not None and self.handle.is_running():
            return "a model is driving already"
        return branch_problem(s.project.config, s.history, s.cursor, s.selected)

    def start(self, policy, max_steps: int) -> bool:
        """Drive the selected car from the shown step (a job); False (and the reason in the status line) when
        refused."""
        why = self.refusal(policy)
        if why is None:
            from core.base.errors import LogiCityError
            from core.tasks.spf.drive import check_layout

            try:
                check_layout(policy, self.session.project.config.ontology, 5)
            except LogiCityError as exc:
                why = str(exc)
        if why is not None:
            self.shell.status(f"Cannot let the model drive: {why}", 10000)
            self.panel.branch_label.setText(f"Cannot let the model drive: {why}")
            return False
        from core.studio.apply import new_simulation, start_config
        from core.tasks.spf.drive import drive_branch

        s = self.session
        k, ego = int(s.cursor), int(s.selected)
        cfg = s.project.config
        meta = copy.deepcopy(dict(s.history.meta))
        seed = int(meta.get("seed", s.project.seed))
        inter = [dict(e) for e in s.interventions if e["step"] < k]
        self._history = s.history
        name = s.agent_names[ego]
        self.panel.branch_label.setText(f"{policy.algo} drives {name} from step {k}…")

        def job(ctx):
            try:
                sim = new_simulation(start_config(cfg, meta), seed=seed, record=False)
                return drive_branch(sim, inter, k, ego, policy, max_steps,
                                    cancelled=lambda: ctx.cancelled, progress=lambda d, t: ctx.progress(d, t))
            except InterruptedError:
                ctx.check_cancelled()            # cancelled while re-simulating up to step k: ends as cancelled
                raise

        self.handle = self.panel.jobs.start(job, kind="SPF model branch", key="spf_model_branch")
        self.handle.succeeded.connect(self._computed)
        self.handle.failed.connect(lambda err: self.panel.branch_label.setText(
            f"The model could not drive: {getattr(err, 'message', err)}"))
        return True

    # ---- into the studio's recording -----------------------------------------------------------------------------
    def _computed(self, drive: BranchDrive) -> None:
        from core.studio.model_commands import DriveWithModel

        s, pb = self.session, self.playback
        k = drive.start
        if s.history is not self._history or s.num_steps < k or not drive.episode.steps:
            self.panel.branch_label.setText("The recording changed while the model drove; nothing was applied.")
            return
        if s.num_steps > k:
            ans = self.shell.ask("model_branch", "Branch the episode?",
                                  f"The model drove {drive.ego_name} from step {k} for {len(drive.episode.steps)} "
                                  f"steps. Branch at step {k} (discard the recorded steps {k + 1}–{s.num_steps}) "
                                  f"and simulate its run?", [("branch", f"Branch at step {k}"), ("cancel", "Cancel")],
                                  "branch")
            if ans != "branch":
                self.panel.branch_label.setText("Cancelled: the recording was kept.")
                return
            pb.branch_at(k)
        s.execute(DriveWithModel(drive.entries, drive.ego, k,
                                 f"{drive.episode.policy} drives {drive.ego_name} from step {k}"))
        self.drive, self.mismatch = drive, None
        self.panel.branch_label.setText(f"Simulating the model's {len(drive.episode.steps)} steps…")
        pb.run_steps_then(drive.end, lambda: self._simulated(drive))

    def _simulated(self, drive: BranchDrive) -> None:
        if self.drive is not drive:
            return
        self.mismatch = drive.matches(self.session.positions())
        ep = drive.episode
        status = "reached its goal" if ep.success else ("broke a rule" if ep.fail else "used its step budget")
        text = (f"{ep.policy} drove {drive.ego_name} from step {drive.start} to {drive.end}: {status}; "
                f"{len(ep.disagreement_steps())} disagreement(s) with the oracle, {len(ep.violation_steps())} "
                f"violation(s)")
        if self.mismatch is not None:
            text += (f". WARNING: the studio's simulation put {drive.ego_name} elsewhere at step {self.mismatch}; "
                     f"the panel shows the model's own run")
        self.panel.branch_label.setText(text)
        self.shell.status(text, 10000)
        self.panel.show_branch(drive)
        self._mark(drive)
        self.playback.set_cursor(drive.start)
        self._on_cursor(drive.start)
        self.finished.emit(drive)

    # ---- following the cursor --------------------------------------------------------------------------------------
    def step_shown(self, t: int) -> None:
        """The panel shows step ``t`` of the branch: show the state it was decided on."""
        d = self.drive
        if d is None or self._syncing:
            return
        self.playback.set_cursor(d.start + t - 1)

    def _on_cursor(self, k: int) -> None:
        d = self.drive
        if d is None or not d.start <= k < d.end or self.panel.view.episode is not d.episode:
            self.overlay.show(None)
            return
        t = k - d.start + 1
        self.overlay.show(d.views[t - 1], d.episode.steps[t - 1].disagrees)
        self._syncing = True
        try:
            self.panel.view.show_step(t)
        finally:
            self._syncing = False

    def _on_truncated(self, k: int) -> None:
        if self.drive is not None and k < self.drive.end:
            if self.session.num_steps <= self.drive.start:
                self.forget()
            else:
                self._mark(self.drive, before=self.session.num_steps)   # its steps from the cut on are gone

    def _mark(self, drive, before: int | None = None) -> None:
        """Mark the branch's disagreements and violations (the steps before ``before``) on the studio's timeline."""
        self.timeline.set_extra(TIMELINE_GROUP, [DISAGREES_LANE, VIOLATION_LANE],
                                [m for m in timeline_markers(drive) if before is None or m.step < before])

    def forget(self) -> None:
        """The branch is no longer in the recording (a new recording, a branch before it) or the model that drove
        it was unloaded: its overlay and timeline markers go."""
        self.drive = None
        self.overlay.show(None)
        self.timeline.set_extra(TIMELINE_GROUP)

    def shutdown(self, wait_ms: int) -> bool:
        if self.handle is not None and self.handle.is_running():
            self.handle.cancel()
            return self.handle.wait(wait_ms)
        return True
