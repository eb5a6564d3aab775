"""Playback speeds: the choices (steps per second; 0 = as fast as possible), and Simulation ▸ Speed with the
toolbar's speed box, both showing and setting the playback controller's speed."""
from __future__ import annotations

from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

SPEEDS: tuple[tuple[str, float], ...] = (("1 step/s", 1), ("2 steps/s", 2), ("5 steps/s", 5), ("10 steps/s", 10),
                                         ("20 steps/s", 20), ("50 steps/s", 50), ("As fast as possible", 0))
DEFAULT_SPEED = 10.0


class SpeedControls(QtCore.QObject):
    """Simulation ▸ Speed (a checkable entry per speed) and the toolbar's speed box, both showing and setting the
    playback speed."""

    def __init__(self, playback: Any, menu: QtWidgets.QMenu) -> None:
        """``playback``: the :class:`~app.features.playback.controller.PlaybackController` (``speed``, ``set_speed``,
        ``speedChanged``)."""
        super().__init__(playback)
        self.playback = playback
        self.group = QtGui.QActionGroup(self)
        self.combo = QtWidgets.QComboBox()
        for label, sps in SPEEDS:
            act = menu.addAction(label)
            act.setCheckable(True)
            act.setData(sps)
            self.group.addAction(act)
            self.combo.addItem(label, sps)
        self.group.triggered.connect(lambda act: playback.set_speed(float(act.data())))
        self.combo.currentIndexChanged.connect(lambda i: playback.set_speed(float(self.combo.itemData(i))))
        self.combo.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        playback.speedChanged.connect(self.show)
        self.show(playback.speed)

    def show(self, sps: float) -> None:
        for act in self.group.actions():
            act.setChecked(float(act.data()) == sps)
        values = [v for _, v in SPEEDS]
        if sps in values and self.combo.currentIndex() != values.index(sps):
            self.combo.blockSignals(True)
            self.combo.setCurrentIndex(values.index(sps))
            self.combo.blockSignals(False)
