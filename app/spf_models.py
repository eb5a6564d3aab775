"""Studio Models panel for SPF (issue 14): load a trained run (``spf train --out DIR``), let it drive an episode of
its mode's validation or test set on the job runner, and inspect it step by step (widgets/spf_model_view.py):
model vs oracle action, action probabilities or Q-values, the observation's facts, timeline markers where they
disagree or a rule was violated; the loaded episodes' TSR / DSR accumulate in the panel's summary.

*Train…* opens :class:`app.spf_train_dialog.TrainDialog`; a finished run is loaded into the panel.

Registered as the ``spf_models`` dock (View ▸ Docks ▸ SPF models) and a Tools ▸ *SPF models…* action
(Ctrl+Alt+M) that shows it.
"""
from __future__ import annotations

from pathlib import Path

from PySide6 import QtWidgets

from app.features import FeatureSpec, register as register_feature
from app.panels import RIGHT, PanelSpec, register as register_panel
from widgets.spf_model_view import ModelEpisodeView


class SPFModelsPanel(QtWidgets.QWidget):
    def __init__(self, session, jobs) -> None:
        super().__init__()
        self.session, self.jobs = session, jobs
        self.policy = None
        self.episodes: dict[tuple[str, int], object] = {}
        self.handle = None
        lay = QtWidgets.QVBoxLayout(self)
        row = QtWidgets.QHBoxLayout()
        self.load_button = QtWidgets.QPushButton("Load run…")
        self.load_button.setToolTip("A folder written by python main.py spf train --out DIR")
        self.load_button.clicked.connect(self._ask_run)
        row.addWidget(self.load_button)
        self.run_label = QtWidgets.QLabel("no model loaded")
        self.run_label.setWordWrap(True)
        row.addWidget(self.run_label, 1)
        self.train_button = QtWidgets.QPushButton("Train…")
        self.train_button.setToolTip("Train a policy on the job runner (progress, live plot, cancel keeps the best)")
        self.train_button.clicked.connect(self.open_train_dialog)
        row.addWidget(self.train_button)
        lay.addLayout(row)
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
        self.totals = QtWidgets.QLabel("")
        lay.addWidget(self.totals)
        self.view = ModelEpisodeView()
        lay.addWidget(self.view, 1)

    # ---- actions ----------------------------------------------------------------------------------------------
    def _ask_run(self) -> None:
        path = QtWidgets.QFileDialog.getExistingDirectory(self, "Load a trained SPF run")
        if path:
            self.load(path)

    def load(self, path: str | Path) -> bool:
        from core.errors import LogiCityError
        from core.tasks.spf_learning.run import load_run

        try:
            pol = load_run(path)
        except LogiCityError as exc:
            QtWidgets.QMessageBox.warning(self, "Cannot load the model", str(exc))
            return False
        self.policy = pol
        self.episodes.clear()
        tr = pol.config.get("training", {})
        test = pol.config.get("metrics", {}).get("test")
        self.run_label.setText(f"{pol.algo} for {pol.mode} (seed {tr.get('seed', '?')}, {tr.get('steps', '?')} "
                               f"steps)" + (f"; test TSR {test['TSR']:.2f}" if test else ""))
        self.run_button.setEnabled(True)
        self.totals.setText("")
        return True

    def open_train_dialog(self):
        from app.spf_train_dialog import TrainDialog

        if getattr(self, "train_dialog", None) is None:
            self.train_dialog = TrainDialog(self.jobs, self)
            self.train_dialog.runFinished.connect(self.load)
        self.train_dialog.show()
        self.train_dialog.raise_()
        return self.train_dialog

    def drive(self) -> None:
        if self.policy is None or (self.handle is not None and self.handle.is_running()):
            return
        from core.tasks.spf_learning.replay import run_model_episode

        pol, split, k = self.policy, self.split.currentText(), self.episode.value()
        self.run_button.setEnabled(False)
        self.view.summary.setText(f"driving {split} episode {k}…")
        self.handle = self.jobs.start(lambda ctx: run_model_episode(pol, pol.mode, split, k,
                                                                    cancelled=lambda: ctx.cancelled),
                                      kind="SPF model episode", key="spf_model_episode")
        self.handle.succeeded.connect(self._shown)
        self.handle.finished.connect(lambda _o: self.run_button.setEnabled(self.policy is not None))

    def _shown(self, episode) -> None:
        self.episodes[(episode.split, episode.episode)] = episode
        self.view.set_episode(episode)
        eps = list(self.episodes.values())
        tsr = sum(e.success for e in eps) / len(eps)
        dec = sum(sum(e.result.decided.values()) for e in eps)
        ok = sum(sum(e.result.ok.values()) for e in eps)
        self.totals.setText(f"{len(eps)} episode(s) driven: TSR {tsr:.2f}, DSR {ok}/{dec}")

    def shutdown(self, wait_ms: int) -> bool:
        if self.handle is not None and self.handle.is_running():
            self.handle.cancel()
            return self.handle.wait(wait_ms)
        return True


def _install(host):
    def show():
        dock = host.docks.get("spf_models")
        if dock is not None:
            dock.show()
            dock.raise_()

    host.menu("&Tools").addAction(host.action("SPF &models…", show, "Ctrl+Alt+M",
                                              "Load a trained SPF model and watch it drive an episode"))
    return None


register_panel(PanelSpec("spf_models", "SPF models", RIGHT, lambda session, jobs: SPFModelsPanel(session, jobs),
                         visible=False))
register_feature(FeatureSpec("spf_models", _install))
