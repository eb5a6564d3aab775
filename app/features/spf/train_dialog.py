"""Train an SPF policy from the studio: algorithm, mode, steps, seed and run folder; the training runs as
a job (app/shell/jobs.py) with a progress bar, a live plot of the training reward / loss and the validation TSR
(pyqtgraph), and Cancel, which stops the learner and keeps the best checkpoint written so far. Opened from the
Models panel's *Train…* button; the finished run can be loaded there at once."""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from app.shell.jobs import JobHandle, JobOutcome

ALGOS = ("mlp-bc", "gnn-bc", "nlm-bc", "dqn", "ppo", "a2c", "nlm-dqn")
MODES = ("easy", "medium", "hard", "expert")


class TrainDialog(QtWidgets.QDialog):
    runFinished = QtCore.Signal(str)       # the run folder, when a run ends with a checkpoint

    def __init__(self, jobs, parent: QtWidgets.QWidget | None = None, *, default_out: str | Path = "runs/spf",
                 options: dict | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Train an SPF policy")
        self.jobs = jobs
        self.options = dict(options or {})   # extra learner options (tests: a small demonstrations file)
        self.handle: JobHandle | None = None
        self.curves: dict[str, list[tuple[int, float]]] = {"reward": [], "loss": [], "val_tsr": []}
        form = QtWidgets.QFormLayout()
        self.algo = QtWidgets.QComboBox()
        self.algo.addItems(ALGOS)
        self.mode = QtWidgets.QComboBox()
        self.mode.addItems(MODES)
        self.steps = QtWidgets.QSpinBox()
        self.steps.setRange(1, 10_000_000)
        self.steps.setValue(20_000)
        self.steps.setToolTip("BC: gradient steps; RL: environment steps")
        self.seed = QtWidgets.QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.out = QtWidgets.QLineEdit(str(default_out))
        form.addRow("Algorithm", self.algo)
        form.addRow("Mode", self.mode)
        form.addRow("Steps", self.steps)
        form.addRow("Seed", self.seed)
        form.addRow("Run folder", self.out)
        lay = QtWidgets.QVBoxLayout(self)
        lay.addLayout(form)
        self.progress = QtWidgets.QProgressBar()
        lay.addWidget(self.progress)
        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.plot = pg.PlotWidget(background="w")
        self.plot.addLegend()
        self.plot.setLabel("bottom", "step")
        self.reward_curve = self.plot.plot(pen=pg.mkPen(90, 140, 210, width=2), name="training reward / loss")
        self.tsr_curve = self.plot.plot(pen=pg.mkPen(0, 150, 0, width=2), symbol="o", symbolSize=6,
                                        name="validation TSR")
        self.plot.setMinimumHeight(180)
        lay.addWidget(self.plot, 1)
        buttons = QtWidgets.QHBoxLayout()
        self.start_button = QtWidgets.QPushButton("Start")
        self.start_button.clicked.connect(self.start)
        self.cancel_button = QtWidgets.QPushButton("Cancel training")
        self.cancel_button.setEnabled(False)
        self.cancel_button.setToolTip("Stop; the best checkpoint so far stays in the run folder")
        self.cancel_button.clicked.connect(self.cancel)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)
        lay.addLayout(buttons)

    def start(self) -> None:
        from core.tasks.spf.learning import train
        from core.tasks.spf.learning.monitor import CallbackMonitor

        if self.handle is not None and self.handle.is_running():
            return
        algo, mode, steps, seed = self.algo.currentText(), self.mode.currentText(), self.steps.value(), \
            self.seed.value()
        out = Path(self.out.text().strip() or "runs/spf")
        if out.exists() and not out.is_dir():
            self.status.setText(f"{out} is a file: choose a folder for the run")
            return
        for v in self.curves.values():
            v.clear()
        self._redraw()
        opts = dict(self.options)

        def job(ctx):
            mon = CallbackMonitor(progress=lambda d, t: ctx.progress(d, t),
                                  metric=lambda step, values: ctx.post((step, values)),
                                  cancelled=lambda: ctx.cancelled, message=ctx.status)
            return train(algo, mode, out, steps=steps, seed=seed, monitor=mon, **opts)

        self.handle = self.jobs.start(job, kind="SPF training", key="spf_training")
        self.handle.progress.connect(self._progress)
        self.handle.status.connect(self.status.setText)
        self.handle.posted.connect(self._metric)
        self.handle.finished.connect(lambda outcome: self._finished(outcome, out))
        self.start_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"training {algo} on {mode}…")

    def cancel(self) -> None:
        if self.handle is not None and self.handle.is_running():
            self.handle.cancel()
            self.status.setText("cancelling: the best checkpoint so far is kept…")

    def _progress(self, values) -> None:
        done, total = values
        self.progress.setMaximum(int(total))
        self.progress.setValue(int(done))

    def _metric(self, item) -> None:
        step, values = item
        for key in ("reward", "loss", "val_tsr"):
            if key in values and values[key] is not None:
                self.curves[key].append((int(step), float(values[key])))
        self._redraw()

    def _redraw(self) -> None:
        main = self.curves["reward"] or self.curves["loss"]
        self.reward_curve.setData([s for s, _ in main], [v for _, v in main])
        self.tsr_curve.setData([s for s, _ in self.curves["val_tsr"]], [v for _, v in self.curves["val_tsr"]])

    def _finished(self, outcome: JobOutcome, out: Path) -> None:
        self.start_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        result = outcome.result
        if not isinstance(result, dict) and (out / "model.safetensors").is_file() and self.curves["val_tsr"]:
            from core.tasks.spf.learning.run import read_config  # cancelled: the job has no result, the run does

            result = read_config(out)
            result["training"]["cancelled"] = True
        if isinstance(result, dict) and (out / "model.safetensors").is_file():
            val = result.get("metrics", {}).get("val", {})
            what = "cancelled; best checkpoint kept" if result["training"].get("cancelled") else "finished"
            self.status.setText(f"{what}: validation TSR {val.get('TSR', float('nan')):.2f} — run in {out}")
            self.runFinished.emit(str(out))
        elif outcome.error is not None:
            self.status.setText(f"training failed: {outcome.error.text}")
        else:
            self.status.setText("stopped before a checkpoint was written")

    def done(self, r: int) -> None:  # closing the dialog cancels a running training
        self.cancel()
        super().done(r)
