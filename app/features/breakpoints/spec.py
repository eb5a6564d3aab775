"""The breakpoints feature: the Breakpoints dock and the Breakpoints menu (a step, the selected agent's action or
goal, any agent's goal, clear), and the breakpoints service."""
from __future__ import annotations

from app.features.breakpoints.controller import BreakpointsController
from app.shell.features import FeatureHost, FeatureSpec, register
from app.shell.menus import ActionSpec, MenuSpec
from app.shell.panels import LEFT, PanelSpec
from app.shell.panels import register as register_panel
from app.shell.services import BREAKPOINTS
from core.sim.events import Breakpoint
from widgets.breakpoints.breakpoint_list import BreakpointList


def install(host: FeatureHost) -> BreakpointsController:
    bp = BreakpointsController(host.shell, host.session, host.panels, host.shell.dialog_parent)
    host.provide(BREAKPOINTS, bp)
    add = host.add
    add(ActionSpec("Toggle breakpoint at this step", bp.toggle_here, "Ctrl+B", "Pause when the shown step is reached",
                   menu="breakpoints", section="here"))
    add(ActionSpec("Pause at step…", bp.add_step_dialog, None, "Add a breakpoint at a step", menu="breakpoints",
                   section="here"))
    bp.fill_agent_menu(host.menu("breakpoints/agent", MenuSpec("breakpoints/agent", "Pause when selected agent does"),
                                 section="agent"))
    add(ActionSpec("Pause when selected agent reaches its goal", lambda: bp.add_for_selected(None),
                   menu="breakpoints", section="agent"))
    add(ActionSpec("Pause when any agent reaches its goal", lambda: bp.add(Breakpoint("goal")), menu="breakpoints",
                   section="any"))
    add(ActionSpec("Clear breakpoints", bp.clear, None, "Remove every breakpoint", menu="breakpoints",
                   section="clear"))
    return bp


register_panel(PanelSpec("breakpoints", "Breakpoints", LEFT, lambda session, jobs: BreakpointList(),
                         tabify_with="legend"))
register(FeatureSpec("breakpoints", install))
