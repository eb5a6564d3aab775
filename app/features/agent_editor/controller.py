"""The agent editor: its dock, the start/goal picking tool on the map, the markers of the selected
agents' start and goal, import/export of agent-set YAML, the composition generator and Apply.

Why a controller: every request of the dock (widgets/agent_editor/editor.py) becomes an undoable command on the session
(core/studio/agent_sets.py), so Edit ▸ Undo, the History dock and "unsaved changes" work for agent edits as for any
other; the dock only shows what the session holds (it redraws on the ``agents`` event, after undo too).

Apply (core/studio/apply.py) is refused while Problems lists errors, and says why in the dock, the status line and
by showing the Problems panel. "From step 0" is the playback's reset with the edited config; "branch here" starts
a new recording from the shown state with the edited agents (the playback's rules: asks first, refused for a
read-only replay or while a loaded episode is still re-simulated). Each Apply is one undoable command
(core/studio/apply_command.py): Edit ▸ Undo shows the recording from before it again, Redo the applied one.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from app.shell.features import FeatureController, FeatureHost
from app.shell.menus import ActionSpec
from core.agents.edit import KINDS, NORMAL, agent_problems, cell_problem, concepts_for, parse_name, set_cells
from core.agents.spec import AgentSet
from core.base.codes import Kind
from core.base.errors import LogiCityError
from core.studio import agent_sets as A
from core.studio.apply import apply_status, branch_config, continue_problem, refusal
from core.studio.apply_command import IN_PLACE, NEW_RECORDING, RESTART, ApplyEdits
from core.studio.problems import Problem

_START_RGB = (46, 204, 113)
_GOAL_RGB = (231, 76, 60)


class PickTool:
    """A map tool: the next click sets the picked agent's start (then the tool asks for its goal) or goal; hovering
    previews the cell, green where the agent may stand, red where it may not (the status line says why)."""

    name = "agent-pick"
    cursor = QtCore.Qt.CursorShape.CrossCursor

    def __init__(self, ctl: "AgentEditorController", which: str, row: int) -> None:
        self.ctl, self.which, self.row = ctl, which, row
        self.host: Any = None
        self._said: tuple[int, int] | None = None   # the refused cell whose reason the status line shows

    def activated(self, host: Any) -> None:
        self.host = host
        self.ctl.status(f"Click the map for {self.ctl.row_name(self.row)}'s {self.which} (Esc: stop)")

    def deactivated(self) -> None:
        if self.host is not None:
            self.host.clear_preview()

    def hover(self, ev: Any) -> None:
        if self.host is None:
            return
        if ev is None or not ev.inside:
            self.host.clear_preview()
            return
        problem = self.ctl.cell_problem(self.row, ev.cell, self.which)
        if problem is not None and ev.cell != self._said:
            self._said = ev.cell
            self.ctl.status(f"{self.ctl.row_name(self.row)}: {problem}", 4000)
        rgb = (_START_RGB if self.which == "start" else _GOAL_RGB) if problem is None else (120, 120, 120)
        self.host.set_preview([(ev.row, ev.col, ev.row, ev.col)], rgba=(*rgb, 120), outline=(*rgb, 255))

    def press(self, ev: Any) -> None:
        pass

    def release(self, ev: Any) -> None:
        if ev.inside:
            self.ctl.place(self.row, self.which, ev.cell)


class AgentEditorController(FeatureController):
    """See the module docstring. ``tab`` is the agent set shown."""

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.host = host
        self.shell = host.shell
        self.playback = host.playback
        self.session = host.session
        self.map = host.map
        self.panel = host.panels.widget("agent_editor")
        self.tab = A.MAIN
        self._select_after: list[int] | None = None
        self.markers = pg.ScatterPlotItem(pxMode=False, size=1.6)
        self.markers.setZValue(18)
        self.markers.setVisible(False)   # empty: not painted with every map frame
        self.map.vb.addItem(self.markers)
        p = self.panel
        p.tabChanged.connect(self._on_tab)
        p.addRequested.connect(lambda kind: self.run(A.add(self.session, self.tab, kind)))
        p.duplicateRequested.connect(lambda rows: self.run(A.duplicate(self.session, self.tab, rows)) if rows else None)
        p.deleteRequested.connect(lambda rows: self.run(A.delete(self.session, self.tab, rows)) if rows else None)
        p.moveRequested.connect(lambda rows, d: self.run(A.move(self.session, self.tab, rows, d)) if rows else None)
        p.dropRequested.connect(lambda rows, before: self.run(A.drop(self.session, self.tab, rows, before))
                                if rows else None)
        p.nameEdited.connect(self.rename)
        p.priorityEdited.connect(self.set_priority)
        p.kindEdited.connect(lambda rows, k: self.run(A.edit(self.session, self.tab, rows, f"Make {k.label.lower()}:",
                                                             kind=k)) if rows else None)
        p.conceptEdited.connect(self.set_concept)
        p.pickRequested.connect(self.pick)
        p.randomRequested.connect(self.randomise)
        p.generateRequested.connect(self.generate_dialog)
        p.importRequested.connect(self.import_dialog)
        p.exportRequested.connect(self.export_dialog)
        p.activateRequested.connect(lambda tab: self.run(A.SetActiveAgentSet(tab)))
        p.applyRequested.connect(self.apply)
        p.selectionChanged.connect(lambda rows: self._draw_markers())
        ev = self.session.events
        ev.project.connect(lambda e: self._on_project())
        ev.agents.connect(lambda e: self.refresh())
        ev.history.connect(lambda e: self._show_provenance())
        self.show_action = host.add(ActionSpec("Agent editor", self.show_panel, "Ctrl+Shift+A",
                                               "Show the agent editor (agents, concepts, starts and goals, Apply)",
                                               menu="tools", section="editors"))
        self.apply_action = host.add(ActionSpec("Apply edits from step 0", lambda: self.apply("restart"),
                                                "Ctrl+Return", "Re-simulate from step 0 with the edited city and "
                                                "agents", menu="tools", section="editors"))
        self.branch_action = host.add(ActionSpec("Apply edits: branch at the shown step", lambda: self.apply("branch"),
                                                 "Ctrl+Shift+Return", "Start a new recording from the shown step with "
                                                 "the edited agents", menu="tools", section="editors"))
        host.panels.widget("problems").activated.connect(self.show_problem)
        if self.session.project is not None:
            self._on_project()

    def show_problem(self, problem: Problem) -> None:
        """A Problems entry about an agent: show its tab and select its row (the map part is the panel's)."""
        if problem.source != "agents" or not problem.agent or self.session.project is None:
            return
        names = A.tabs(self.session)
        tab = next((t for t in names if problem.message.startswith(f"{t}: ")), names[0])
        rows = [i for i, a in enumerate(A.agent_set(self.session, tab)) if a.name == problem.agent]
        if rows:
            self.tab = tab
            self.refresh(select=rows[:1])

    # ---- helpers ----------------------------------------------------------------------------------------------------
    def status(self, text: str, ms: int = 8000) -> None:
        self.shell.status(text, ms)

    def agents(self) -> AgentSet:
        return A.agent_set(self.session, self.tab)

    def row_name(self, row: int) -> str:
        a = self.agents().agents
        return a[row].name if 0 <= row < len(a) else f"row {row + 1}"

    def cell_problem(self, row: int, cell: tuple[int, int], which: str) -> str | None:
        a = self.agents().agents[row]
        return cell_problem(self.session.project.config.city, a.kind, cell, which)

    def run(self, command: Any) -> None:
        """Do an edit through the undo stack; the dock selects the rows the command names."""
        if self.session.project is None:
            return
        self._select_after = getattr(command, "rows", None)
        try:
            self.session.execute(command)
        except (ValueError, IndexError, LogiCityError) as exc:
            self.status(f"Agent edit refused: {exc}")
            self.refresh()
        finally:
            self._select_after = None

    # ---- showing ----------------------------------------------------------------------------------------------------
    def show_panel(self) -> None:
        self.host.panels.show("agent_editor")
        self.refresh()

    def _on_project(self) -> None:
        self.tab = A.active_tab(self.session) if self.session.project is not None else A.MAIN
        for note in getattr(self.session.project, "notes", None) or ():
            self.playback.when_ready(partial(self.status, note, 20000))
        self.refresh()

    def _on_tab(self, tab: str) -> None:
        self.tab = tab
        self.refresh(select=[])

    def refresh(self, select: list[int] | None = None) -> None:
        s = self.session
        self.panel.setEnabled(s.project is not None)
        if s.project is None:
            return
        names = A.tabs(s)
        if self.tab not in names:
            self.tab = A.active_tab(s)
        cfg = s.project.config
        aset = self.agents()
        valid = {k: concepts_for(k, cfg.ontology) for k in KINDS}
        shown = [c for k in KINDS for c in valid[k]]
        shown += [c for a in aset for c in a.concepts if c not in shown]   # invalid ones stay visible (errors)
        issues: dict[int, list[tuple[str, str]]] = {}
        ego = ((cfg.extra or {}).get("spf") or {}).get("ego")
        for i in agent_problems(aset, cfg.city, cfg.ontology, ego=ego):
            if i.index is not None:
                issues.setdefault(i.index, []).append((i.severity, i.message))
        self.panel.set_tabs(names, self.tab, A.active_tab(s))
        sel = select if select is not None else self._select_after
        self.panel.show_set(aset, shown, valid, issues, select=sel)
        self._show_provenance()
        self._draw_markers()

    def _show_provenance(self) -> None:
        st = apply_status(self.session)
        if st is None:
            return
        self.panel.set_provenance(st.text() if self.session.history is not None else
                                  "No recording yet: Apply simulates the edits.", st.pending)
        if refusal(self.session) is None:
            self.panel.set_refusal(None)

    def _draw_markers(self) -> None:
        """Start (green square) and goal (red cross) of the selected agents; an agent without one: nothing."""
        if self.session.project is None:
            self.markers.setData([])
            self.markers.setVisible(False)
            return
        agents = self.agents().agents
        spots = []
        for r in self.panel.selected_rows():
            if not 0 <= r < len(agents):
                continue
            a = agents[r]
            for cell, symbol, rgb in ((a.start, "s", _START_RGB), (a.goal, "x", _GOAL_RGB)):
                if cell is not None:
                    spots.append({"pos": (cell[1] + 0.5, cell[0] + 0.5), "symbol": symbol, "size": 7.0,
                                  "brush": pg.mkBrush(*rgb, 220), "pen": pg.mkPen(255, 255, 255, width=2),
                                  "data": (a.name, "start" if symbol == "s" else "goal")})
        self.markers.setData(spots)
        self.markers.setVisible(bool(spots))

    def marker_cells(self) -> list[tuple[str, str, tuple[int, int]]]:
        """(agent, "start"/"goal", cell) of every marker on the map (tests, screenshots)."""
        out = []
        for spot in self.markers.points():
            pos = spot.pos()
            name, which = spot.data()
            out.append((name, which, (int(pos.y() - 0.5), int(pos.x() - 0.5))))
        return out

    # ---- edits ----------------------------------------------------------------------------------------------------
    def rename(self, row: int, text: str) -> None:
        try:
            kind, agent_id = parse_name(text)
        except ValueError as exc:
            self.status(str(exc))
            self.refresh()
            return
        old = self.agents().agents[row]
        self.run(A.edit(self.session, self.tab, [row], f"Rename {old.name} to {text.strip()}:",
                        kind=kind if kind is not old.kind else None, agent_id=agent_id))

    def set_priority(self, rows: list[int], value: int) -> None:
        """Priority of the selected cars (pedestrians always have 0: they are left alone in a mixed selection)."""
        agents = self.agents().agents
        cars = [r for r in rows if agents[r].kind is Kind.CAR]
        if not cars:
            self.status("Pedestrians always have priority 0 (the highest).")
            self.refresh()
            return
        self.run(A.edit(self.session, self.tab, cars, "Set priority of", priority=value))

    def set_concept(self, rows: list[int], concept: str, on: bool) -> None:
        """Tick/untick ``concept`` on the rows whose type may carry it (a mixed selection: the others are left alone
        and the status line says so; unticking works on every row, so an invalid concept can always be removed)."""
        if on:
            agents = self.agents().agents
            cfg = self.session.project.config
            ok = [r for r in rows if concept in concepts_for(agents[r].kind, cfg.ontology)]
            if len(ok) < len(rows):
                self.status(f"{concept!r} was not ticked on {len(rows) - len(ok)} agent(s) of another type")
            if not ok:
                self.refresh()
                return
            rows = ok
        self.run(A.edit(self.session, self.tab, rows, f"{'Tick' if on else 'Untick'} {concept} of",
                        **({"add_concepts": [concept]} if on else {"remove_concepts": [concept]})))

    def place(self, row: int, which: str, cell: tuple[int, int] | None) -> None:
        """Set (or clear with None) ``row``'s start or goal; after a start the tool goes on to pick the goal."""
        self.run(A.place(self.session, self.tab, row, **{which: cell}))
        tools = self.map.tools
        if cell is not None and which == "start" and isinstance(tools.tool, PickTool):
            tools.set_tool(PickTool(self, "goal", row))
        elif isinstance(tools.tool, PickTool):
            tools.set_tool(None)
            self.status(f"{self.row_name(row)}: {which} set to {cell}")

    def pick(self, which: str) -> None:
        rows = self.panel.selected_rows()
        if len(rows) != 1:
            self.status("Select one agent to place its start or goal on the map.")
            return
        self.map.tools.set_tool(PickTool(self, which, rows[0]))

    def randomise(self, rows: list[int], which: str) -> None:
        keys = ("start", "goal") if which == "both" else (which,)

        def change(s: AgentSet) -> AgentSet:
            for r in rows:
                s = set_cells(s, r, **{k: None for k in keys})
            return s

        self.run(A.AgentSetEdit(self.tab, change, f"Random {' and '.join(keys)} for {len(rows)} agent(s)", rows))

    # ---- composition, files -------------------------------------------------------------------------------------
    def generate(self, counts: dict[Kind, dict[str, int]], seed: int) -> None:
        self.run(A.generate(self.session, self.tab, counts, seed))

    def generate_dialog(self) -> QtWidgets.QDialog | None:
        from widgets.agent_editor.editor import GenerateDialog

        if self.session.project is None:
            return None
        cfg = self.session.project.config
        current: dict[Kind, dict[str, int]] = {}
        for a in self.agents():
            key = a.concepts[0] if a.concepts else NORMAL
            current.setdefault(a.kind, {})[key] = current.get(a.kind, {}).get(key, 0) + 1
        dlg = GenerateDialog({k: concepts_for(k, cfg.ontology) for k in KINDS}, current, int(self.session.project.seed),
                             self.panel)
        dlg.accepted.connect(lambda: self.generate(dlg.counts(), dlg.seed.value()))
        dlg.setModal(True)
        dlg.show()
        return dlg

    def import_file(self, path: str | Path) -> bool:
        """Replace the shown set by the agent-set file ``path``: our format, or the reference simulator's."""
        from core.agents.io import load_agent_set
        from core.agents.reference import import_reference_agents
        from core.io.yamlio import load_yaml

        try:
            data = load_yaml(Path(path))
            reference = isinstance(data, dict) and any(isinstance(a, dict) and "class" in a
                                                       for a in (data.get("agents") or []))
            new = import_reference_agents(path) if reference else load_agent_set(path)
        except LogiCityError as exc:
            self.shell.show_error("Cannot import agents", exc.location() or str(path), exc.message)
            return False
        self.run(A.replace_set(self.session, self.tab, new, f"Import {Path(path).name}"))
        self.status(f"Imported {len(new)} agents from {path} into {self.tab}")
        return True

    def export_file(self, path: str | Path) -> bool:
        from core.agents.io import save_agent_set

        try:
            save_agent_set(self.agents(), path)
        except OSError as exc:
            self.shell.show_error("Cannot export agents", str(path), exc.strerror or str(exc))
            return False
        self.status(f"Exported {len(self.agents())} agents ({self.tab}) to {path}")
        return True

    def import_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.panel, "Import agent set", "",
                                                        "Agent sets (*.yaml *.yml);;All files (*)")
        if path:
            self.import_file(path)

    def export_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.panel, "Export agent set", f"{self.tab}.yaml",
                                                        "Agent sets (*.yaml *.yml)")
        if path:
            self.export_file(path)

    # ---- apply ----------------------------------------------------------------------------------------------------
    def apply(self, mode: str) -> bool:
        """Simulate the edits: ``restart`` from step 0, or ``branch`` from the shown step. False when refused or
        cancelled (the reason is shown)."""
        s = self.session
        playback = self.playback
        why = refusal(s)
        if why is not None:
            self.panel.set_refusal(why)
            self.status(f"Cannot apply the edits: {why}", 15000)
            playback.refused.emit(why)          # shows the Problems panel
            return False
        self.panel.set_refusal(None)
        if mode == "restart" or s.history is None:
            if s.history is None:           # nothing recorded yet to go back to: a plain reset
                return playback.reset_simulation(confirm=True)
            if s.num_steps > 0 and self.shell.ask(
                    "reset", "Reset the simulation?",
                    f"This discards the {s.num_steps} recorded steps and re-simulates from step 0 with the edited "
                    f"city and agents (Edit ▸ Undo shows them again).", [("reset", "Reset"), ("cancel", "Cancel")],
                    "reset") != "reset":
                return False
            return self._execute_apply(ApplyEdits(RESTART, playback.launch))
        if playback.syncing:
            self.status("Still re-simulating the loaded episode; apply again in a moment.")
            return False
        k, t = s.cursor, s.num_steps
        if playback.sim_steps < t and k > playback.sim_steps:   # the studio's rule: only where it can continue
            k = playback.sim_steps
        why_new = continue_problem(s)
        if why_new is None:     # only concepts/priorities changed: the same recording goes on from step k
            later = f" Steps {k + 1}–{t} are discarded." if k < t else ""
            ans = self.shell.ask("apply_branch", "Branch with the edits?",
                                  f"Branch at step {k}: steps 0–{k} are kept and the edited concepts and "
                                  f"priorities hold from step {k} on." + later,
                                  [("branch", f"Branch at step {k}"), ("cancel", "Cancel")], "branch")
            if ans != "branch" or not self._execute_apply(ApplyEdits(IN_PLACE, playback.launch, k)):
                return False
            self._show_provenance()
            self.status(f"Branched at step {k}: the edited agents hold from step {k} on")
            return True
        later = (f" The recorded steps (0–{t}) are kept as a further episode of the project when you save it "
                 f"(File ▸ Episode info lists it)." if t else "")
        ans = self.shell.ask("apply_branch", "Branch with the edits?",
                              f"Start a new recording from step {k} with the edited agents ({why_new}): recorded "
                              f"agents continue from where they are at step {k} (it becomes step 0), new ones "
                              f"start at their start cell." + later,
                              [("branch", f"Branch at step {k}"), ("cancel", "Cancel")], "branch")
        if ans != "branch":
            return False
        try:
            cfg = branch_config(s.project.config, s.history, k, int(s.project.seed))
        except LogiCityError as exc:
            self.shell.show_error("Cannot branch with the edits", "(agent editor)", exc.message, label="Where")
            return False
        if not self._execute_apply(ApplyEdits(NEW_RECORDING, playback.launch, k, cfg)):
            return False
        self.status(f"Branching at step {k} with the edited agents…")
        return True

    def _execute_apply(self, command: ApplyEdits) -> bool:
        """Apply as an undoable command (core/studio/apply_command.py); False when it failed (reported)."""
        try:
            self.session.execute(command)
        except (ValueError, LogiCityError) as exc:
            self.status(f"Cannot apply the edits: {exc}", 15000)
            return False
        return True

    def shutdown(self, wait_ms: int) -> bool:
        if isinstance(self.map.tools.tool, PickTool):
            self.map.tools.set_tool(None)
        return True
