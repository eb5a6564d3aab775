"""Studio Models panel for SPF: load a trained run (``spf train --out DIR``), let it drive an episode of
its mode's validation or test set on the job runner, and inspect it step by step (widgets/spf/model_view.py):
model vs oracle action, action probabilities or Q-values, the observation's facts, timeline markers where they
disagree or a rule was violated; the loaded episodes' TSR / DSR accumulate in the panel's summary.

*Compare with…* loads a second run: *Drive* then lets both drive the same episode and shows them side by side
(actions, bars, facts, markers, TSR/DSR per model), their sliders moving together. *Drive selected car from shown
step* lets the model drive the car selected in the studio from the step shown, as a branch of the recording
(:mod:`app.features.spf.model_branch`); *Drive in SPF window* opens the SPF play window with the model at the wheel
(:mod:`app.features.spf.play_model`). The field of view and the observed entities of the step shown are drawn on the map.

*Train…* opens :class:`app.features.spf.train_dialog.TrainDialog`; a finished run is loaded into the panel.

The ``spf_models`` dock (View ▸ Docks ▸ SPF models); Tools ▸ *SPF models…* (Ctrl+Alt+M) shows it
(app/features/spf/spec.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtWidgets

from app.features.spf.model_branch import BranchDriver
from app.features.spf.play import SPFLauncher
from app.features.spf.run_load import ask_run, describe_run, load_run_or_warn, load_run_row
from app.features.spf.train_dialog import TrainDialog
from widgets.spf.model_view import ModelEpisodeView

if TYPE_CHECKING:   # the SPF task stack (and torch) load with the first run, not with this module
    from core.tasks.spf.learning.replay import ModelEpisode


class SPFModelsPanel(QtWidgets.QWidget):
    def __init__(self, session, jobs) -> None:
        super().__init__()
        self.session, self.jobs = session, jobs
        self.policy = None
        self.policy_b = None             # a second run to compare with (None: one column)
        self.episodes: dict[tuple[str, int], ModelEpisode] = {}
        self.episodes_b: dict[tuple[str, int], ModelEpisode] = {}
        self.handle = None
        self.branch: BranchDriver | None = None    # set when the panel is installed in the studio
        self.spf_launcher: SPFLauncher | None = None   # the studio's SPF window launcher
        self.train_dialog: TrainDialog | None = None
        lay = QtWidgets.QVBoxLayout(self)
        row, self.load_button, self.run_label = load_run_row(self._ask_run)
        self.unload_button = QtWidgets.QPushButton("Unload")
        self.unload_button.setToolTip("Forget the loaded model(s): the panel's episodes and the model's markers on "
                                      "the studio's timeline go")
        self.unload_button.clicked.connect(self.unload)
        self.unload_button.setEnabled(False)
        row.addWidget(self.unload_button)
        self.train_button = QtWidgets.QPushButton("Train…")
        self.train_button.setToolTip("Train a policy on the job runner (progress, live plot, cancel keeps the best)")
        self.train_button.clicked.connect(self.open_train_dialog)
        row.addWidget(self.train_button)
        lay.addLayout(row)
        rowb = QtWidgets.QHBoxLayout()
        self.compare_button = QtWidgets.QPushButton("Compare with…")
        self.compare_button.setToolTip("Load a second run; Drive then runs both on the same episode side by side")
        self.compare_button.clicked.connect(self._ask_run_b)
        rowb.addWidget(self.compare_button)
        self.run_label_b = QtWidgets.QLabel("")
        self.run_label_b.setWordWrap(True)
        rowb.addWidget(self.run_label_b, 1)
        self.clear_b_button = QtWidgets.QPushButton("One model")
        self.clear_b_button.setToolTip("Stop comparing: show the first model alone")
        self.clear_b_button.clicked.connect(self.clear_compare)
        self.clear_b_button.setEnabled(False)
        rowb.addWidget(self.clear_b_button)
        lay.addLayout(rowb)
        row2 = QtWidgets.QHBoxLayout()
        self.split = QtWidgets.QComboBox()
        self.split.addItems(["test", "val"])
        self.episode = QtWidgets.QSpinBox()
        self.episode.setRange(0, 99)
        self.episode.setPrefix("episode ")
        self.run_button = QtWidgets.QPushButton("Drive")
        self.run_button.setToolTip("Let the model drive the chosen episode (evaluation rules: 2 × oracle steps)")
        self.run_button.setEnabled(False)
        self.run_button.clicked.connect(self.drive)
        for w in (self.split, self.episode, self.run_button):
            row2.addWidget(w)
        lay.addLayout(row2)
        row3 = QtWidgets.QHBoxLayout()
        self.branch_steps = QtWidgets.QSpinBox()
        self.branch_steps.setRange(1, 5000)
        self.branch_steps.setValue(200)
        self.branch_steps.setPrefix("at most ")
        self.branch_steps.setSuffix(" steps")
        self.branch_button = QtWidgets.QPushButton("Drive selected car from shown step")
        self.branch_button.setToolTip("Branch the studio's recording at the shown step: the selected car follows "
                                      "the model (until its goal, a dead violation or the step budget), everybody "
                                      "else the rules (Ctrl+Alt+B)")
        self.branch_button.clicked.connect(self.drive_from_shown_step)
        self.spf_button = QtWidgets.QPushButton("Drive in SPF window")
        self.spf_button.setToolTip("Open the SPF play window on the chosen episode with the model at the wheel")
        self.spf_button.clicked.connect(self.drive_in_spf_window)
        for w in (self.branch_steps, self.branch_button, self.spf_button):
            row3.addWidget(w)
            w.setEnabled(False)
        lay.addLayout(row3)
        self.branch_label = QtWidgets.QLabel("")
        self.branch_label.setWordWrap(True)
        lay.addWidget(self.branch_label)
        self.totals = QtWidgets.QLabel("")
        self.totals.setWordWrap(True)
        lay.addWidget(self.totals)
        self.view = ModelEpisodeView()
        self.view_b = ModelEpisodeView()
        self.view_b.setVisible(False)
        self.view.stepChanged.connect(lambda t: self._follow(self.view_b, t))
        self.view_b.stepChanged.connect(lambda t: self._follow(self.view, t))
        self.view.stepChanged.connect(self._step_shown)
        self.columns = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        self.columns.addWidget(self.view)
        self.columns.addWidget(self.view_b)
        lay.addWidget(self.columns, 1)
        self._following = False

    # ---- actions ----------------------------------------------------------------------------------------------
    def _warn(self, title: str, text: str) -> None:
        QtWidgets.QMessageBox.warning(self, title, text)

    def _ask_run(self) -> None:
        ask_run(self, self.load)

    def load(self, path: str | Path) -> bool:
        pol = load_run_or_warn(path, self._warn)
        if pol is None:
            return False
        if self.policy is not None and self.branch is not None:
            self.branch.forget()              # the markers of the replaced model's branch go with it
        self.policy = pol
        self.episodes.clear()
        if self.policy_b is not None and self.policy_b.mode != pol.mode:
            self.clear_compare()             # the two columns must drive the same mode's episodes
        self.run_label.setText(describe_run(pol))
        self.run_button.setEnabled(True)
        for w in (self.branch_steps, self.branch_button, self.spf_button, self.unload_button):
            w.setEnabled(True)
        self.totals.setText("")
        self._titles()
        return True

    def unload(self) -> None:
        """Forget the loaded model (and the one compared with): its episodes, its view, the markers of the branch
        it drove on the studio's timeline and map."""
        if self.handle is not None and self.handle.is_running():
            self.handle.cancel()
        if self.branch is not None:
            if self.branch.handle is not None and self.branch.handle.is_running():
                self.branch.handle.cancel()
            self.branch.forget()
        self.clear_compare()
        self.policy = None
        self.episodes.clear()
        self.run_label.setText("no model loaded")
        for w in (self.run_button, self.branch_steps, self.branch_button, self.spf_button, self.unload_button):
            w.setEnabled(False)
        self.branch_label.setText("")
        self.view.clear()
        self._titles()
        self._show_totals()

    def _ask_run_b(self) -> None:
        ask_run(self, self.load_compare, "Load a second trained SPF run to compare")

    def load_compare(self, path: str | Path) -> bool:
        """Load a second run; *Drive* then runs both on the same episode, side by side."""
        pol = load_run_or_warn(path, self._warn)
        if pol is None:
            return False
        if self.policy is not None and pol.mode != self.policy.mode:
            self._warn("Cannot compare these models", f"{pol.source}: trained for SPF {pol.mode}, the first model "
                       f"for {self.policy.mode}; both must drive the same mode's episodes")
            return False
        self.policy_b = pol
        self.episodes_b.clear()
        self.run_label_b.setText(f"compared with {describe_run(pol)}")
        self.clear_b_button.setEnabled(True)
        self.view_b.setVisible(True)
        self.view_b.set_episode(_blank(pol))
        self._titles()
        self._show_totals()
        return True

    def clear_compare(self) -> None:
        self.policy_b = None
        self.episodes_b.clear()
        self.run_label_b.setText("")
        self.clear_b_button.setEnabled(False)
        self.view_b.setVisible(False)
        self._titles()
        self._show_totals()

    def _titles(self) -> None:
        two = self.policy_b is not None
        self.view.set_title(f"<b>A</b>: {describe_run(self.policy)}" if two and self.policy is not None else "")
        self.view_b.set_title(f"<b>B</b>: {describe_run(self.policy_b)}" if two else "")

    def _follow(self, other, t: int) -> None:
        """Both columns show the same step."""
        if self._following or not other.isVisible():
            return
        self._following = True
        try:
            other.show_step(t)
        finally:
            self._following = False

    def _step_shown(self, t: int) -> None:
        if self.branch is not None and self.view.episode is not None and self.view.episode.split == "branch":
            self.branch.step_shown(t)

    def drive_from_shown_step(self) -> bool:
        """Let the model drive the car selected in the studio from the shown step (a branch of the recording)."""
        if self.branch is None:
            self.branch_label.setText("Only in the studio: the model drives a car of the studio's recording")
            return False
        return self.branch.start(self.policy, self.branch_steps.value())

    def show_branch(self, drive) -> None:
        ep = drive.episode
        self.view.set_episode(ep)
        r = ep.result
        dec, ok = sum(r.decided.values()), sum(r.ok.values())
        self.view.summary.setText(f"Branch from step {drive.start}: {ep.policy} drives {drive.ego_name} — "
                                  f"{'success' if ep.success else 'violation' if ep.fail else 'goal not reached'} "
                                  f"(TSR {float(ep.success):.0f}), DSR {ok}/{dec}, score {r.score:.2f}")

    def drive_in_spf_window(self):
        """Open the SPF play window on the chosen episode of the model's mode and let the model drive it."""
        if self.policy is None:
            return None
        if self.spf_launcher is None:
            self.spf_launcher = SPFLauncher(self)
        win = self.spf_launcher.open()
        win.start(self.policy.mode, self.split.currentText(), self.episode.value())
        if win.session is None or win.session.mode != self.policy.mode or not win.session.started:
            return win
        if win.model_driver.set_policy(self.policy):
            win.model_driver.set_driving(True)
        return win

    def open_train_dialog(self) -> TrainDialog:
        if self.train_dialog is None:
            self.train_dialog = TrainDialog(self.jobs, self)
            self.train_dialog.runFinished.connect(self.load)
        self.train_dialog.show()
        self.train_dialog.raise_()
        return self.train_dialog

    def drive(self) -> None:
        if self.policy is None or (self.handle is not None and self.handle.is_running()):
            return
        from core.tasks.spf.learning.replay import run_model_episode

        pols = [p for p in (self.policy, self.policy_b) if p is not None]
        split, k = self.split.currentText(), self.episode.value()
        self.run_button.setEnabled(False)
        self.view.summary.setText(f"driving {split} episode {k}…")
        self.handle = self.jobs.start(lambda ctx: [run_model_episode(p, p.mode, split, k,
                                                                     cancelled=lambda: ctx.cancelled) for p in pols],
                                      kind="SPF model episode", key="spf_model_episode")
        self.handle.succeeded.connect(self._shown)
        self.handle.finished.connect(lambda _o: self.run_button.setEnabled(self.policy is not None))

    def _shown(self, episodes) -> None:
        if self.policy is None:               # unloaded while it drove
            return
        episode = episodes[0]
        self.episodes[(episode.split, episode.episode)] = episode
        self.view.set_episode(episode)
        if len(episodes) > 1 and self.policy_b is not None:
            self.episodes_b[(episode.split, episode.episode)] = episodes[1]
            self.view_b.set_episode(episodes[1])
        self._show_totals()

    def _show_totals(self) -> None:
        """TSR / DSR over the episodes each model drove (the evaluation's figures: same scoring function)."""
        lines = []
        for tag, driven in (("A: " if self.policy_b is not None else "", self.episodes),
                            ("B: ", self.episodes_b if self.policy_b is not None else {})):
            eps = list(driven.values())
            if not eps:
                continue
            results = [e.result for e in eps if e.result is not None]   # every driven episode is scored
            tsr = sum(e.success for e in eps) / len(eps)
            dec = sum(sum(r.decided.values()) for r in results)
            ok = sum(sum(r.ok.values()) for r in results)
            dsr = f"{ok / dec:.2f} ({ok}/{dec})" if dec else "– (0/0)"
            lines.append(f"{tag}{len(eps)} episode(s) driven: TSR {tsr:.2f}, DSR {dsr}, mean score "
                         f"{sum(r.score for r in results) / len(eps):.2f}")
        self.totals.setText("\n".join(lines))

    def shutdown(self, wait_ms: int) -> bool:
        ok = True
        if self.handle is not None and self.handle.is_running():
            self.handle.cancel()
            ok = self.handle.wait(wait_ms)
        if self.branch is not None:
            ok = self.branch.shutdown(wait_ms) and ok
        return ok


def _blank(pol):
    from core.tasks.spf.learning.replay import ModelEpisode

    return ModelEpisode(pol.mode, "", 0, pol.name)
