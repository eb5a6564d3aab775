"""The view feature: View ▸ fit, zoom, follow, colour-by, planned paths and the overlays (goals, field of view,
intersections, icon art), the toolbar's colour box, and the Legend panel."""
from __future__ import annotations

from PySide6 import QtWidgets

from app.features.view.controller import ViewController
from app.shell.features import FeatureHost, FeatureSpec, register
from app.shell.menus import ActionSpec
from app.shell.panels import LEFT, PanelSpec
from app.shell.panels import register as register_panel
from widgets.legend import LegendWidget
from widgets.map_view import glyph_symbols

SP = QtWidgets.QStyle.StandardPixmap


def _legend_panel(session, jobs) -> QtWidgets.QWidget:
    w = LegendWidget()
    w.set_glyphs(glyph_symbols())
    return w


def install(host: FeatureHost) -> ViewController:
    m = host.map
    v = ViewController(host.shell, host.session, m, host.panels.widget("legend"), host.shell.dialog_parent)
    add = host.add
    fit = add(ActionSpec("&Fit city", v.fit, "F", "Show the whole city", icon=SP.SP_TitleBarMaxButton, menu="view",
                         section="map"))
    add(ActionSpec("Zoom &in", lambda: m.zoom(0.8), ("+", "="), "Zoom in", menu="view", section="map"))
    add(ActionSpec("Zoom &out", lambda: m.zoom(1.25), "-", "Zoom out", menu="view", section="map"))
    follow = add(ActionSpec("F&ollow selected agent", None, "L", "Keep the selected agent centred", checkable=True,
                            menu="view", section="map"))
    v.bind("follow", follow)
    host.add_to_menu("view", v.colour_menu.menuAction(), v.path_menu.menuAction(), section="colour")
    for option, text, key, tip in (
            ("goals", "Show &goals", "G", "Show every agent's goal"),
            ("fov", "Show field of &view", "V", "Show the selected agent's field of view"),
            ("intersections", "Show &intersections", "I", "Overlay the intersection lines and boxes"),
            ("icons", "Draw agents as icon &art", "A", "Switch between glyphs and the renderer's icon art")):
        v.bind(option, add(ActionSpec(text, None, key, tip, checkable=True, menu="view", section="overlays")))
    bar = host.toolbar("playback")
    bar.addSeparator()
    bar.addWidget(QtWidgets.QLabel(" Colour by "))
    bar.addWidget(v.colour_combo)
    bar.addSeparator()
    bar.addActions([fit, follow])
    return v


register_panel(PanelSpec("legend", "Legend", LEFT, _legend_panel, width=210))
register(FeatureSpec("view", install))
