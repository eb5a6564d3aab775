"""The status bar's permanent labels: what the mouse is over, playing or paused (or re-simulating), the shown step,
the number of agents and the speed (with the measured rate while simulating)."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from core.studio.session import Session

from app.features.playback.controller import PlaybackController


class StatusLabels(QtCore.QObject):
    def __init__(self, bar: QtWidgets.QStatusBar, session: Session, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.hover_label = QtWidgets.QLabel("")
        self.hover_label.setMinimumWidth(200)
        bar.addWidget(self.hover_label, 1)
        self.state_label = QtWidgets.QLabel("")
        self.step_label = QtWidgets.QLabel("Step 0 / 0")
        self.agents_label = QtWidgets.QLabel("0 agents")
        self.speed_label = QtWidgets.QLabel("")
        for w in (self.state_label, self.step_label, self.agents_label, self.speed_label):
            w.setContentsMargins(8, 0, 8, 0)
            bar.addPermanentWidget(w)
        self._step_digits = 0

    def _fit_step_label(self, t: int) -> None:
        """A fixed size for "Step k / T" (wide enough for any k up to T): a label of fixed size does not ask its
        parents to re-lay out when its text changes, so a seek does not re-lay out the status bar and, through
        it, the main window and every dock (widgets/layout_fence.py)."""
        digits = len(str(max(t, 1)))
        if digits != self._step_digits:
            self._step_digits = digits
            w = self.step_label
            m = w.contentsMargins()
            text = f"Step {'8' * digits} / {'8' * digits}"
            w.setFixedSize(w.fontMetrics().horizontalAdvance(text) + m.left() + m.right() + 4,
                           w.sizeHint().height())

    def follow(self, playback: PlaybackController) -> None:
        """Keep the labels current as ``playback`` and the session change."""
        playback.changed.connect(lambda: self.update(playback))
        playback.speedChanged.connect(lambda _: self.update(playback))
        playback.syncProgress.connect(lambda d, t: self.state_label.setText(f"re-simulating {d}/{t}"))
        playback.drawing.drawn.connect(lambda _: self.update(playback))
        self.session.events.cursor.connect(lambda _: self.update(playback))
        self.update(playback)

    def update(self, pb: PlaybackController) -> None:
        s = self.session
        t = s.num_steps
        self._fit_step_label(t)
        self.step_label.setText(f"Step {min(s.cursor, t)} / {t}")
        self.agents_label.setText(f"{len(s.agent_names)} agents")
        target = "max" if pb.speed <= 0 else f"{pb.speed:g}"
        measured = f" ({pb.measured_rate:.1f} measured)" if pb.live and pb.measured_rate else ""
        self.speed_label.setText(f"Speed: {target} steps/s{measured}")
        if not pb.syncing:   # while re-simulating, the label shows its progress
            state = "▶ simulating" if pb.live else "▶ replaying" if pb.replaying else "❚❚ paused"
            self.state_label.setText(state)
