"""Studio features from a registry: every controller of the studio is a feature; the window installs them and
never learns about any one of them.

Why: the main window is a shell (≤ 500 lines). A feature — playback, projects, the inspector, an editor, a model
panel — registers a :class:`FeatureSpec` in its own ``app/features/<name>/spec.py``, listed in
:data:`FEATURE_MODULES` (its order is the install order: a feature that uses another's service comes after it).
The window imports those modules before it builds its panels (so their :func:`app.shell.panels.register` calls
count) and, once its menus exist, calls each spec's ``install(host)``.

``install`` receives a :class:`FeatureHost`: the session, the job runner, the simulation service, the map view,
the panels and docks, the shell (questions, errors, status), typed services of other features
(:mod:`app.shell.services`), and actions, menus and toolbars declared as data (:mod:`app.shell.menus`). It
returns its controller (kept in ``window.features[name]``), a :class:`FeatureController`: closing the window asks
its ``shutdown(wait_ms)`` (and waits, while it returns False, for its ``idle`` signal), then calls its ``stop()``.

Registering a feature (at the bottom of ``app/features/city_editor/spec.py``)::

    register(FeatureSpec("city_editor", CityEditorController))
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from PySide6 import QtCore, QtGui, QtWidgets

from app.shell.menus import ActionSpec, MenuBar, MenuSpec, make_action
from app.shell.services import (
    BREAKPOINTS,
    DRAWING,
    PLAYBACK,
    PROBLEMS,
    PROJECTS,
    SELECTION,
    TIMELINE,
    Breakpoints,
    Drawing,
    Playback,
    Problems,
    Projects,
    Selection,
    Service,
    Shell,
    Timeline,
)

__all__ = ["FEATURE_MODULES", "FeatureSpec", "FeatureController", "FeatureHost", "register", "unregister",
           "feature_specs", "load_feature_modules", "install_features", "shutdown_features"]

T = TypeVar("T")

#: Modules that register features and panels at import (one line per feature; order = install order).
FEATURE_MODULES: list[str] = [
    "app.features.playback.spec",       # the simulation worker link, drawing, timeline, speed
    "app.features.project.spec",        # open, save, recent files, the unsaved-changes question, episode info
    "app.features.view.spec",           # fit and zoom, colour-by, planned paths, overlays, icon art
    "app.features.inspect.spec",        # selection, inspector, statistics, Agents and Compare, gridlock cycle
    "app.features.breakpoints.spec",    # the Breakpoints dock and menu
    "app.features.export.spec",         # the view as PNG, steps as GIF or images, datasets
    "app.features.icons.spec",          # the Render panel (icon generation)
    "app.features.problems.spec",       # the Problems panel and the refusal to simulate on errors
    "app.features.city_editor.spec",    # city editor mode, New city, resize, import/export
    "app.features.rule_editor.spec",    # rule and ontology editors, rule analysis
    "app.features.agent_editor.spec",   # agent editor dock, start/goal picking, Apply
    "app.features.study.spec",          # Study menu: designer, participant runner, results
    "app.features.spf.spec",            # SPF play window and the SPF models dock
    "app.features.vap.spec",            # VAP predictions: frames, checkpoints, confusion
]


class FeatureController(QtCore.QObject):
    """The base of every feature's controller: what closing the window asks of it."""

    idle = QtCore.Signal()          # background work that ``shutdown`` waited for has stopped

    #: What closing waits for while ``shutdown`` returns False ("waiting for the model to load…").
    waiting_message = ""

    def shutdown(self, wait_ms: int) -> bool:
        """Stop background work, waiting up to ``wait_ms``; False while it still runs (then emit ``idle``)."""
        return True

    def stop(self) -> None:
        """The window closes: stop timers and playback (after every ``shutdown`` returned True)."""


