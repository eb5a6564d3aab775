"""The icons feature: the Render panel (Stable Diffusion icon generation, its gallery and library); an accepted
icon shows in the map's icon art at once."""
from __future__ import annotations

from app.features.icons.controller import IconGenController
from app.shell.features import FeatureController, FeatureHost, FeatureSpec, register
from app.shell.panels import RIGHT, Panel, PanelSpec
from app.shell.panels import register as register_panel
from core.render.library import IconLibrary
from widgets.icons.render_dock import RenderDock

#: Height (px) the Render panel asks for when it is opened in a shorter spot: Generate, progress, the tab bar and a
#: row of result thumbnails with their details.
RENDER_DOCK_HEIGHT = 400


def _render(session, jobs) -> Panel:
    """The widget asks, :class:`IconGenController` runs the jobs."""
    dock = RenderDock(IconLibrary())
    dock.setObjectName("renderDock")
    return Panel(dock, IconGenController(dock, jobs))


def install(host: FeatureHost) -> FeatureController:
    render = host.panels.widget("render")
    render.iconsChanged.connect(lambda semantic: host.map.reload_icons(semantic, render.library))
    return FeatureController(host.shell.dialog_parent)


register_panel(PanelSpec("render", "Render (icon generation)", RIGHT, _render, visible=False,
                         tabify_with="statistics", scroll=True, open_height=RENDER_DOCK_HEIGHT))
register(FeatureSpec("icons", install))
