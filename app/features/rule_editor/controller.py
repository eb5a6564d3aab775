"""The rule editor feature: rule editor, ontology editor and analysis panels, Rules menu, F7 Analyze, Apply and
"Load as scene".

Data flow (docs/architecture.md): the project's rule text and ontology live in a Qt-free
:class:`core.studio.rule_commands.RuleWorkspace`; every keystroke the editor announces becomes an
:class:`~core.studio.rule_commands.EditRuleText` on the session's command stack (typing bursts merge), so Edit ▸
Undo, the History panel and the unsaved-changes flag cover rule edits. Diagnostics run as jobs on the window's
:class:`app.shell.jobs.JobRunner` — at once after a change that follows a quiet spell, else once more ``DEBOUNCE_MS``
after the burst (one key per document: a newer run makes an older one stale and its result is dropped); their results become squiggles, the editor's list and the Problems
checker ``rules``. Analyze runs :func:`core.analysis.report.analyze_rules` as a cancellable job. Apply gives the
simulation the edited rules: from state 0 (a reset with the project's seed) or from the shown state (a new recording
whose state 0 is that state, captured with its random state). Saving the project writes the rule text as typed
(comments and disabled clauses kept) into the project's rule file, atomically.
"""
from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any, Callable

from PySide6 import QtCore, QtWidgets

from app.features.rule_editor.apply import RuleApply
from app.shell.features import FeatureController, FeatureHost
from app.shell.menus import MenuSpec
from core.analysis.diagnostics import Diagnostic, diagnose
from core.base.errors import LogiCityError
from core.logic.lang.registry import REGISTRY
from core.studio import problems as problem_registry
from core.studio.rule_commands import (
    AddConceptPredicate,
    EditRuleText,
    RemovePredicate,
    RuleWorkspace,
    SetPredicateGrounding,
    SetPredicateParams,
    concept_groundings,
)
from widgets.rule_editor.analysis_panel import AnalysisPanel
from widgets.rule_editor.editor import RuleEditor
from widgets.rule_editor.ontology_editor import OntologyEditor

__all__ = ["RuleEditorController", "DEBOUNCE_MS"]

#: Diagnostics run at once after the first change following a quiet spell; further changes within this many ms
#: of a run (or while one is running) are diagnosed together when the trailing timer fires (ms).
DEBOUNCE_MS = 60
#: Height (px) the rule editor dock takes when it is opened shorter (it shares the bottom area with the timeline).
RULE_EDITOR_HEIGHT = 300
#: Height (px) the analysis and ontology panels take when opened shorter (they share a column with the Inspector).
PANEL_HEIGHT = 420


