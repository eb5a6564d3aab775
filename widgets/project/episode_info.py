"""The *Episode info* window: the project's saved episodes (as project.yaml lists them, with the city and agent
hashes that produced each) and the recording on screen. A formatter of :mod:`core.studio.episode_info` data."""
from __future__ import annotations

from typing import Sequence

from PySide6 import QtCore, QtWidgets


class EpisodeInfo(QtWidgets.QDialog):
    """Non-modal; :meth:`show_info` refills it (the controller calls it when the project, recording or save
    changes while it is open)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Episode info")
        self.setObjectName("episodeInfo")
        self.resize(720, 360)
        lay = QtWidgets.QVBoxLayout(self)
        lay.addWidget(QtWidgets.QLabel("<b>Recording shown</b>"))
        self.recording = QtWidgets.QLabel("")
        self.recording.setObjectName("episodeInfoRecording")
        self.recording.setWordWrap(True)
        self.recording.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.recording)
        lay.addWidget(QtWidgets.QLabel("<b>Saved episodes</b> (project.yaml; ● = opened with the project; hashes of "
                                       "the city and agents that produced each)"))
        self.saved = QtWidgets.QListWidget()
        self.saved.setObjectName("episodeInfoSaved")
        self.saved.setWordWrap(True)
        lay.addWidget(self.saved, 1)
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay.addWidget(buttons)

    def show_info(self, recording: Sequence[str], saved: Sequence[tuple[str, str]]) -> None:
        """``recording``: lines about the shown recording; ``saved``: (text, tooltip) per saved episode."""
        self.recording.setText("\n".join(recording))
        self.saved.clear()
        if not saved:
            self.saved.addItem("No saved episode yet (File ▸ Save saves the recording into the project).")
        for text, tip in saved:
            item = QtWidgets.QListWidgetItem(text)
            item.setToolTip(tip)
            self.saved.addItem(item)
