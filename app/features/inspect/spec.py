"""The inspect feature: selecting agents (map clicks, View ▸ Deselect), the Inspector and Statistics panels, the
Agents and Compare panels with the agents' names and the witness ring on the map, and the gridlock cycle; the
selection service."""
from __future__ import annotations

from PySide6 import QtWidgets

from app.features.inspect.agents import AgentsController
from app.features.inspect.gridlock import GridlockController
from app.features.inspect.selection import SelectionController
from app.shell.features import FeatureController, FeatureHost, FeatureSpec, register
from app.shell.menus import ActionSpec
from app.shell.panels import RIGHT, PanelSpec
from app.shell.panels import register as register_panel
from app.shell.services import SELECTION
from widgets.inspect.agent_compare import AgentCompare
from widgets.inspect.agents_panel import AgentsPanel
from widgets.inspect.inspector import InspectorWidget
from widgets.stats import StatsWidget


class InspectFeature(FeatureController):
    """The inspect feature's controllers."""

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        s, panels, pb = host.session, host.panels, host.playback
        inspector, stats = panels.widget("inspector"), panels.widget("statistics")
        self.selection = SelectionController(host.shell, s, pb, host.map, inspector, stats,
                                             host.status_labels.show_hover, self)
        host.provide(SELECTION, self.selection)
        self.agents = AgentsController(s, host.map, panels, host.docks, host.drawing, self.selection.select, self)
        self.gridlock = GridlockController(host.shell, s, host.map, pb, host.shell.dialog_parent)
        host.add(ActionSpec("&Deselect", lambda: self.selection.select(None), "Escape", "Clear the selection",
                            menu="view", section="map"))
        host.add_to_menu("view", self.agents.action, self.gridlock.action, section="overlays")


def _inspector(session, jobs) -> QtWidgets.QWidget:
    return InspectorWidget()   # it scrolls its own content (no scroll area around it: one scroll bar, not two)


register_panel(PanelSpec("inspector", "Inspector", RIGHT, _inspector, width=430, height=520))
register_panel(PanelSpec("statistics", "Statistics", RIGHT, lambda session, jobs: StatsWidget(),
                         split_below="inspector", height=300))
register_panel(PanelSpec("agents", "Agents", RIGHT, lambda session, jobs: AgentsPanel(), tabify_with="statistics"))
register_panel(PanelSpec("compare", "Compare agents", RIGHT, lambda session, jobs: AgentCompare(), visible=False,
                         tabify_with="inspector"))
register(FeatureSpec("inspect", InspectFeature))
