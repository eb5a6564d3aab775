"""The studio's panels from a registry: what each dock is, where it goes and how it is built.

Why a registry: panels used to be added by ``install(window)`` functions that built a widget, set attributes on
the window and reached into other widgets' private parts. A coming editor, model panel or study panel instead
registers a :class:`PanelSpec` — name, title (its View ▸ Docks entry), dock area, default visibility, its place
next to other panels, and a ``factory(session, jobs)`` that builds the widget from the Qt-free session model and the
job runner only. The window builds every registered panel with a :class:`PanelHost`; it never learns a panel's
internals, and a panel never sees the window.

A factory returns the widget, or a :class:`Panel` when the widget comes with an app-side controller (e.g. the
Render panel's icon-generation controller, which runs the jobs the widget asks for). A controller with a
``shutdown(wait_ms) -> bool`` method and an ``idle`` signal is asked to stop when the window closes; the window waits
for ``idle`` while one is still busy (a model load cannot be interrupted).

Registering a panel (e.g. in the module that defines it)::

    register(PanelSpec("rules", "Rule editor", RIGHT, lambda session, jobs: RuleEditor(session), visible=False,
                       tabify_with="inspector"))
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6 import QtCore, QtWidgets

LEFT = QtCore.Qt.DockWidgetArea.LeftDockWidgetArea
RIGHT = QtCore.Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = QtCore.Qt.DockWidgetArea.BottomDockWidgetArea
TOP = QtCore.Qt.DockWidgetArea.TopDockWidgetArea


@dataclass
class Panel:
    """What a factory may return: the widget and its app-side controller (optional)."""

    widget: QtWidgets.QWidget
    controller: QtCore.QObject | None = None


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
    factory: Callable[[Any, Any], "QtWidgets.QWidget | Panel"]
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
    """Every registered panel, in registration order (the built-in ones first)."""
    _ensure_builtins()
    return list(_REGISTRY.values())


@dataclass
class _Built:
    spec: PanelSpec
    panel: Panel
    dock: QtWidgets.QDockWidget | None = None
    extra: dict = field(default_factory=dict)


class PanelHost(QtCore.QObject):
    """Builds the registered panels of a main window: :meth:`create` runs the factories, :meth:`dock` puts them
    into docks (through ``window.add_dock``, which lists them in View ▸ Docks) and arranges them."""

    def __init__(self, window: QtWidgets.QMainWindow, session: Any, jobs: Any,
                 specs: list[PanelSpec] | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.jobs = jobs
        self.specs = list(specs) if specs is not None else panel_specs()
        self._built: dict[str, _Built] = {}

    # ---- building -------------------------------------------------------------------------------------------
    def create(self) -> None:
        """Run every factory (before the window's controllers, which are handed the widgets)."""
        for spec in self.specs:
            made = spec.factory(self.session, self.jobs)
            panel = made if isinstance(made, Panel) else Panel(made)
            if not panel.widget.objectName():
                panel.widget.setObjectName(f"{spec.name}Panel")
            self._built[spec.name] = _Built(spec, panel)

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
            b.dock = w.add_dock(content, spec.title, spec.area, spec.name)
            if spec.menu_text:
                b.dock.toggleViewAction().setText(spec.menu_text)
        for b in self._built.values():
            spec = b.spec
            if spec.split_below in self._built:
                w.splitDockWidget(self.dock_of(spec.split_below), b.dock, QtCore.Qt.Orientation.Vertical)
            if spec.tabify_with in self._built:
                w.tabifyDockWidget(self.dock_of(spec.tabify_with), b.dock)
        for b in self._built.values():
            if b.spec.tabify_with in self._built:   # the first of each tab group stays in front
                self.dock_of(b.spec.tabify_with).raise_()
            if not b.spec.visible:
                b.dock.hide()
            if b.spec.open_height:
                b.dock.visibilityChanged.connect(lambda on, b=b: self._make_room(b, on))
        # docks are visible while they are added and placed: the window's cached minimum size counted every one
        # of them (hidden-by-default panels too), so a later resize could not shrink the window below that sum
        w.layout().invalidate()
        w.layout().activate()
        self.apply_sizes()

    def apply_sizes(self) -> None:
        """The default sizes: widths per panel, heights per column of split panels."""
        w = self.window
        for b in self._built.values():
            if b.spec.width and not b.spec.tabify_with:
                w.resizeDocks([b.dock], [b.spec.width], QtCore.Qt.Orientation.Horizontal)
        column = [b for b in self._built.values() if b.spec.height and not b.spec.tabify_with
                  and (b.spec.split_below in self._built
                       or any(o.spec.split_below == b.spec.name for o in self._built.values()))]
        if len(column) > 1:
            w.resizeDocks([b.dock for b in column], [b.spec.height for b in column], QtCore.Qt.Orientation.Vertical)

    def _above(self, b: _Built) -> _Built | None:
        """The panel above ``b`` in its column (directly, or above the panel its tab group belongs to)."""
        name = b.spec.split_below
        if name is None and b.spec.tabify_with in self._built:
            name = self._built[b.spec.tabify_with].spec.split_below
        return self._built.get(name) if name else None

    def _make_room(self, b: _Built, visible: bool) -> None:
        """Opened in a spot shorter than its ``open_height``: take height from the panel above (the user can drag
        the splitter back; done only while it is too short)."""
        w, dock, above = self.window, b.dock, self._above(b)
        if not visible or above is None or dock.isFloating() or above.dock.isFloating() \
                or not above.dock.isVisible() or w.dockWidgetArea(above.dock) != w.dockWidgetArea(dock):
            return
        want = b.spec.open_height
        if dock.height() >= want or above.dock.height() + dock.height() < want + 160:
            return
        w.resizeDocks([above.dock, dock], [above.dock.height() + dock.height() - want, want],
                      QtCore.Qt.Orientation.Vertical)

    # ---- access -------------------------------------------------------------------------------------------
    def __contains__(self, name: str) -> bool:
        return name in self._built

    def names(self) -> list[str]:
        return list(self._built)

    def widget(self, name: str) -> QtWidgets.QWidget:
        return self._built[name].panel.widget

    def controller(self, name: str) -> QtCore.QObject | None:
        return self._built[name].panel.controller

    def dock_of(self, name: str) -> QtWidgets.QDockWidget:
        dock = self._built[name].dock
        if dock is None:
            raise KeyError(f"panel {name!r} is not docked yet")
        return dock

    def default_visibility(self) -> dict[str, bool]:
        return {name: b.spec.visible for name, b in self._built.items()}

    # ---- closing ---------------------------------------------------------------------------------------------
    def shutdown(self, wait_ms: int) -> list[QtCore.QObject]:
        """Ask every panel controller with ``shutdown(wait_ms)`` to stop its work; returns those still busy (each
        emits ``idle`` once it has stopped)."""
        busy = []
        for b in self._built.values():
            ctl = b.panel.controller
            if ctl is not None and hasattr(ctl, "shutdown") and not ctl.shutdown(wait_ms):
                busy.append(ctl)
        return busy


# ---- the built-in panels ---------------------------------------------------------------------------------------
def _timeline(session, jobs) -> QtWidgets.QWidget:
    from core.sim.events import event_kinds
    from widgets.timeline import TimelineWidget

    t = TimelineWidget()
    t.set_lanes([(k.name, k.label, k.colour) for k in event_kinds().values()])
    return t


def _inspector(session, jobs) -> QtWidgets.QWidget:
    from widgets.inspect.inspector import InspectorWidget

    return InspectorWidget()   # it scrolls its own content (no scroll area around it: one scroll bar, not two)


def _statistics(session, jobs) -> QtWidgets.QWidget:
    from widgets.stats import StatsWidget

    return StatsWidget()


def _legend(session, jobs) -> QtWidgets.QWidget:
    from widgets.legend import LegendWidget
    from widgets.map_view import glyph_symbols

    w = LegendWidget()
    w.set_glyphs(glyph_symbols())
    return w


def _breakpoints(session, jobs) -> QtWidgets.QWidget:
    from widgets.breakpoints.breakpoint_list import BreakpointList

    return BreakpointList()


def _render(session, jobs) -> Panel:
    """Icon generation: the widget asks, :class:`app.features.icons.controller.IconGenController` runs the jobs."""
    from core.render.library import IconLibrary
    from widgets.icons.render_dock import RenderDock

    from app.features.icons.controller import IconGenController

    dock = RenderDock(IconLibrary())
    dock.setObjectName("renderDock")
    return Panel(dock, IconGenController(dock, jobs))


def _agents(session, jobs) -> QtWidgets.QWidget:
    """Every agent at the shown step (app/features/inspect/agents.py feeds it from the session)."""
    from widgets.inspect.agents_panel import AgentsPanel

    return AgentsPanel()


def _compare(session, jobs) -> QtWidgets.QWidget:
    """The selected agent and the agents Ctrl+clicked in the Agents panel, side by side."""
    from widgets.inspect.agent_compare import AgentCompare

    return AgentCompare()


#: Height (px) the Render panel asks for when it is opened in a shorter spot: Generate, progress, the tab bar and a
#: row of result thumbnails with their details.
RENDER_DOCK_HEIGHT = 400

BUILTIN_PANELS: tuple[PanelSpec, ...] = (
    PanelSpec("timeline", "Timeline", BOTTOM, _timeline),
    PanelSpec("inspector", "Inspector", RIGHT, _inspector, width=430, height=520),
    PanelSpec("statistics", "Statistics", RIGHT, _statistics, split_below="inspector", height=300),
    PanelSpec("legend", "Legend", LEFT, _legend, width=210),
    PanelSpec("breakpoints", "Breakpoints", LEFT, _breakpoints, tabify_with="legend"),
    PanelSpec("render", "Render (icon generation)", RIGHT, _render, visible=False, tabify_with="statistics",
              scroll=True, open_height=RENDER_DOCK_HEIGHT),
    PanelSpec("agents", "Agents", RIGHT, _agents, tabify_with="statistics"),
    PanelSpec("compare", "Compare agents", RIGHT, _compare, visible=False, tabify_with="inspector"),
)
_BUILTINS_DONE = False


def _ensure_builtins() -> None:
    global _BUILTINS_DONE
    if not _BUILTINS_DONE:
        _BUILTINS_DONE = True
        extra = dict(_REGISTRY)
        _REGISTRY.clear()
        for spec in BUILTIN_PANELS:
            _REGISTRY[spec.name] = spec
        _REGISTRY.update(extra)
