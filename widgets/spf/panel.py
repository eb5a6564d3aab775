"""The SPF play panel: choose mode and episode, drive with keys 1–4, read reward, violations and steps left, scrub.

A passive view: it shows what it is given (:meth:`SPFPanel.show_state`) and emits requests; the controller
(:class:`app.features.spf.play.SPFPlayWindow`) owns the session. The key map is always visible, the action buttons
carry it too, and the violations list names the violated rule and the clause with its witness.
"""
from __future__ import annotations

import html

from PySide6 import QtCore, QtGui, QtWidgets

from core.base.codes import ACTION_NAMES

KEYS = (("1", 0), ("2", 1), ("3", 2), ("4", 3))   # key, action index (Slow, Normal, Fast, Stop)
MODES = ("easy", "medium", "hard", "expert")
OUTCOME_COLOURS = {"running": "#3d8bfd", "success": "#2e9d4f", "violation": "#d9534f", "out of steps": "#e0a100",
                   "not started": "#888888"}


class SPFPanel(QtWidgets.QWidget):
    startRequested = QtCore.Signal(str, str, int)    # mode, split, episode
    choiceChanged = QtCore.Signal(str, str)          # mode, split (the controller answers with set_episode_count)
    actionRequested = QtCore.Signal(int)
    seekRequested = QtCore.Signal(int)
    liveRequested = QtCore.Signal()
    saveRequested = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        lay = QtWidgets.QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)

        box = QtWidgets.QGroupBox("Episode")
        form = QtWidgets.QFormLayout(box)
        self.mode_box = QtWidgets.QComboBox()
        self.mode_box.addItems([m.capitalize() for m in MODES])
        self.split_box = QtWidgets.QComboBox()
        self.split_box.addItems(["test", "val"])
        self.episode_spin = QtWidgets.QSpinBox()
        self.episode_spin.setRange(0, 0)
        self.start_btn = QtWidgets.QPushButton("Start episode")
        self.start_btn.setDefault(True)
        form.addRow("Mode", self.mode_box)
        form.addRow("Episode set", self.split_box)
        form.addRow("Episode", self.episode_spin)
        form.addRow(self.start_btn)
        self.episode_label = QtWidgets.QLabel("Pick a mode and an episode, then Start.")
        self.episode_label.setWordWrap(True)
        form.addRow(self.episode_label)
        lay.addWidget(box)

        box = QtWidgets.QGroupBox("Drive the ego car")
        v = QtWidgets.QVBoxLayout(box)
        self.keymap_label = QtWidgets.QLabel(" · ".join(f"<b>{k}</b> {ACTION_NAMES[a]}" for k, a in KEYS))
        self.keymap_label.setObjectName("keymap")
        self.keymap_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.keymap_label.setStyleSheet("font-size: 15px; padding: 4px;")
        v.addWidget(self.keymap_label)
        row = QtWidgets.QHBoxLayout()
        self.action_buttons: list[QtWidgets.QPushButton] = []
        for key, a in KEYS:
            b = QtWidgets.QPushButton(f"{key}  {ACTION_NAMES[a]}")
            b.setToolTip(f"{ACTION_NAMES[a]} (key {key})")
            b.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
            b.clicked.connect(lambda _=False, a=a: self.actionRequested.emit(a))
            row.addWidget(b)
            self.action_buttons.append(b)
        v.addLayout(row)
        self.hint_check = QtWidgets.QCheckBox("Show what the rules' oracle would do")
        v.addWidget(self.hint_check)
        self.hint_label = QtWidgets.QLabel("")
        v.addWidget(self.hint_label)
        lay.addWidget(box)

        box = QtWidgets.QGroupBox("Live")
        grid = QtWidgets.QGridLayout(box)
        self.outcome_label = QtWidgets.QLabel("not started")
        self.outcome_label.setStyleSheet("font-weight: bold; font-size: 15px;")
        self.steps_label = QtWidgets.QLabel("–")
        self.reward_label = QtWidgets.QLabel("–")
        self.reward_label.setWordWrap(True)
        self.score_label = QtWidgets.QLabel("–")
        grid.addWidget(QtWidgets.QLabel("Status"), 0, 0)
        grid.addWidget(self.outcome_label, 0, 1)
        grid.addWidget(QtWidgets.QLabel("Step"), 1, 0)
        grid.addWidget(self.steps_label, 1, 1)
        grid.addWidget(QtWidgets.QLabel("Last reward"), 2, 0)
        grid.addWidget(self.reward_label, 2, 1)
        grid.addWidget(QtWidgets.QLabel("Score so far"), 3, 0)
        grid.addWidget(self.score_label, 3, 1)
        grid.setColumnStretch(1, 1)
        lay.addWidget(box)

        box = QtWidgets.QGroupBox("Rule violations")
        v = QtWidgets.QVBoxLayout(box)
        self.violations = QtWidgets.QListWidget()
        self.violations.setWordWrap(True)
        self.violations.setMinimumHeight(60)
        self.violations.setMaximumHeight(110)
        self.violations.itemActivated.connect(self._on_violation_activated)
        v.addWidget(self.violations)
        lay.addWidget(box)

        box = QtWidgets.QGroupBox("Review")
        v = QtWidgets.QVBoxLayout(box)
        row = QtWidgets.QHBoxLayout()
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        self.slider.valueChanged.connect(self._on_slider)
        self.live_btn = QtWidgets.QPushButton("Live")
        self.live_btn.setToolTip("Back to the newest step")
        self.live_btn.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        self.live_btn.clicked.connect(self.liveRequested)
        row.addWidget(self.slider, 1)
        row.addWidget(self.live_btn)
        v.addLayout(row)
        self.review_label = QtWidgets.QLabel("")
        self.review_label.setWordWrap(True)
        v.addWidget(self.review_label)
        self.save_btn = QtWidgets.QPushButton("Save run as demonstration…")
        self.save_btn.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        self.save_btn.clicked.connect(self.saveRequested)
        v.addWidget(self.save_btn)
        lay.addWidget(box)
        lay.addStretch(1)

        self._updating = False
        self.start_btn.clicked.connect(self._emit_start)
        self.mode_box.currentIndexChanged.connect(lambda _: self.choiceChanged.emit(self.mode, self.split))
        self.split_box.currentIndexChanged.connect(lambda _: self.choiceChanged.emit(self.mode, self.split))
        self.set_running(False)

    # ---- state ------------------------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        return MODES[self.mode_box.currentIndex()]

    @property
    def split(self) -> str:
        return self.split_box.currentText()

    def set_choice(self, mode: str, split: str, episode: int) -> None:
        self.mode_box.setCurrentIndex(MODES.index(mode))
        self.split_box.setCurrentText(split)
        self.episode_spin.setValue(episode)

    def set_episode_count(self, n: int) -> None:
        self.episode_spin.setRange(0, max(0, n - 1))
        self.episode_spin.setSuffix(f"  of {n}" if n else "")

    def set_running(self, on: bool) -> None:
        for b in self.action_buttons:
            b.setEnabled(on)

    def _emit_start(self) -> None:
        self.startRequested.emit(self.mode, self.split, self.episode_spin.value())

    def _on_slider(self, k: int) -> None:
        if not self._updating:
            self.seekRequested.emit(k)

    def _on_violation_activated(self, item: QtWidgets.QListWidgetItem) -> None:
        k = item.data(QtCore.Qt.ItemDataRole.UserRole)
        if k is not None:
            self.seekRequested.emit(int(k))

    def keyPressEvent(self, ev: QtGui.QKeyEvent) -> None:  # noqa: N802 (Qt name)
        for key, a in KEYS:
            if ev.text() == key:
                self.actionRequested.emit(a)
                return
        super().keyPressEvent(ev)

    # ---- display ----------------------------------------------------------------------------------------------
    def show_episode(self, text: str) -> None:
        self.episode_label.setText(text)

    def show_live(self, *, outcome: str, step: int, steps_left: int, reward: str, score: float,
                  hint: str | None, running: bool, num_steps: int) -> None:
        colour = OUTCOME_COLOURS.get(outcome, "#888888")
        self.outcome_label.setText(f"<span style='color:{colour}'>{html.escape(outcome)}</span>")
        self.steps_label.setText(f"step {step} of {step + steps_left}")   # the episode's step budget
        self.reward_label.setText(reward)
        self.score_label.setText(f"{score:+.4f}")
        self.hint_label.setText(hint if (hint and self.hint_check.isChecked()) else "")
        self.set_running(running)
        self._updating = True
        self.slider.setRange(0, num_steps)
        self._updating = False

    def show_review(self, k: int, num_steps: int, text: str) -> None:
        self._updating = True
        self.slider.setValue(k)
        self._updating = False
        live = k >= num_steps
        self.review_label.setText(("<b>live</b> · " if live else f"<b>reviewing</b> state {k} of {num_steps} · ")
                                  + text)
        self.live_btn.setEnabled(not live)

    def set_violations(self, items: list[tuple[int, str]]) -> None:
        """(step, text) per violation, newest last."""
        self.violations.clear()
        for k, text in items:
            it = QtWidgets.QListWidgetItem(f"step {k}: {text}")
            it.setData(QtCore.Qt.ItemDataRole.UserRole, k)
            it.setForeground(QtGui.QBrush(QtGui.QColor("#d9534f")))
            self.violations.addItem(it)
        if items:
            self.violations.scrollToBottom()
