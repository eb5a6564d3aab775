"""The rule editor feature: the Rule editor, Ontology editor and Rule analysis panels, Tools ▸ Rules (F7 Analyze,
Apply, Load as scene)."""
from __future__ import annotations

from app.features.rule_editor.controller import RuleEditorController
from app.shell.features import FeatureSpec, register
from app.shell.panels import BOTTOM, RIGHT, PanelSpec
from app.shell.panels import register as register_panel
from widgets.rule_editor.analysis_panel import AnalysisPanel
from widgets.rule_editor.editor import RuleEditor
from widgets.rule_editor.ontology_editor import OntologyEditor

register_panel(PanelSpec("rule_editor", "Rule editor", BOTTOM, lambda session, jobs: RuleEditor(), visible=False,
                         tabify_with="timeline"))
register_panel(PanelSpec("ontology_editor", "Ontology editor", RIGHT, lambda session, jobs: OntologyEditor(),
                         visible=False, tabify_with="statistics", open_height=380))
register_panel(PanelSpec("rule_analysis", "Rule analysis", RIGHT, lambda session, jobs: AnalysisPanel(),
                         visible=False, tabify_with="statistics", open_height=420))
register(FeatureSpec("rule_editor", RuleEditorController))
