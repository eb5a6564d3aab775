"""Dock the icon Render dock into the studio and keep the map view's icon art in step with it.

Kept out of main_window.py so the window does not depend on the icon generator: the dock itself imports
torch/diffusers only when a generation starts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6 import QtCore, QtWidgets

if TYPE_CHECKING:  # pragma: no cover
    from .main_window import MainWindow


#: Height (px) the Render dock asks for when it is opened in a shorter spot: Generate, progress, the tab bar and a
#: row of result thumbnails with their details.
RENDER_DOCK_HEIGHT = 400


def install(window: "MainWindow") -> None:
    """Add the Render dock (tabbed with Statistics, hidden until opened from View ▸ Docks)."""
    from core.render.library import IconLibrary
    from widgets.render_dock import RenderDock

    library = IconLibrary()
    dock_widget = RenderDock(library)
    dock_widget.setObjectName("renderDock")
    scroll = QtWidgets.QScrollArea()  # the form is tall: scroll rather than squeeze the docks it is tabbed with
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
    scroll.setWidget(dock_widget)
    dock = window.add_dock(scroll, "Render (icon generation)", QtCore.Qt.DockWidgetArea.RightDockWidgetArea,
                           "render")
    if "statistics" in window.docks:
        window.tabifyDockWidget(window.docks["statistics"], dock)
        window.docks["statistics"].raise_()
    dock.hide()
    if "inspector" in window.docks:  # tabifying re-balanced the right column: restore the default width
        window.resizeDocks([window.docks["inspector"]], [430], QtCore.Qt.Orientation.Horizontal)
        if "statistics" in window.docks:
            window.resizeDocks([window.docks["inspector"], window.docks["statistics"]], [520, 300],
                               QtCore.Qt.Orientation.Vertical)
    window.render_dock = dock_widget

    def make_room(visible: bool) -> None:
        """Opening the Render dock in the short area it shares with Statistics: take height from the Inspector
        above so a row of results shows (the user can drag the splitter back; done only while it is too short)."""
        insp = window.docks.get("inspector")
        if not visible or dock.isFloating() or insp is None or insp.isFloating() or not insp.isVisible() \
                or window.dockWidgetArea(insp) != window.dockWidgetArea(dock):
            return
        want = RENDER_DOCK_HEIGHT
        if dock.height() >= want or insp.height() + dock.height() < want + 160:
            return
        window.resizeDocks([insp, dock], [insp.height() + dock.height() - want, want],
                           QtCore.Qt.Orientation.Vertical)

    dock.visibilityChanged.connect(make_room)

    def icons_changed(semantic: str) -> None:
        """Accepted/rejected icons show in the map view at once (glyph mode ignores icon art)."""
        renderer = getattr(window.map, "_renderer", None)
        if renderer is None:
            return  # the renderer is created on first use and then reads the library itself
        window.map.set_icon_set(renderer.icons.reload(semantic, library))

    dock_widget.iconsChanged.connect(icons_changed)