class RuleEditorController(FeatureController):
    """See the module docstring."""

    diagnosed = QtCore.Signal(str)          # key: new diagnostics are shown for that document
    analysed = QtCore.Signal(object)        # RulesAnalysis

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.host = host
        self.shell = host.shell
        self.session = host.session
        self.jobs = host.jobs
        self.editor: RuleEditor = host.panels.widget("rule_editor")
        self.ontology_editor: OntologyEditor = host.panels.widget("ontology_editor")
        self.analysis: AnalysisPanel = host.panels.widget("rule_analysis")
        self.workspace: RuleWorkspace | None = None
        self.applying = RuleApply(host.shell, host.session, host.playback, host.drawing, lambda: self.workspace)
        self.diagnostics: dict[str, list[Diagnostic]] = {}
        self.edit_time: float | None = None        # perf_counter of the last edit (latency of its diagnostics)
        self.last_latency_ms: float | None = None
        self._analysis_job: Any = None
        self._in_flight = 0                         # diagnostics jobs not finished yet
        self._last_run = 0.0                        # perf_counter of the last diagnostics start
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.run_diagnostics)
        self._build_actions()
        self.ontology_editor.set_groundings(concept_groundings(), {n: REGISTRY[n].doc for n in concept_groundings()})
        self.ontology_editor.addRequested.connect(self.add_predicate)
        self.ontology_editor.removeRequested.connect(self.remove_predicate)
        self.ontology_editor.paramsEdited.connect(self.set_params)
        self.ontology_editor.groundingChosen.connect(self.set_grounding)
        self.ontology_editor.set_registry({a: [s.name for s in REGISTRY.values() if s.arity == a] for a in (1, 2)})
        self.analysis.analyzeRequested.connect(self.analyze)
        self.analysis.cancelRequested.connect(self.cancel_analysis)
        self.analysis.lineActivated.connect(self.goto_line)
        self.analysis.sceneRequested.connect(self.applying.load_scene)
        self.session.events.project.connect(lambda e: self.load_project())
        self.session.events.saved.connect(self._on_saved)
        problem_registry.register_checker("rules", self.problems, replace=True)
        host.panels.widget("problems").activated.connect(self._on_problem_activated)
        if self.session.project is not None:
            self.load_project()

    # ---- menu, toolbar ------------------------------------------------------------------------------------------
    def _build_actions(self) -> None:
        h = self.host
        self.analyze_action = h.action("&Analyze rules", self.analyze, "F7",
                                       "Conflicts, dead clauses, strata, deadlocks and coverage of the edited rules")
        self.apply_branch_action = h.action("Apply rules from the shown &step", self.applying.apply_from_shown, None,
                                            "Re-decide from the shown step with the edited rules (a branch: the "
                                            "steps before it are kept with their explanations)")
        self.apply_reset_action = h.action("Apply rules and re-simulate from step &0", self.applying.apply_from_start,
                                           None, "Restart the simulation from the seed with the edited rules")
        menu = h.menu("tools/rules", MenuSpec("tools/rules", "&Rules"), section="rules")
        menu.setObjectName("menu_rules")
        for name, text in (("rule_editor", "Rule &editor"), ("ontology_editor", "&Ontology editor"),
                           ("rule_analysis", "Analysis &results")):
            menu.addAction(h.action(text, lambda n=name: self.show_panel(n)))
        menu.addSeparator()
        for a in (self.analyze_action, self.apply_branch_action, self.apply_reset_action):
            menu.addAction(a)
        tb = self.editor.toolbar
        tb.addAction(self.analyze_action)
        apply_menu = QtWidgets.QMenu("Apply", self.editor)
        apply_menu.addAction(self.apply_branch_action)
        apply_menu.addAction(self.apply_reset_action)
        self.apply_button = QtWidgets.QToolButton(self.editor)
        self.apply_button.setText("Apply…")
        self.apply_button.setMenu(apply_menu)
        self.apply_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        tb.addWidget(self.apply_button)
        self.save_action = h.action("Save project (rules included)", self.save, None,
                                    "Write the project, with the rule file as typed, atomically")
        tb.addAction(self.save_action)

    def show_panel(self, name: str) -> None:
        self.host.panels.show(name, RULE_EDITOR_HEIGHT if name == "rule_editor" else PANEL_HEIGHT)

    # ---- documents ----------------------------------------------------------------------------------------------
    def load_project(self) -> None:
        project = self.session.project
        if project is None:
            return
        self.workspace = ws = RuleWorkspace.from_config(project.config)
        ws.events.text.connect(self._on_text)
        ws.events.ontology.connect(self._on_ontology)
        pages = self.editor.set_documents([(d.key, d.title, d.text) for d in ws.documents.values()])
        kinds = ws.predicate_kinds()
        words = self._completions()
        for page in pages:
            page.editor.highlighter.set_predicates(kinds)
            page.editor.set_completions(words)
            page.edited.connect(self._on_edited)
        self._show_ontology()
        self.diagnostics = {}
        self.run_diagnostics()

    def _completions(self) -> list[str]:
        """What completion offers: the ontology's predicate names (actions, concept and spatial predicates) and
        the keyword ``Not``."""
        assert self.workspace is not None
        return list(self.workspace.ontology.names) + ["Not"]

    def _on_edited(self, key: str, before: str, after: str, typing: bool) -> None:
        ws = self.workspace
        if ws is None:
            return
        self.edit_time = time.perf_counter()
        self.session.execute(EditRuleText(ws, key, before, after, typing=typing))

    def _on_text(self, event: Any) -> None:
        page = self.editor.page(event.key)
        if page is not None:
            page.set_text(event.value)
        if self.edit_time is None:
            self.edit_time = time.perf_counter()
        # leading edge: the first change after a quiet spell is diagnosed at once; changes while a run is under
        # way or within DEBOUNCE_MS of the last start wait for the trailing run (older results are dropped)
        if not self._in_flight and time.perf_counter() - self._last_run >= DEBOUNCE_MS / 1000:
            self.run_diagnostics()
        else:
            self._timer.start()

    def _on_ontology(self, event: Any) -> None:
        kinds = self.workspace.predicate_kinds() if self.workspace else {}
        words = self._completions()
        for page in self.editor.pages.values():
            page.editor.highlighter.set_predicates(kinds)
            page.editor.set_completions(words)
        self._show_ontology()
        self.edit_time = time.perf_counter()
        self.run_diagnostics()      # at once: an ontology edit is one deliberate change

    # ---- diagnostics ----------------------------------------------------------------------------------------------
    def run_diagnostics(self) -> None:
        """Diagnose every document off the GUI thread (a newer run drops an older one's result)."""
        self._timer.stop()
        ws = self.workspace
        if ws is None:
            return
        onto = ws.ontology
        self._last_run = time.perf_counter()
        for key, doc in ws.documents.items():
            text, name = doc.text, doc.title
            handle = self.jobs.start(lambda ctx, text=text, name=name: diagnose(text, onto, name),
                                     kind="rule-diagnostics", key=f"rule-diagnostics:{key}", report=False)
            self._in_flight += 1
            handle.succeeded.connect(lambda diags, key=key: self._on_diagnosed(key, diags))
            handle.finished.connect(self._on_diagnostics_finished)

    def _on_diagnostics_finished(self, outcome: Any) -> None:
        self._in_flight = max(0, self._in_flight - 1)

    def _on_diagnosed(self, key: str, diags: list[Diagnostic]) -> None:
        self.diagnostics[key] = list(diags)
        page = self.editor.page(key)
        if page is not None:
            page.set_diagnostics(diags)
        if self.edit_time is not None:
            self.last_latency_ms = (time.perf_counter() - self.edit_time) * 1000
            self.edit_time = None
        self._refresh_problems_panel()
        self.diagnosed.emit(key)

    def problems(self, session: Any) -> list[problem_registry.Problem]:
        """The Problems checker ``rules``: the latest diagnostics of every rule document. They do not stop the
        simulation (``blocks=False``): it runs the rules last applied, which always load; Apply refuses a text with
        errors."""
        out = []
        ws = self.workspace
        for key, diags in self.diagnostics.items():
            title = ws.documents[key].title if ws is not None and key in ws.documents else key
            for d in diags:
                out.append(problem_registry.Problem(d.severity, d.message, "rules", file=title, line=d.line,
                                                    column=d.col, code=d.code, blocks=False))
        return out

    def _refresh_problems_panel(self) -> None:
        """Ask the Problems panel to collect again."""
        self.host.problems.schedule()

    def _on_problem_activated(self, problem: problem_registry.Problem) -> None:
        """A rule problem clicked in the Problems panel: show its line in the rule editor."""
        if problem.source == "rules" and problem.line:
            self.goto_line(problem.line)

    def goto_line(self, line: int, key: str | None = None) -> None:
        self.show_panel("rule_editor")
        page = self.editor.page(key) or next(iter(self.editor.pages.values()), None)
        if page is not None:
            self.editor.tabs.setCurrentWidget(page)
            page.goto_line(int(line))

    # ---- ontology -------------------------------------------------------------------------------------------------
    def _show_ontology(self) -> None:
        if self.workspace is None:
            return
        tips = {}
        for p in self.workspace.ontology.predicates:
            spec = REGISTRY.get(p.grounding) if p.grounding else None
            if spec is not None:
                tips[p.name] = spec.doc + "".join(f"\n{k}: {s.doc} (default {s.default})" for k, s in spec.params.items())
        self.ontology_editor.set_ontology(self.workspace.ontology, tips)

    def _ontology_edit(self, make: Callable[[RuleWorkspace], Any]) -> bool:
        """Run the command ``make`` builds for the open workspace; a refused edit shows why in the editor."""
        ws = self.workspace
        if ws is None:
            return False
        try:
            cmd = make(ws)
        except LogiCityError as exc:
            self.ontology_editor.show_error(exc.message)
            self._show_ontology()
            return False
        self.session.execute(cmd)
        self.ontology_editor.show_info(cmd.text + " (undo with Ctrl+Z)")
        return True

    def add_predicate(self, name: str, grounding: str) -> bool:
        ok = self._ontology_edit(lambda ws: AddConceptPredicate(ws, name, grounding))
        if ok:
            self.ontology_editor.new_name.clear()
        return ok

    def remove_predicate(self, name: str) -> bool:
        return self._ontology_edit(lambda ws: RemovePredicate(ws, name))

    def set_grounding(self, name: str, grounding: str) -> bool:
        return self._ontology_edit(lambda ws: SetPredicateGrounding(ws, name, grounding or None))

    def set_params(self, name: str, text: str) -> bool:
        from core.io.yamlio import loads_yaml

        def make(ws: RuleWorkspace) -> SetPredicateParams:
            try:
                data = loads_yaml("{" + text + "}", f"parameters of {name}")
            except LogiCityError as exc:
                message = f"parameters of {name}: write them as 'key: value, key: value' ({exc.message})"
                raise type(exc)(message) from exc
            return SetPredicateParams(ws, name, {k: _plain(v) for k, v in data.items()})

        return self._ontology_edit(make)

    # ---- analysis -------------------------------------------------------------------------------------------------
    def analyze(self) -> bool:
        """F7: analyse the edited rules as a job; False when they do not load (the panel says why)."""
        from core.analysis.report import analyze_rules

        self.show_panel("rule_analysis")
        ws, project = self.workspace, self.session.project
        if ws is None or project is None:
            self.analysis.status.setText("Open a project first.")
            return False
        try:
            rules = ws.rule_file(strict=False)      # a negation cycle is a finding to show, not a refusal
        except (LogiCityError, KeyError) as exc:
            self.analysis.status.setText(f"The rules do not load; fix this first: {exc}")
            return False
        from dataclasses import replace

        config = replace(project.config, rules=rules, ontology=ws.ontology)   # the map, for scenes and deadlocks
        episode = self._episode_copy()
        k = int(self.analysis.deadlock_k.currentData())
        if self._analysis_job is not None:
            self._analysis_job.cancel()
        handle = self.jobs.start(lambda ctx: analyze_rules(rules, config=config, deadlock_agents=k, episode=episode,
                                                           status=ctx.status, check=ctx.check_cancelled),
                                 kind="rule-analysis", report=False)
        self._analysis_job = handle
        self.analysis.set_running(True, "Analysing…")
        handle.status.connect(lambda text: self.analysis.status.setText(f"Analysing: {text}…"))
        handle.succeeded.connect(self._on_analysed)
        handle.failed.connect(lambda err: self.analysis.status.setText(f"Analysis failed: {err.text}"))
        handle.finished.connect(lambda outcome, h=handle: self._on_analysis_finished(h, outcome))
        return True

    def _episode_copy(self) -> Any:
        """What coverage reads of the recording (its fired array and meta), copied for the job's thread."""
        h = self.session.history
        if h is None or h.num_steps == 0:
            return None
        fired = h.array("fired").copy()
        meta = dict(h.meta)
        return SimpleNamespace(meta=meta, array=lambda name: fired)

    def _on_analysed(self, result: Any) -> None:
        self.analysis.show_analysis(result)
        n = result.problems
        self.analysis.status.setText(f"Analysis done: {n} finding{'s' * (n != 1)}." +
                                     (" Click a finding to see its clause." if n else ""))
        self.analysed.emit(result)

    def _on_analysis_finished(self, handle: Any, outcome: Any) -> None:
        if handle is not self._analysis_job:
            return
        self._analysis_job = None
        self.analysis.set_running(False)
        if outcome.status == "cancelled":
            self.analysis.status.setText("Analysis cancelled.")

    def cancel_analysis(self) -> None:
        if self._analysis_job is not None:
            self._analysis_job.cancel()
            self.analysis.status.setText("Cancelling…")

    # ---- saving -------------------------------------------------------------------------------------------------
    def save(self) -> bool:
        return bool(self.host.projects.save())

    def _on_saved(self, event: Any) -> None:
        """After a project save: write the rule text as typed (and an edited ontology) over the parts the save
        wrote, each atomically; the texts written are what the editor shows."""
        from pathlib import Path

        from core.project.save import atomic_write_text

        ws, project = self.workspace, self.session.project
        if ws is None or project is None or project.root is None:
            return
        root = Path(project.root)
        try:
            for role, text in ws.texts().items():
                name = project.parts.get(role)
                if name:
                    atomic_write_text(root / name, text)
        except OSError as exc:
            self.shell.show_error("Rule file not saved", str(root), str(exc))
            self.session.mark_modified()      # the rule text on disk is not the editor's: still unsaved
            return
        if any(d.severity == "error" for diags in self.diagnostics.values() for d in diags):
            self.session.report("Saved the rule file with errors: the project opens again once they are fixed "
                                "(see the rule editor's problems).", "warning")

    def shutdown(self, wait_ms: int) -> bool:
        self._timer.stop()
        problem_registry.unregister_checker("rules")
        if self._analysis_job is not None:
            self._analysis_job.cancel()
        return True


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v
