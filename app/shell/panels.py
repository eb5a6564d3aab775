"""The studio's panels from a registry: what each dock is, where it goes and how it is built.

Why a registry: a feature registers a :class:`PanelSpec` — name, title (its View ▸ Docks entry), dock area,
default visibility, its place next to other panels, and a ``factory(session, jobs)`` that builds the widget from the
Qt-free session model and the job runner only. The window builds every registered panel with a :class:`PanelHost`;
it never learns a panel's internals, and a panel never sees the window.

A factory returns the widget, or a :class:`Panel` when the widget comes with an app-side controller (e.g. the
Render panel's icon-generation controller, which runs the jobs the widget asks for), a
:class:`~app.shell.features.FeatureController` that is asked to stop when the window closes; the window waits for
its ``idle`` while it is still busy (a model load cannot be interrupted).

Registering a panel (in its feature's spec module)::

    register(PanelSpec("rules", "Rule editor", RIGHT, lambda session, jobs: RuleEditor(session), visible=False,
                       tabify_with="inspector"))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6 import QtCore, QtWidgets

from app.shell.features import FeatureController

LEFT = QtCore.Qt.DockWidgetArea.LeftDockWidgetArea
RIGHT = QtCore.Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = QtCore.Qt.DockWidgetArea.BottomDockWidgetArea
TOP = QtCore.Qt.DockWidgetArea.TopDockWidgetArea


@dataclass
class Panel:
    """What a factory may return: the widget and its app-side controller (optional)."""

    widget: QtWidgets.QWidget
    controller: FeatureController | None = None


@dataclass(frozen=True)
class PanelSpec:
    """One dockable panel.

    ``name`` keys the dock (``dock_<name>`` in the remembered layout, ``window.docks[name]``); ``title`` is the dock's
    title and its View ▸ Docks entry (``menu_text`` overrides the entry); ``visible`` is the default visibility (View
    ▸ Reset layout restores it); ``tabify_with`` / ``split_below`` place it next to an earlier panel; ``scroll`` wraps
    it in a scroll area (a tall form in a short dock); ``width`` / ``height`` are the default size in its area;
    ``open_height``: when opened shorter than this in the column it shares with ``split_below``'s panel (or the panel
    its tab group is below), take the height from the panel above."""

    name: str
    title: str
    area: QtCore.Qt.DockWidgetArea
    factory: Callable[[Any, Any], "QtWidgets.QWidget | Panel"] | None = None   # None: built by the window
    visible: bool = True
    menu_text: str | None = None
    tabify_with: str | None = None
    split_below: str | None = None
    scroll: bool = False
    scroll_horizontal: bool = True
    width: int | None = None
    height: int | None = None
    open_height: int | None = None


_REGISTRY: dict[str, PanelSpec] = {}


def register(spec: PanelSpec, replace: bool = False) -> PanelSpec:
    """Add a panel to the registry (in the order panels are docked). A second spec of the same name is refused
    unless ``replace``."""
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"a panel named {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def panel_specs() -> list[PanelSpec]:
    """Every registered panel, in registration order (the features register theirs as their spec modules are
    imported, in :data:`app.shell.features.FEATURE_MODULES` order)."""
    return list(_REGISTRY.values())


@dataclass
class _Built:
    spec: PanelSpec
    panel: Panel
    dock: QtWidgets.QDockWidget | None = None
    extra: dict = field(default_factory=dict)

    @property
    def docked(self) -> QtWidgets.QDockWidget:
        """The panel's dock, which :meth:`PanelHost.dock` makes: arranging and sizing need it."""
        if self.dock is None:
            raise KeyError(f"panel {self.spec.name!r} is not docked yet")
        return self.dock


