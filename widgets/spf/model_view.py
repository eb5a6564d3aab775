"""A trained SPF model on one episode, step by step: the model's action vs the oracle's, its action scores as a bar
chart, a timeline with markers where they disagree or a rule was violated, and the facts of the observation the
model saw. Fed plain data (:class:`core.tasks.spf.learning.replay.ModelEpisode`); emits ``stepChanged``."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

ACTIONS = ("Slow", "Normal", "Fast", "Stop")


class ModelEpisodeView(QtWidgets.QWidget):
    stepChanged = QtCore.Signal(int)

    def __init__(self, parent: QtWidgets.QWidget | None = None, title: str = "") -> None:
        super().__init__(parent)
        self.episode = None
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.title = QtWidgets.QLabel(title)   # a column's model (side-by-side comparison)
        self.title.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.title.setVisible(bool(title))
        lay.addWidget(self.title)
        self.summary = QtWidgets.QLabel("No episode run yet.")
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.timeline = pg.PlotWidget(background="w")
        self.timeline.setFixedHeight(90)
        self.timeline.setMouseEnabled(x=False, y=False)
        self.timeline.hideAxis("left")
        self.timeline.setLabel("bottom", "step")
        self.dis_marks = pg.ScatterPlotItem(symbol="t", size=9, brush=pg.mkBrush(230, 140, 0), pen=None,
                                            name="disagrees")
        self.vio_marks = pg.ScatterPlotItem(symbol="x", size=11, brush=pg.mkBrush(200, 0, 0),
                                            pen=pg.mkPen(200, 0, 0), name="violation")
        self.cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen(40, 90, 200, width=2))
        for item in (self.dis_marks, self.vio_marks, self.cursor):
            self.timeline.addItem(item)
        self.timeline.setYRange(-0.5, 1.5)
        lay.addWidget(self.timeline)
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setMinimum(1)
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self._show)
        lay.addWidget(self.slider)
        self.step_label = QtWidgets.QLabel("")
        self.step_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        lay.addWidget(self.step_label)
        self.bars_plot = pg.PlotWidget(background="w")
        self.bars_plot.setFixedHeight(150)
        self.bars_plot.setMouseEnabled(x=False, y=False)
        self.bars_plot.getAxis("bottom").setTicks([list(enumerate(ACTIONS))])
        self.bars = pg.BarGraphItem(x=np.arange(4), height=np.zeros(4), width=0.6, brush=pg.mkBrush(90, 140, 210))
        self.oracle_bar = pg.BarGraphItem(x=[0], height=[0], width=0.6, brush=None,
                                          pen=pg.mkPen(0, 150, 0, width=3))
        self.bars_plot.addItem(self.bars)
        self.bars_plot.addItem(self.oracle_bar)
        lay.addWidget(self.bars_plot)
        self.facts = QtWidgets.QListWidget()
        self.facts.setToolTip("What the model saw: the entities of its observation and the facts true in it")
        lay.addWidget(self.facts, 1)

    # ---- data ----------------------------------------------------------------------------------------------
    def set_title(self, text: str) -> None:
        self.title.setText(text)
        self.title.setVisible(bool(text))

    def set_episode(self, episode, show: int | None = None) -> None:
        """Show ``episode``; ``show`` = the step to show (default the first; a live run passes its newest)."""
        self.episode = episode
        n = len(episode.steps)
        self.summary.setText(episode.summary() if episode.result is not None else   # a run still going on
                             f"{episode.policy}: {n} step(s), {len(episode.disagreement_steps())} disagreement(s)")
        dis = episode.disagreement_steps()
        vio = episode.violation_steps()
        self.dis_marks.setData(x=dis, y=[1.0] * len(dis))
        self.vio_marks.setData(x=vio, y=[0.0] * len(vio))
        self.timeline.setXRange(0.5, max(1, n) + 0.5)
        self.slider.setMaximum(max(1, n))
        self.slider.setEnabled(n > 0)
        if n:
            self.show_step(1 if show is None else show)
        else:
            self.step_label.setText("")
            self.bars.setOpts(height=np.zeros(4))
            self.oracle_bar.setOpts(x=[0], height=[0.0])
            self.facts.clear()

    def clear(self) -> None:
        """No episode: nothing marked, nothing shown."""
        self.episode = None
        self.summary.setText("No episode run yet.")
        self.dis_marks.setData(x=[], y=[])
        self.vio_marks.setData(x=[], y=[])
        self.slider.setEnabled(False)
        self.step_label.setText("")
        self.bars.setOpts(height=np.zeros(4))
        self.oracle_bar.setOpts(x=[0], height=[0.0])
        self.facts.clear()

    @property
    def shown_step(self) -> int:
        """The step shown (1-based; 0 when there is none)."""
        return self.slider.value() if self.episode is not None and self.episode.steps else 0

    def show_step(self, step: int) -> None:
        """Show ``step`` (clamped to the episode's steps) and emit ``stepChanged``."""
        if not self.episode or not self.episode.steps:
            return
        step = min(max(int(step), 1), len(self.episode.steps))
        if self.slider.value() != step:
            self.slider.setValue(step)        # valueChanged shows it
        else:
            self._show(step)

    def marker_steps(self) -> tuple[list[int], list[int]]:
        """(disagreement steps, violation steps) as drawn on the timeline."""
        xd = self.dis_marks.getData()[0]
        xv = self.vio_marks.getData()[0]
        return [int(x) for x in xd], [int(x) for x in xv]

    def bar_heights(self) -> list[float]:
        return [float(h) for h in self.bars.opts["height"]]

    def _show(self, step: int) -> None:
        if not self.episode or not self.episode.steps:
            return
        s = self.episode.steps[min(max(step, 1), len(self.episode.steps)) - 1]
        kind = "probability" if s.probabilities is not None else "Q-value"
        vals = s.probabilities if s.probabilities is not None else s.scores
        self.bars.setOpts(height=np.asarray(vals or (0, 0, 0, 0), float))
        self.oracle_bar.setOpts(x=[s.oracle_action], height=[float(vals[s.oracle_action]) if vals else 0.0])
        self.bars_plot.setLabel("left", kind)
        agree = "agrees" if not s.disagrees else "<b style='color:#c60'>disagrees</b>"
        text = (f"step {s.step} of {len(self.episode.steps)}: model <b>{ACTIONS[s.model_action]}</b>, oracle "
                f"<b>{ACTIONS[s.oracle_action]}</b> ({agree}); reward {s.reward:.3f}")
        if s.violations:
            text += "<br><b style='color:#c00'>violation:</b> " + "; ".join(s.violations)
        self.step_label.setText(text)
        self.cursor.setValue(s.step)
        self.facts.clear()
        from core.logic.grounding.grounder import PLACEHOLDER  # (loaded by then: the episode was grounded)

        # the observation's padding slots are not entities: not listed (their facts are all false)
        self.facts.addItem("entities: " + ", ".join(e for e in s.entities if e != PLACEHOLDER))
        self.facts.addItems(list(s.facts))
        self.stepChanged.emit(s.step)
