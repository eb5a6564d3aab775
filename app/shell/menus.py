"""Menus and toolbars declared as data: which menus the studio has, in which order, and where each action goes.

Why data: features add their actions to menus they name by key (``"file"``, ``"tools"``, ``"city/tools"``),
never by finding a menu whose title matches; the order of the menu bar, of each menu's sections and the separators
between them are declared here once (:data:`MENUS`), so installing features in another order cannot reshuffle
what the user sees. A feature with a menu of its own declares it with a :class:`MenuSpec`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from PySide6 import QtCore, QtGui, QtWidgets

__all__ = ["MenuSpec", "ActionSpec", "MENUS", "MenuBar", "make_action"]


@dataclass(frozen=True)
class MenuSpec:
    """A menu: ``key`` is its path ("city", "city/tools"; a submenu's key extends its parent's), ``title`` its
    text, ``sections`` the names of its groups in order (separators go between the groups that have items)."""

    key: str
    title: str
    sections: tuple[str, ...] = ("",)


@dataclass(frozen=True)
class ActionSpec:
    """A window-wide action: its shortcut works whatever has focus (except text fields) and it is listed in Help ▸
    Keyboard shortcuts. ``menu``/``section`` place it in a declared menu; a plain action's ``slot`` is called with no
    argument (Qt's ``checked`` never reaches a parameter), a checkable one's with the new state."""

    text: str
    slot: Callable[..., object] | None = None
    shortcut: str | tuple[str, ...] | None = None
    tip: str | None = None
    checkable: bool = False
    icon: QtWidgets.QStyle.StandardPixmap | None = None
    menu: str | None = None
    section: str = ""
    toolbar: str | None = None
    name: str = ""          # object name, for the layout and for finding it (e.g. "cityEditorMode")


#: The studio's menus, in menu-bar order; a feature's own submenus are declared by the feature.
MENUS: tuple[MenuSpec, ...] = (
    MenuSpec("file", "&File", ("open", "recent", "save", "export", "info", "quit")),
    MenuSpec("edit", "&Edit"),
    MenuSpec("view", "&View", ("map", "colour", "overlays", "panels", "docks")),
    MenuSpec("simulation", "&Simulation", ("run", "speed", "force", "tasks")),
    MenuSpec("timeline", "&Timeline"),
    MenuSpec("breakpoints", "&Breakpoints", ("here", "agent", "any", "clear")),
    MenuSpec("city", "&City", ("mode", "tools", "city")),
    MenuSpec("tools", "&Tools", ("editors", "rules", "models")),
    MenuSpec("study", "&Study"),
    MenuSpec("help", "&Help"),
)


def make_action(owner: QtWidgets.QWidget, spec: ActionSpec) -> QtGui.QAction:
    """The QAction of ``spec``, window-wide on ``owner``."""
    a = QtGui.QAction(spec.text, owner)
    if spec.shortcut:
        seqs = spec.shortcut if isinstance(spec.shortcut, tuple) else (spec.shortcut,)
        a.setShortcuts([QtGui.QKeySequence(s) for s in seqs])
        a.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
    if spec.tip:
        a.setStatusTip(spec.tip)
        a.setToolTip(f"{spec.tip} ({a.shortcut().toString()})" if spec.shortcut else spec.tip)
    a.setCheckable(spec.checkable)
    if spec.icon is not None:
        a.setIcon(owner.style().standardIcon(spec.icon))
    if spec.name:
        a.setObjectName(spec.name)
    slot = spec.slot
    if slot is not None:
        if spec.checkable:
            a.toggled.connect(slot)
        else:
            a.triggered.connect(lambda _checked=False, f=slot: f())
    owner.addAction(a)
    return a


@dataclass
class _Menu:
    spec: MenuSpec
    menu: QtWidgets.QMenu
    items: dict[str, list[QtGui.QAction]] = field(default_factory=dict)   # section -> actions and submenu actions


class MenuBar:
    """The window's menus, built from :data:`MENUS` and the :class:`MenuSpec` s features declare; actions and
    submenus are kept per section and laid out again when one is added (so a section declared earlier stays
    earlier, whatever installs first)."""

    def __init__(self, bar: QtWidgets.QMenuBar, specs: tuple[MenuSpec, ...] = MENUS) -> None:
        self.bar = bar
        self._menus: dict[str, _Menu] = {}
        for spec in specs:
            self.declare(spec)

    def declare(self, spec: MenuSpec, section: str = "") -> QtWidgets.QMenu:
        """Create the menu ``spec`` (a submenu when its key has a parent: placed in ``section`` of that parent)."""
        if spec.key in self._menus:
            return self._menus[spec.key].menu
        parent_key, _, _ = spec.key.rpartition("/")
        menu = QtWidgets.QMenu(spec.title, self.bar)
        menu.setObjectName(f"menu_{spec.key.replace('/', '_')}")
        self._menus[spec.key] = _Menu(spec, menu)
        if parent_key:
            self._add(parent_key, menu.menuAction(), section)
        else:
            self.bar.addMenu(menu)
            menu.menuAction().setVisible(False)    # shown once something is in it
        return menu

    def menu(self, key: str) -> QtWidgets.QMenu:
        """The declared menu ``key``; a KeyError names the declared ones."""
        try:
            return self._menus[key].menu
        except KeyError:
            raise KeyError(f"no menu {key!r} is declared (declared: {', '.join(self._menus)})") from None

    def add(self, key: str, action: QtGui.QAction, section: str = "") -> None:
        self._add(key, action, section)

    def _add(self, key: str, action: QtGui.QAction, section: str) -> None:
        m = self._menus.get(key)
        if m is None:
            raise KeyError(f"no menu {key!r} is declared (declared: {', '.join(self._menus)})")
        if section not in m.spec.sections and section not in m.items:
            m.items.setdefault(section, [])
        m.items.setdefault(section, []).append(action)
        self._lay_out(m)

    def _lay_out(self, m: _Menu) -> None:
        menu = m.menu
        for a in list(menu.actions()):
            menu.removeAction(a)
        order = list(m.spec.sections) + [s for s in m.items if s not in m.spec.sections]
        first = True
        for section in order:
            actions = m.items.get(section)
            if not actions:
                continue
            if not first:
                menu.addSeparator()
            menu.addActions(actions)
            first = False
        menu.menuAction().setVisible(not first)

    def actions(self) -> list[QtGui.QAction]:
        """Every action in the menus, in menu order (submenus included)."""
        out: list[QtGui.QAction] = []

        def walk(menu: QtWidgets.QMenu) -> None:
            for a in menu.actions():
                sub = a.menu()
                if isinstance(sub, QtWidgets.QMenu):
                    walk(sub)
                elif not a.isSeparator():
                    out.append(a)

        for a in self.bar.actions():
            sub = a.menu()
            if isinstance(sub, QtWidgets.QMenu):
                walk(sub)
        return out
