"""Studio features from a registry: editors, model panels, study and export tools plug in here, not into the window.

Why: the main window is a shell (≤ 500 lines, tests/app/test_shell.py). A feature that needs more than a dock —
menu entries, a toolbar toggle, a controller that listens to the session — registers a :class:`FeatureSpec` in its
own module; the window imports the modules named in :data:`FEATURE_MODULES` before it builds its panels (so their
:func:`app.shell.panels.register` calls count) and, once its own menus exist, calls each spec's ``install(host)``.

``install`` receives a :class:`FeatureHost`: the session, the job runner, the map view, the panels, the shell
(questions, errors, status) and helpers to find or create a menu or toolbar. It returns its controller (kept in
``window.features[name]``; a ``shutdown(wait_ms) -> bool`` method is called when the window closes) or ``None``.

Registering a feature (e.g. at the bottom of ``app/features/city_editor/controller.py``)::

    register(FeatureSpec("city_editor", lambda host: CityEditorController(host)))

and adding ``"app.features.city_editor.controller"`` to :data:`FEATURE_MODULES`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from PySide6 import QtCore, QtGui, QtWidgets

#: Modules that register features and panels at import (one line per feature; order = install order).
FEATURE_MODULES: list[str] = [
    "app.features.city_editor.controller",      # city editor mode and the Problems panel (issue 11)
    "app.features.rule_editor.controller",      # rule and ontology editors, rule analysis (issue 12)
    "app.features.agent_editor.controller",     # agent editor dock, start/goal picking, Apply (issue 11)
    "app.features.study.controller",            # Study menu: designer, participant runner, results (issue 16)
    "app.features.export.dataset",               # File > Export dataset…: exporters, backends, resume (issue 17)
    "app.features.spf.models",                   # SPF models dock: a trained policy driving an episode (issue 14)
    "app.features.vap.overlay",                  # Tools > VAP predictions: frames, checkpoints, confusion (issue 15)
    "app.features.project.episode_info",     # File > Episode info…: saved episodes and the city/agents behind each (11)
]


@dataclass(frozen=True)
class FeatureSpec:
    """One feature: ``install(host)`` builds its controller (or returns None)."""

    name: str
    install: Callable[["FeatureHost"], Any]


_FEATURES: dict[str, FeatureSpec] = {}


def register(spec: FeatureSpec, replace: bool = False) -> FeatureSpec:
    if spec.name in _FEATURES and not replace:
        raise ValueError(f"a feature named {spec.name!r} is already registered")
    _FEATURES[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    _FEATURES.pop(name, None)


def load_feature_modules() -> None:
    """Import every module of :data:`FEATURE_MODULES` (idempotent: Python imports a module once)."""
    for name in FEATURE_MODULES:
        importlib.import_module(name)


def feature_specs() -> list[FeatureSpec]:
    load_feature_modules()
    return list(_FEATURES.values())


class FeatureHost:
    """What a feature may use of the window. ``window`` is there for the shell protocol (``ask``, ``show_error``,
    ``status``, ``settings``, ``non_interactive``) and the existing controllers (``playback``, ``drawing``,
    ``selection``, ``controller`` = the simulation service); reach for anything else through the session."""

    def __init__(self, window: QtWidgets.QMainWindow) -> None:
        self.window = window
        self.session = window.session
        self.jobs = window.jobs
        self.map = window.map
        self.panels = window.panels
        self.docks = window.docks

    # ---- menus and toolbars -------------------------------------------------------------------------------------
    def menu(self, title: str) -> QtWidgets.QMenu:
        """The top-level menu titled ``title`` (``"&Tools"``; ampersands ignored when matching), created before
        Help when missing."""
        bar = self.window.menuBar()
        plain = title.replace("&", "")
        help_action = None
        for action in bar.actions():
            menu = action.menu()
            if menu is None:
                continue
            text = action.text().replace("&", "")
            if text == plain:
                return menu
            if text == "Help":
                help_action = action
        menu = QtWidgets.QMenu(title, self.window)
        if help_action is not None:
            bar.insertMenu(help_action, menu)
        else:
            bar.addMenu(menu)
        return menu

    def toolbar(self, name: str) -> QtWidgets.QToolBar:
        """The toolbar named ``name`` (object name ``toolbar_<name>``), created when missing."""
        found = self.window.findChild(QtWidgets.QToolBar, f"toolbar_{name}")
        if found is not None:
            return found
        tb = self.window.addToolBar(name.replace("_", " ").title())
        tb.setObjectName(f"toolbar_{name}")
        return tb

    def action(self, text: str, slot: Callable | None = None, shortcut: str | list | None = None,
               tip: str | None = None, checkable: bool = False) -> QtGui.QAction:
        """A window-wide action (its shortcut works whatever has focus, and it is listed under Help ▸ Keyboard
        shortcuts); a plain action's slot is called with no argument (``checked`` never reaches a parameter)."""
        return self.window._act(text, slot, shortcut, tip, checkable)


def install_features(window: QtWidgets.QMainWindow) -> dict[str, Any]:
    """Install every registered feature into ``window``; returns name → controller."""
    host = FeatureHost(window)
    installed: dict[str, Any] = {}
    for spec in feature_specs():
        installed[spec.name] = spec.install(host)
    return installed


def shutdown_features(features: dict[str, Any], wait_ms: int) -> list[QtCore.QObject]:
    """Ask each feature controller to stop; returns those still busy (they emit ``idle`` when done)."""
    busy = []
    for controller in features.values():
        if controller is not None and hasattr(controller, "shutdown") and not controller.shutdown(wait_ms):
            busy.append(controller)
    return busy