@dataclass(frozen=True)
class FeatureSpec:
    """One feature: ``install(host)`` builds its controller."""

    name: str
    install: Callable[["FeatureHost"], FeatureController]


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
    """What a feature may use of the studio. No window: dialogs open over ``shell.dialog_parent``; other features
    are reached through their services (:meth:`get`, or the typed shorthands)."""

    def __init__(self, owner: QtWidgets.QMainWindow, shell: Shell, session: Any, jobs: Any, simulation: Any,
                 map_view: Any, panels: Any, docks: dict[str, QtWidgets.QDockWidget], menus: MenuBar,
                 status_labels: Any) -> None:
        self._owner = owner                # the window: actions and toolbars are its children
        self.shell = shell
        self.session = session
        self.jobs = jobs
        self.simulation = simulation       # app.shell.worker.SimController: the simulation worker service
        self.map = map_view
        self.panels = panels
        self.docks = docks
        self.menus = menus
        self.status_labels = status_labels
        self._services: dict[str, Any] = {}
        self._close_guards: list[Callable[[], bool]] = []

    # ---- services ---------------------------------------------------------------------------------------------
    def provide(self, key: Service[T], impl: T) -> T:
        if key.name in self._services:
            raise ValueError(f"the {key.name} service is already provided")
        self._services[key.name] = impl
        return impl

    def get(self, key: Service[T]) -> T:
        try:
            return self._services[key.name]
        except KeyError:
            raise LookupError(f"no feature provides the {key.name} service (is it installed, and before this "
                              f"feature?)") from None

    def has(self, key: Service[Any]) -> bool:
        return key.name in self._services

    @property
    def playback(self) -> Playback:
        return self.get(PLAYBACK)

    @property
    def drawing(self) -> Drawing:
        return self.get(DRAWING)

    @property
    def timeline(self) -> Timeline:
        return self.get(TIMELINE)

    @property
    def selection(self) -> Selection:
        return self.get(SELECTION)

    @property
    def problems(self) -> Problems:
        return self.get(PROBLEMS)

    @property
    def projects(self) -> Projects:
        return self.get(PROJECTS)

    @property
    def breakpoints(self) -> Breakpoints:
        return self.get(BREAKPOINTS)

    # ---- closing ----------------------------------------------------------------------------------------------
    def guard_close(self, may_close: Callable[[], bool]) -> None:
        """``may_close()`` is asked before the window closes (an unsaved project, an unsaved run); False keeps it
        open."""
        self._close_guards.append(may_close)

    def may_close(self) -> bool:
        return all(guard() for guard in self._close_guards)

    # ---- actions, menus and toolbars ------------------------------------------------------------------------
    def add(self, spec: ActionSpec) -> QtGui.QAction:
        """A window-wide action, placed in its declared menu and toolbar."""
        a = make_action(self._owner, spec)
        if spec.menu is not None:
            self.menus.add(spec.menu, a, spec.section)
        if spec.toolbar is not None:
            self.toolbar(spec.toolbar).addAction(a)
        return a

    def action(self, text: str, slot: Callable[..., object] | None = None, shortcut: str | list | None = None,
               tip: str | None = None, checkable: bool = False) -> QtGui.QAction:
        """A window-wide action that is in no menu yet (``add_to_menu``)."""
        keys = tuple(shortcut) if isinstance(shortcut, list) else shortcut
        return self.add(ActionSpec(text, slot, keys, tip, checkable))

    def add_to_menu(self, key: str, *actions: QtGui.QAction, section: str = "") -> None:
        for a in actions:
            self.menus.add(key, a, section)

    def menu(self, key: str, declare: MenuSpec | None = None, section: str = "") -> QtWidgets.QMenu:
        """The menu ``key`` (declared in :data:`app.shell.menus.MENUS`, or by ``declare`` — a submenu of its
        parent's ``section``)."""
        if declare is not None:
            return self.menus.declare(declare, section)
        return self.menus.menu(key)

    def toolbar(self, key: str, title: str | None = None, new_row: bool = False) -> QtWidgets.QToolBar:
        """The toolbar ``key`` (object name ``toolbar_<key>``), created when missing (``new_row``: on a row of its
        own, so that it does not widen the window)."""
        found = self._owner.findChild(QtWidgets.QToolBar, f"toolbar_{key}")
        if found is not None:
            return found
        if new_row:
            self._owner.addToolBarBreak()
        tb = self._owner.addToolBar(title or key.replace("_", " ").title())
        tb.setObjectName(f"toolbar_{key}")
        return tb


def install_features(host: FeatureHost) -> dict[str, FeatureController]:
    """Install every registered feature; returns name → controller."""
    return {spec.name: spec.install(host) for spec in feature_specs()}


def shutdown_features(features: dict[str, FeatureController], wait_ms: int) -> list[FeatureController]:
    """Ask each feature controller to stop its background work; returns those still busy (they emit ``idle``)."""
    return [c for c in features.values() if not c.shutdown(wait_ms)]
