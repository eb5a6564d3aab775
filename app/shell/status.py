"""The status bar's permanent labels: what the mouse is over, playing or paused (or re-simulating), the shown step,
the number of agents and the speed (with the measured rate while simulating). The features that know these (the
playback feature, the selection's hover) set them."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class StatusLabels(QtCore.QObject):
    def __init__(self, bar: QtWidgets.QStatusBar, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
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

    def show(self, step: int, steps: int, agents: int, speed: str, state: str | None) -> None:
        """Show step ``step`` of ``steps``, the number of agents, the speed text and the playing state (None:
        leave the state label as it is, e.g. while it shows re-simulation progress)."""
        self._fit_step_label(steps)
        self.step_label.setText(f"Step {min(step, steps)} / {steps}")
        self.agents_label.setText(f"{agents} agents")
        self.speed_label.setText(speed)
        if state is not None:
            self.state_label.setText(state)

    def show_state(self, text: str) -> None:
        self.state_label.setText(text)

    def show_hover(self, text: str) -> None:
        """What the mouse is over (the map's cell, its semantic and agent)."""
        self.hover_label.setText(text)
