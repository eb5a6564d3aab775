"""Remembered layout and view preferences: window geometry, dock layout, colour-by and planned paths are kept in
the settings between runs (the playback feature keeps its speed); View ▸ Reset layout restores the default docks
(hidden ones, like Render, stay hidden)."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from core.studio.session import Session

STATE_VERSION = 1


class LayoutController(QtCore.QObject):
    def __init__(self, window: QtWidgets.QMainWindow, settings: QtCore.QSettings, session: Session,
                 docks: dict[str, QtWidgets.QDockWidget]) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.session = session
        self.docks = docks
        self._default_state = QtCore.QByteArray()
        self._default_visible: dict[str, bool] = {}

    def restore(self) -> None:
        """Remember the default layout, then restore what the settings hold (call once the docks exist)."""
        w = self.window
        self._default_state = w.saveState(STATE_VERSION)
        # which docks the default layout shows (the Render dock starts hidden); the window is not shown yet, so
        # "not explicitly hidden" is what counts
        self._default_visible = {name: not d.isHidden() for name, d in self.docks.items()}
        geo = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geo is not None:
            w.restoreGeometry(geo)
        else:
            w.resize(1400, 900)
        if state is not None:
            w.restoreState(state, STATE_VERSION)
        s = self.session
        s.restore_view(colour_by=str(self.settings.value("view/colour_by", s.view.colour_by)))
        s.check_scheme("the remembered settings")
        paths = str(self.settings.value("view/paths", s.view.paths))
        if paths in ("all", "selected", "none"):
            s.set_view(paths=paths)

    def save(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.window.saveGeometry())
        s.setValue("window/state", self.window.saveState(STATE_VERSION))
        s.setValue("view/colour_by", self.session.view.colour_by)
        s.setValue("view/paths", self.session.view.paths)
        s.sync()

    def reset(self) -> None:
        if not self._default_state.isEmpty():
            self.window.restoreState(self._default_state, STATE_VERSION)
            for name, d in self.docks.items():
                d.setVisible(self._default_visible.get(name, True))
