"""View options: colour-by (an undoable project edit), planned paths, overlays, icon art, follow, fit and zoom.

The session's :class:`~core.studio.session.ViewOptions` is the truth; menus, the toolbar's colour box and checkable
actions show it and change it, and the map view follows its ``view`` events.
"""
from __future__ import annotations

from typing import Any

from PySide6 import QtCore, QtGui, QtWidgets

from app.shell.features import FeatureController
from app.shell.services import Shell
from core.studio.commands import SetColourScheme
from core.studio.session import Session

PATH_CHOICES = (("All agents", "all"), ("Selected agent only", "selected"), ("None", "none"))


class ViewController(FeatureController):
    def __init__(self, shell: Shell, session: Session, map_view: Any, legend: Any,
                 parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.session = session
        self.map = map_view
        self.legend = legend
        self.bound: dict[str, QtGui.QAction] = {}     # view option -> its checkable action
        self.colour_menu = QtWidgets.QMenu("&Colour agents by")
        self.colour_group = QtGui.QActionGroup(self)
        self.colour_group.triggered.connect(lambda a: self.set_colour_scheme(a.text()))
        self.colour_combo = QtWidgets.QComboBox()
        self.colour_combo.textActivated.connect(self.set_colour_scheme)
        self.colour_combo.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        self.path_menu = QtWidgets.QMenu("Planned &paths")
        self.path_group = QtGui.QActionGroup(self)
        for label, mode in PATH_CHOICES:
            a = self.path_menu.addAction(label)
            a.setCheckable(True)
            a.setData(mode)
            self.path_group.addAction(a)
        self.path_group.triggered.connect(lambda a: self.set_path_mode(a.data()))
        self._schemes: list[str] = []
        self._fill_schemes()
        self._show_view()
        ev = session.events
        ev.project.connect(lambda e: self._fill_schemes())
        ev.history.connect(lambda e: self._fill_schemes())
        ev.view.connect(self._on_view)

    # ---- colour-by ----------------------------------------------------------------------------------------------
    def _fill_schemes(self) -> None:
        """The colour-by menu and box list the schemes of the current agents (concepts add schemes); refilled only
        when that list changes."""
        names = self.session.colour_schemes()
        if names == self._schemes:
            return
        self._schemes = names
        self.colour_menu.clear()
        for a in list(self.colour_group.actions()):
            self.colour_group.removeAction(a)
        for name in names:
            a = self.colour_menu.addAction(name)
            a.setCheckable(True)
            self.colour_group.addAction(a)
        self.colour_combo.blockSignals(True)
        self.colour_combo.clear()
        self.colour_combo.addItems(names)
        self.colour_combo.blockSignals(False)
        self._show_view()

    def set_colour_scheme(self, name: str) -> None:
        """Colour agents by ``name`` (an undoable edit; consecutive ones merge); unknown names are ignored."""
        if name not in self.session.colour_schemes():
            return
        if name != self.session.view.colour_by:
            self.session.execute(SetColourScheme(name))

    # ---- other options ------------------------------------------------------------------------------------------
    def set_path_mode(self, mode: str) -> None:
        self.session.set_view(paths=mode)

    def bind(self, option: str, action: QtGui.QAction) -> None:
        """A checkable action that shows and sets the boolean view option ``option``."""
        self.bound[option] = action
        action.setChecked(bool(getattr(self.session.view, option)))
        action.toggled.connect(lambda on: self.session.set_view(**{option: bool(on)}))

    def fit(self) -> None:
        self.session.set_view(follow=False)
        self.map.fit()

    def _on_view(self, event: Any) -> None:
        changed = set(event.changed)
        v = self.session.view
        if "paths" in changed or "goals" in changed or "fov" in changed:
            self.map.set_overlays(paths=v.paths, goals=v.goals, fov=v.fov)
        if "follow" in changed:
            self.map.set_follow(v.follow)
        if "intersections" in changed:
            self.map.set_intersections_visible(v.intersections)
            self.legend.set_intersections_visible(v.intersections)
        if "icons" in changed:
            self._apply_icons(v.icons)
        self._show_view()

    def _apply_icons(self, on: bool) -> None:
        try:
            self.map.set_style("icons" if on else "glyphs")
        except Exception as exc:  # noqa: BLE001 - icon art unavailable: stay with glyphs
            self.map.set_style("glyphs")
            self.session.set_view(icons=False)
            self.shell.show_error("Icon art unavailable", "(icon set)", f"{type(exc).__name__}: {exc}")

    def _show_view(self) -> None:
        """Menus, the colour box and the bound actions show the session's view options."""
        v = self.session.view
        for a in self.colour_group.actions():
            a.setChecked(a.text() == v.colour_by)
        if self.colour_combo.currentText() != v.colour_by:
            self.colour_combo.blockSignals(True)
            self.colour_combo.setCurrentText(v.colour_by)
            self.colour_combo.blockSignals(False)
        for a in self.path_group.actions():
            a.setChecked(a.data() == v.paths)
        for option, action in self.bound.items():
            if action.isChecked() != bool(getattr(v, option)):
                action.blockSignals(True)
                action.setChecked(bool(getattr(v, option)))
                action.blockSignals(False)