class PanelHost(QtCore.QObject):
    """Builds the registered panels of a main window: :meth:`create` runs the factories, :meth:`dock` puts them
    into docks (:meth:`add_dock`, which lists them in View ▸ Docks, ``docks_menu``) and arranges them."""

    def __init__(self, window: QtWidgets.QMainWindow, session: Any, jobs: Any, docks_menu: QtWidgets.QMenu,
                 specs: list[PanelSpec] | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.jobs = jobs
        self.docks_menu = docks_menu
        self.docks: dict[str, QtWidgets.QDockWidget] = {}   # every dock by name (panels and docks added later)
        self.specs = list(specs) if specs is not None else panel_specs()
        self._built: dict[str, _Built] = {}

    def add_dock(self, widget: QtWidgets.QWidget, title: str, area: QtCore.Qt.DockWidgetArea,
                 name: str) -> QtWidgets.QDockWidget:
        """Dock ``widget`` and list it in View ▸ Docks; ``name`` keys the remembered layout (``dock_<name>``)."""
        w = self.window
        dock = QtWidgets.QDockWidget(title, w)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(widget)
        dock.setFeatures(QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetClosable)
        w.addDockWidget(area, dock)
        self.docks[name] = dock
        act = dock.toggleViewAction()
        act.setText(title)
        act.triggered.connect(lambda on, d=dock: d.raise_() if on else None)   # not hidden behind a tab sibling
        self.docks_menu.addAction(act)
        return dock

    # ---- building -------------------------------------------------------------------------------------------
    def create(self) -> None:
        """Run every factory (before the window's controllers, which are handed the widgets)."""
        for spec in self.specs:
            if spec.factory is None:
                continue
            made = spec.factory(self.session, self.jobs)
            panel = made if isinstance(made, Panel) else Panel(made)
            if not panel.widget.objectName():
                panel.widget.setObjectName(f"{spec.name}Panel")
            self._built[spec.name] = _Built(spec, panel)

    def add(self, spec: PanelSpec, widget: QtWidgets.QWidget) -> None:
        """A panel the window built itself (the History view of its undo stack), placed as ``spec`` says."""
        if not widget.objectName():
            widget.setObjectName(f"{spec.name}Panel")
        self._built[spec.name] = _Built(spec, Panel(widget))

    def dock(self) -> None:
        """Dock every created panel (the window's View ▸ Docks menu must exist) and arrange them."""
        w = self.window
        for b in self._built.values():
            spec = b.spec
            content = b.panel.widget
            if spec.scroll:   # a short dock scrolls instead of forcing a tall window or squeezing its neighbours
                area = QtWidgets.QScrollArea()
                area.setWidgetResizable(True)
                area.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
                if not spec.scroll_horizontal:
                    area.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
                area.setWidget(content)
                content = area
            b.dock = dock = self.add_dock(content, spec.title, spec.area, spec.name)
            if spec.menu_text:
                dock.toggleViewAction().setText(spec.menu_text)
        for b in self._built.values():
            spec = b.spec
            if spec.split_below in self._built:
                w.splitDockWidget(self.dock_of(spec.split_below), b.docked, QtCore.Qt.Orientation.Vertical)
            if spec.tabify_with in self._built:
                w.tabifyDockWidget(self.dock_of(spec.tabify_with), b.docked)
        for b in self._built.values():
            if b.spec.tabify_with in self._built:   # the first of each tab group stays in front
                self.dock_of(self._group_root(b.spec.name)).raise_()
            if not b.spec.visible:
                b.docked.hide()
            if b.spec.open_height:
                b.docked.visibilityChanged.connect(lambda on, b=b: self._make_room(b, on))
        # docks are visible while they are added and placed: the window's cached minimum size counted every one
        # of them (hidden-by-default panels too), so a later resize could not shrink the window below that sum
        layout = w.layout()
        if layout is not None:   # a QMainWindow always has its own
            layout.invalidate()
            layout.activate()
        self.apply_sizes()

    def _group_root(self, name: str) -> str:
        """The panel a tab group was started with: followed through ``tabify_with`` (History → Breakpoints →
        Legend)."""
        seen = {name}
        while (parent := self._built[name].spec.tabify_with) in self._built and parent not in seen:
            seen.add(parent)
            name = parent
        return name

    def apply_sizes(self) -> None:
        """The default sizes: widths per panel, heights per column of split panels."""
        w = self.window
        for b in self._built.values():
            if b.spec.width and not b.spec.tabify_with:
                w.resizeDocks([b.docked], [b.spec.width], QtCore.Qt.Orientation.Horizontal)
        column = [(b.docked, b.spec.height) for b in self._built.values() if b.spec.height and not b.spec.tabify_with
                  and (b.spec.split_below in self._built
                       or any(o.spec.split_below == b.spec.name for o in self._built.values()))]
        if len(column) > 1:
            w.resizeDocks([d for d, _ in column], [h for _, h in column], QtCore.Qt.Orientation.Vertical)

    def _above(self, b: _Built) -> _Built | None:
        """The panel above ``b`` in its column (directly, or above the panel its tab group belongs to)."""
        name = b.spec.split_below
        if name is None and b.spec.tabify_with in self._built:
            name = self._built[b.spec.tabify_with].spec.split_below
        return self._built.get(name) if name else None

    def _make_room(self, b: _Built, visible: bool) -> None:
        """Opened in a spot shorter than its ``open_height``: take height from the panel above (the user can drag
        the splitter back; done only while it is too short)."""
        w, dock, above, want = self.window, b.docked, self._above(b), b.spec.open_height
        if not visible or not want or above is None or dock.isFloating() or above.docked.isFloating() \
                or not above.docked.isVisible() or w.dockWidgetArea(above.docked) != w.dockWidgetArea(dock):
            return
        if dock.height() >= want or above.docked.height() + dock.height() < want + 160:
            return
        w.resizeDocks([above.docked, dock], [above.docked.height() + dock.height() - want, want],
                      QtCore.Qt.Orientation.Vertical)

    # ---- access -------------------------------------------------------------------------------------------
    def __contains__(self, name: str) -> bool:
        return name in self._built

    def names(self) -> list[str]:
        return list(self._built)

    def widget(self, name: str) -> QtWidgets.QWidget:
        return self._built[name].panel.widget

    def controller(self, name: str) -> FeatureController | None:
        return self._built[name].panel.controller

    def dock_of(self, name: str) -> QtWidgets.QDockWidget:
        return self._built[name].docked

    def show(self, name: str, height: int | None = None) -> QtWidgets.QDockWidget:
        """Show the dock ``name`` in front of its tab group; ``height``: at least this tall when it is docked (taken
        from the panel above or the map)."""
        dock = self.docks[name]
        dock.show()
        dock.raise_()
        if height is not None and not dock.isFloating() and dock.height() < height:
            self.window.resizeDocks([dock], [height], QtCore.Qt.Orientation.Vertical)
        return dock

    def widen(self, name: str, width: int, max_share: float = 1.0) -> None:
        """Make the docked panel ``name`` at least ``width`` wide (at most ``max_share`` of the window), taking the
        room from the map; a floating or hidden dock is left as it is."""
        dock = self.docks.get(name)
        if dock is None or dock.isFloating() or not dock.isVisible():
            return
        want = min(width, int(self.window.width() * max_share))
        if want > dock.width():
            self.window.resizeDocks([dock], [want], QtCore.Qt.Orientation.Horizontal)

    def default_visibility(self) -> dict[str, bool]:
        return {name: b.spec.visible for name, b in self._built.items()}

    # ---- closing ---------------------------------------------------------------------------------------------
    def shutdown(self, wait_ms: int) -> list[FeatureController]:
        """Ask every panel controller with ``shutdown(wait_ms)`` to stop its work; returns those still busy (each
        emits ``idle`` once it has stopped)."""
        return [b.panel.controller for b in self._built.values()
                if b.panel.controller is not None and not b.panel.controller.shutdown(wait_ms)]
