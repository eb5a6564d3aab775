"""The agent editor feature: the Agent editor dock (Tools ▸ Agent editor), its start/goal picking on the map, the
composition generator, agent-set import/export, and Apply (from step 0 or as a branch)."""
from __future__ import annotations

from app.features.agent_editor.controller import AgentEditorController
from app.shell.features import FeatureSpec, register
from app.shell.panels import RIGHT, PanelSpec
from app.shell.panels import register as register_panel
from widgets.agent_editor.editor import AgentEditor

register_panel(PanelSpec("agent_editor", "Agent editor", RIGHT, lambda session, jobs: AgentEditor(), visible=False,
                         tabify_with="inspector", width=460))
register(FeatureSpec("agent_editor", AgentEditorController))
