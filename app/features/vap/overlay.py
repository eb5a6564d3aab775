"""VAP predictions in the studio: a dock that opens a VAP dataset frame, loads a checkpoint and
shows, per agent, the predicted vs true action (green / red badges), a hover card with predicted vs true
groundings, the predicted scene graph (edges filtered by predicate), and for the split a confusion matrix with the
per-action recall, aAcc and wAcc. The studio's recording works too: "Shown step" renders the timeline's step as
a VAP frame, "Follow timeline" redoes it whenever the timeline moves, and "Evaluate episode" fills the confusion
matrix over every recorded step. Datasets are also generated from here (a settings dialog, then
``core.tasks.vap.generate`` as a job: progress, Cancel, resumable).

Every slow step — loading a checkpoint (torch), predicting a frame, evaluating a split, generating a dataset — is
a job of the window's :class:`app.shell.jobs.JobRunner`; a newer frame request makes the older one stale. Tools ▸ VAP
predictions (Ctrl+Alt+V) opens the dock.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from app.shell.jobs import CANCELLED

if TYPE_CHECKING:   # torch is loaded with the first dataset, not with the studio
    from core.tasks.vap.torchdata import VapFrames

STAGES = ("train", "val", "test")


class FrameSlider(QtWidgets.QSlider):
    """The frame slider keeps its arrow, Home/End and Page keys while it has focus (the window's timeline
    shortcuts use the same keys; without this they would step the simulation instead of the frame)."""

    _KEYS = {QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_Home, QtCore.Qt.Key.Key_End,
             QtCore.Qt.Key.Key_PageUp, QtCore.Qt.Key.Key_PageDown}

    def event(self, e: QtCore.QEvent) -> bool:
        if e.type() == QtCore.QEvent.Type.ShortcutOverride and isinstance(e, QtGui.QKeyEvent) \
                and e.key() in self._KEYS:
            e.accept()
            return True
        return super().event(e)


class VapPanel(QtWidgets.QWidget):
    """The dock's widget and its logic. Public methods take paths, so tests and scripts skip the file dialogs."""

    def __init__(self, jobs: Any, session: Any = None) -> None:
        super().__init__()
        from widgets.vap.vap_view import VapFrameView

        self.jobs = jobs
        self.session = session
        self._renderer = None
        self.data: Path | None = None
        self.frames: VapFrames | None = None   # the frames of the current stage
        self.model = None
        self.checkpoint: Path | None = None
        self.overlay = None
        self.metrics = None
        self.job = None               # the long job running (evaluate / generate), for Cancel
        self._job_kind = ""
        lay = QtWidgets.QVBoxLayout(self)
        row = QtWidgets.QHBoxLayout()
        self.open_btn = QtWidgets.QPushButton("Open dataset…")
        self.load_btn = QtWidgets.QPushButton("Load checkpoint…")
        self.gen_btn = QtWidgets.QPushButton("Generate dataset…")
        self.state_btn = QtWidgets.QPushButton("Shown step")
        self.state_btn.setToolTip("Render the studio's shown step as a VAP frame and predict it (the step's "
                                  "recorded decisions are the truth)")
        for b in (self.open_btn, self.load_btn, self.gen_btn, self.state_btn):
            row.addWidget(b)
        lay.addLayout(row)
        row2 = QtWidgets.QHBoxLayout()
        self.stage = QtWidgets.QComboBox()
        self.stage.addItems(STAGES)
        self.stage.setCurrentText("test")
        self.slider = FrameSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setEnabled(False)
        self.slider.setToolTip("Frame of the split (Left/Right step through frames)")
        self.where = QtWidgets.QLabel("no dataset")
        self.predicate = QtWidgets.QComboBox()
        self.predicate.addItem("All relations")
        self.predicate.setToolTip("Which predicted scene-graph edges to draw")
        row2.addWidget(self.stage)
        row2.addWidget(self.slider, 1)
        row2.addWidget(self.where)
        row2.addWidget(self.predicate)
        lay.addLayout(row2)
        self.view = VapFrameView()
        self.view.setMinimumHeight(240)
        lay.addWidget(self.view, 1)
        row3 = QtWidgets.QHBoxLayout()
        self.eval_btn = QtWidgets.QPushButton("Evaluate split")
        self.eval_btn.setToolTip("Confusion matrix and per-action recall of the loaded model on this split (cars)")
        self.episode_btn = QtWidgets.QPushButton("Evaluate episode")
        self.episode_btn.setToolTip("Confusion matrix and per-action recall of the loaded model over the studio's "
                                    "recorded steps (truth: the recorded decisions; cars)")
        self.follow = QtWidgets.QCheckBox("Follow timeline")
        self.follow.setToolTip("Show the studio's shown step as a VAP frame whenever the timeline moves")
        self.cancel_btn = QtWidgets.QPushButton("Cancel")
        self.cancel_btn.setEnabled(False)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setMaximumHeight(16)
        row3.addWidget(self.eval_btn)
        row3.addWidget(self.episode_btn)
        row3.addWidget(self.follow)
        row3.addWidget(self.cancel_btn)
        row3.addWidget(self.progress, 1)
        lay.addLayout(row3)
        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.table = QtWidgets.QTableWidget(0, 0)
        self.table.setMaximumHeight(150)
        lay.addWidget(self.table)
        self.recall = QtWidgets.QLabel("")
        lay.addWidget(self.recall)
        self.open_btn.clicked.connect(self._ask_dataset)
        self.load_btn.clicked.connect(self._ask_checkpoint)
        self.gen_btn.clicked.connect(self._ask_generate)
        self.state_btn.clicked.connect(self.show_state)
        self.eval_btn.clicked.connect(self.evaluate_split)
        self.episode_btn.clicked.connect(self.evaluate_episode)
        self.follow.toggled.connect(lambda on: self.show_state() if on else None)
        if session is not None:
            session.events.cursor.connect(lambda _e: self._timeline_moved())
            session.events.truncated.connect(lambda _e: self._episode_changed())
            session.events.project.connect(lambda _e: self._episode_changed())
        self.cancel_btn.clicked.connect(self.cancel)
        self.stage.currentTextChanged.connect(lambda s: self._open_stage())
        self.slider.valueChanged.connect(self.show_frame)
        self.predicate.currentIndexChanged.connect(self._predicate_changed)

    # ---- dataset and frames -------------------------------------------------------------------------------------
    def _ask_dataset(self) -> None:
        d = QtWidgets.QFileDialog.getExistingDirectory(self, "Open a VAP dataset folder")
        if d:
            self.open_dataset(d)

    def open_dataset(self, folder: str | Path) -> None:
        self.data = Path(folder)
        self._open_stage()

    def _side(self) -> int | None:
        return self.model.cfg.image_side if self.model is not None and self.model.grounding is not None else None

    def _open_stage(self) -> None:
        if self.data is None:
            return
        from core.base.errors import LogiCityError

        try:
            from core.tasks.vap.torchdata import VapFrames

            self.frames = VapFrames(self.data, self.stage.currentText(), image_side=self._side())
        except (LogiCityError, OSError, ValueError) as exc:
            self.frames = None
            self._say(f"cannot open {self.data}: {exc}")
            return
        self._fill_predicates(self.frames.info.get("binary_predicates", []))
        n = len(self.frames)
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(0, n - 1))
        self.slider.setValue(0)
        self.slider.setEnabled(n > 0)
        self.slider.blockSignals(False)
        self._say(f"{self.data.name} [{self.frames.stage}]: {n} frames (steps > 10)")
        self.show_frame(0)

    def show_frame(self, index: int) -> None:
        """Predict frame ``index`` (a job; a newer request makes this one stale) and show it."""
        if self.frames is None or not len(self.frames):
            return
        index = int(np.clip(index, 0, len(self.frames) - 1))
        frames, model, root = self.frames, self.model, self.data
        it = frames.items[index]
        self.where.setText(f"world {it['world']}, step {it['step']} ({index + 1}/{len(frames)})")

        def work(ctx):
            from PIL import Image

            from core.tasks.vap.overlay import predict_frame

            with Image.open(root / it["image_path"]) as im:
                image = np.array(im.convert("RGB"))
            return image, predict_frame(model, frames, index)

        h = self.jobs.start(work, kind="VAP frame", key=f"vap-frame-{id(self)}")
        h.succeeded.connect(lambda res, h=h: None if h.stale else self._frame_ready(*res))

    def _frame_ready(self, image: np.ndarray, overlay) -> None:
        self.overlay = overlay
        self.view.set_frame(image, overlay)
        if overlay.has_prediction:
            cars = [a for a in overlay.agents if a.is_car]
            right = sum(bool(a.correct) for a in cars)
            self._say(f"{right}/{len(cars)} cars right in this frame (badges: predicted, true in brackets)")

    def show_state(self) -> None:
        """The session's shown step as a VAP frame (rendered here, predicted in a job)."""
        s = self.session
        if s is None or s.history is None or s.project is None:
            self._say("no recording to show: open a project and simulate a few steps")
            return
        k = int(s.cursor)
        if k >= s.history.num_steps:
            self._say(f"step {k} has no recorded decision yet (the newest state): step back or simulate further")
            return
        from core.tasks.vap.overlay import predict_item, state_item

        config = s.project.config
        try:
            image, item = state_item(config, s.history, k, self._state_renderer(config.city))
        except (ValueError, IndexError) as exc:
            self._say(f"cannot show step {k}: {exc}")
            return
        unary = [p.name for p in config.ontology.unary]
        binary = [p.name for p in config.ontology.binary]
        model = self.model
        if model is not None and (list(model.cfg.unary_names) != unary or list(model.cfg.binary_names) != binary):
            self._say("the loaded checkpoint was trained on another ontology than this project's; showing the truth")
            model = None
        self.where.setText(f"recorded step {k}")
        self._fill_predicates(binary)

        def work(ctx):
            return image, predict_item(model, item, image, unary, binary)

        h = self.jobs.start(work, kind="VAP frame", key=f"vap-frame-{id(self)}")
        h.succeeded.connect(lambda res, h=h: None if h.stale else self._frame_ready(*res))

    def _timeline_moved(self) -> None:
        if self.follow.isChecked() and self.isVisible():
            self.show_state()

    def _episode_changed(self) -> None:
        """The recording an episode evaluation reads was cut or replaced: its figures would mix episodes."""
        if self.job is not None and self.job.is_running() and self._job_kind == "episode":
            self.job.cancel()

    def _state_renderer(self, city):
        if self._renderer is None or self._renderer.city is not city:
            from core.render.icons import IconSet
            from core.render.renderer import Renderer

            self._renderer = Renderer(city, icons=IconSet.load(library=None))
        return self._renderer

    def _fill_predicates(self, names) -> None:
        current = [self.predicate.itemText(i) for i in range(1, self.predicate.count())]
        if current == list(names):
            return
        self.predicate.blockSignals(True)
        self.predicate.clear()
        self.predicate.addItems(["All relations"] + list(names))
        self.predicate.blockSignals(False)
        self.view.set_predicate(None)

    def _predicate_changed(self, i: int) -> None:
        self.view.set_predicate(None if i <= 0 else self.predicate.itemText(i))

    # ---- checkpoint ---------------------------------------------------------------------------------------------
    def _ask_checkpoint(self) -> None:
        d = QtWidgets.QFileDialog.getExistingDirectory(self, "Open a VAP checkpoint folder (model.safetensors)")
        if d:
            self.load_checkpoint(d)

    def load_checkpoint(self, folder: str | Path) -> None:
        def work(ctx):
            from core.models.vap.model import load_checkpoint

            model, _doc = load_checkpoint(folder)
            return model

        self._say(f"loading {folder}…")
        h = self.jobs.start(work, kind="VAP checkpoint", key=f"vap-load-{id(self)}")
        h.succeeded.connect(lambda m: self._model_ready(m, Path(folder)))

    def _model_ready(self, model, folder: Path) -> None:
        self.model, self.checkpoint = model, folder
        self.table.setRowCount(0)
        self.recall.setText("")
        self._say(f"checkpoint {folder.name}: {model.cfg.reasoning.upper()} ({model.cfg.setting}), "
                  f"{'grounding + reasoning' if model.grounding is not None else 'reasoning only (GT groundings)'}")
        if self.data is not None:
            self._open_stage()

    # ---- split evaluation ---------------------------------------------------------------------------------------
    def evaluate_split(self) -> None:
        if self.checkpoint is None or self.data is None:
            self._say("open a dataset and load a checkpoint first")
            return
        ckpt, data, stage = self.checkpoint, self.data, self.stage.currentText()

        def work(ctx):
            from core.tasks.vap.evaluate import evaluate

            return evaluate(ckpt, data, stage, progress=lambda d, t, s="": ctx.progress(d, t), cancel=ctx)

        self._run(work, "VAP evaluation", self._evaluated)

    def _evaluated(self, res) -> None:
        from core.base.codes import ACTION_NAMES
        from widgets.vap.vap_view import confusion_table

        self.metrics = res.actions
        confusion_table(self.table, res.actions.confusion, ACTION_NAMES)
        rec = ", ".join(f"{a} {r:.3f}" for a, r in zip(ACTION_NAMES, res.actions.recalls))
        what = "recorded steps" if res.stage == "episode" else f"{res.stage} frames"
        self.recall.setText(f"recall: {rec} — aAcc {res.actions.a_acc:.3f}, wAcc {res.actions.w_acc:.3f} "
                            f"({res.frames} {what}, {res.groundings} groundings)")

    def evaluate_episode(self) -> None:
        """The loaded model over every recorded step of the studio's episode (a job: progress, Cancel)."""
        s = self.session
        if self.model is None:
            self._say("load a checkpoint first")
            return
        if s is None or s.history is None or s.project is None or s.history.num_steps == 0:
            self._say("no recording to evaluate: open a project and simulate a few steps")
            return
        config, episode, model = s.project.config, s.history, self.model
        if list(model.cfg.unary_names) != [p.name for p in config.ontology.unary] or \
                list(model.cfg.binary_names) != [p.name for p in config.ontology.binary]:
            self._say("the loaded checkpoint was trained on another ontology than this project's")
            return
        steps = range(episode.num_steps)

        def work(ctx):
            from core.render.icons import IconSet
            from core.render.renderer import Renderer
            from core.tasks.vap.evaluate import evaluate_episode

            renderer = Renderer(config.city, icons=IconSet.load(library=None))
            return evaluate_episode(model, config, episode, renderer, steps,
                                    progress=lambda d, t, x="": ctx.progress(d, t, x), cancel=ctx)

        self._run(work, "VAP episode evaluation", self._evaluated, job_kind="episode")

    # ---- dataset generation -------------------------------------------------------------------------------------
    def _ask_generate(self) -> None:
        from app.features.vap.generate import GenerateDialog

        dlg = GenerateDialog(self, str(self.data) if self.data is not None else "")
        if dlg.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            self.generate(dlg.folder(), dlg.config())

    def generate(self, out: str | Path, config) -> None:
        def work(ctx):
            from core.tasks.vap import generate

            return generate(config, out, progress=lambda d, t, s="": ctx.progress(d, t, s), cancel=ctx)

        self._run(work, "VAP dataset generation", lambda res: self._generated(res, Path(out)))

    def _generated(self, res, out: Path) -> None:
        what = "cancelled; complete worlds are kept (generate again to resume)" if res.cancelled else "done"
        self._say(f"{out}: {res.made} world(s) made, {res.skipped} already there, {res.frames} frames — {what}")
        if not res.cancelled:
            self.open_dataset(out)

    # ---- long jobs ----------------------------------------------------------------------------------------------
    def _run(self, work, kind: str, done, *, job_kind: str = "") -> None:
        if self.job is not None and self.job.is_running():
            self._say("a VAP job is running; cancel it first")
            return
        self._job_kind = job_kind
        self.progress.setValue(0)
        self.cancel_btn.setEnabled(True)
        self.job = h = self.jobs.start(work, kind=kind, key=f"vap-long-{id(self)}")
        h.progress.connect(self._progress)
        h.succeeded.connect(done)
        h.finished.connect(lambda outcome: self._job_ended(outcome))

    def _progress(self, values) -> None:
        done, total = values[0], values[1]
        self.progress.setMaximum(max(1, int(total)))
        self.progress.setValue(int(done))
        if len(values) > 2 and values[2]:
            self.progress.setFormat(f"{values[2]} — %v/%m")

    def _job_ended(self, outcome) -> None:
        self.cancel_btn.setEnabled(False)
        self.progress.setFormat("%p%")
        if outcome.status == CANCELLED:
            self._say("cancelled")

    def cancel(self) -> None:
        if self.job is not None:
            self.job.cancel()

    def shutdown(self, wait_ms: int) -> bool:
        self.cancel()
        return self.job is None or not self.job.is_running() or self.job.wait(wait_ms)

    def _say(self, text: str) -> None:
        self.status.setText(text)
