"""Breakpoint editing: every change is an undoable command on the session (Edit ▸ Undo, History panel), shown in
the Breakpoints panel; the panel's Add…/Edit… open the condition builder (widgets/breakpoints/dialog.py); the
Breakpoints menu's agent entries act on the selected agent.

The dialog is opened non-modally (``open()``, window-modal) and kept as ``self.dialog`` until it closes, so the
event loop keeps running (playback, tests driving its widgets)."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from app.shell.features import FeatureController
from app.shell.panels import PanelHost
from app.shell.services import Shell
from core.base.codes import ACTION_NAMES
from core.sim.events import Breakpoint
from core.studio.commands import (
    AddBreakpoint,
    ClearBreakpoints,
    EditBreakpoint,
    RemoveBreakpoint,
    SetBreakpointEnabled,
    can_add,
    can_edit,
)
from core.studio.session import Session
from widgets.breakpoints.breakpoint_list import BreakpointList
from widgets.breakpoints.dialog import BreakpointDialog

#: the widest the left dock area is made to show the entries on one line (px), and at most this share of the window
MAX_DOCK_WIDTH = 380
MAX_DOCK_SHARE = 0.34


class BreakpointsController(FeatureController):
    def __init__(self, shell: Shell, session: Session, panels: PanelHost,
                 parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.session = session
        self.panels = panels
        panel = panels.widget("breakpoints")
        assert isinstance(panel, BreakpointList), panel   # what this feature's panel factory builds
        self.panel = panel
        panel.toggled.connect(self.set_enabled)
        panel.removeRequested.connect(self.remove)
        panel.clearRequested.connect(self.clear)
        panel.addRequested.connect(self.add_dialog)
        panel.editRequested.connect(self.edit_dialog)
        self.dialog: BreakpointDialog | None = None
        session.events.breakpoints.connect(self._show_rows)
        panel.installEventFilter(self)      # its tab raised: make the dock wide enough for the entries

    def eventFilter(self, obj: QtCore.QObject, event: QtCore.QEvent) -> bool:   # noqa: N802 (Qt)
        # the event type first: while a closed window is garbage-collected its attributes may already be gone
        if event.type() == QtCore.QEvent.Type.Show and obj is self.panel:
            QtCore.QTimer.singleShot(0, self._fit_dock)
        return False

    def add(self, bp: Breakpoint) -> None:
        if not can_add(self.session, bp):
            return
        self.session.execute(AddBreakpoint(bp))
        self.shell.status(f"Breakpoint added: {bp.describe()}")

    def edit(self, index: int, bp: Breakpoint) -> None:
        """Replace breakpoint ``index`` by ``bp`` (one undoable step); nothing happens when nothing changes, and
        a condition already listed elsewhere is refused with a status message."""
        if not 0 <= index < len(self.session.breakpoints) or self.session.breakpoints[index] == bp:
            return
        if not can_edit(self.session, index, bp):
            self.shell.status(f"Already a breakpoint: {bp.describe()}")
            return
        self.session.execute(EditBreakpoint(index, bp, self.session))
        self.shell.status(f"Breakpoint changed: {bp.describe()}")

    # ---- the condition builder --------------------------------------------------------------------------------
    def clause_labels(self) -> list[str]:
        """The clauses a breakpoint can name: the recording's (its meta), else the project's rule program."""
        s = self.session
        meta = s.history.meta if s.history is not None else {}
        if meta.get("clauses"):
            return [str(c.get("label", c.get("id"))) for c in meta["clauses"]]
        return [str(c.label) for c in s.project.config.program.clauses] if s.project is not None else []

    def _names(self) -> tuple[str, ...]:
        s = self.session
        if s.agent_names:
            return s.agent_names
        return tuple(s.project.config.agents.table().names) if s.project is not None else ()

    def _open(self, initial: Breakpoint | None, index: int | None) -> BreakpointDialog:
        if self.dialog is not None:
            self.dialog.close()
        dlg = BreakpointDialog(self._names(), self.clause_labels(), initial, self.shell.dialog_parent,
                               step=self.session.num_steps + 10)
        if initial is None and self.session.selected is not None and self.session.agent_names:
            dlg.subject.setCurrentIndex(dlg.subject.findData("agent"))     # start from the selected agent
            dlg.who.setCurrentText(self.session.agent_names[self.session.selected])
        self.dialog = dlg

        def done(result: int) -> None:
            bp = dlg.breakpoint() if result == QtWidgets.QDialog.DialogCode.Accepted else None
            if self.dialog is dlg:
                self.dialog = None
            dlg.deleteLater()
            if bp is None:
                return
            if index is None:
                if can_add(self.session, bp):
                    self.add(bp)
                else:
                    self.shell.status(f"Already a breakpoint: {bp.describe()}")
            else:
                self.edit(index, bp)

        dlg.finished.connect(done)
        dlg.open()
        return dlg

    def add_dialog(self) -> BreakpointDialog:
        """The panel's Add…: the condition builder for a new breakpoint."""
        return self._open(None, None)

    def edit_dialog(self, index: int) -> BreakpointDialog | None:
        """The panel's Edit… (or a double-click): the condition builder showing breakpoint ``index``."""
        bps = self.session.breakpoints
        if not 0 <= index < len(bps):
            return None
        return self._open(bps[index], index)

    def _show_rows(self, e) -> None:
        self.panel.set_rows((b.describe(), b.enabled, b.explain()) for b in e.value)
        self._fit_dock()

    def _fit_dock(self) -> None:
        """Widen the left dock area (up to MAX_DOCK_WIDTH, a third of the window) so entries fit on one line."""
        dock = self.panels.docks.get("breakpoints")
        if dock is None or not self.panel.isVisible():
            return
        frame = max(dock.width() - self.panel.width(), 0)     # the dock's own margins around the panel
        self.panels.widen("breakpoints", min(self.panel.entry_width() + frame, MAX_DOCK_WIDTH), MAX_DOCK_SHARE)

    def remove(self, index: int) -> None:
        if 0 <= index < len(self.session.breakpoints):
            self.session.execute(RemoveBreakpoint(index, self.session))

    def clear(self) -> None:
        if self.session.breakpoints:
            self.session.execute(ClearBreakpoints())

    def set_enabled(self, index: int, on: bool) -> None:
        bps = self.session.breakpoints
        if 0 <= index < len(bps) and bps[index].enabled != on:
            self.session.execute(SetBreakpointEnabled(index, on, self.session))

    def toggle_here(self) -> None:
        """Ctrl+B: a step breakpoint at the shown step, or remove the one there."""
        k = self.session.cursor
        existing = [i for i, b in enumerate(self.session.breakpoints) if b.kind == "step" and b.step == k]
        if existing:
            self.remove(existing[0])
        else:
            self.add(Breakpoint("step", step=k))

    def add_step_dialog(self) -> None:
        k, ok = QtWidgets.QInputDialog.getInt(self.shell.dialog_parent, "Pause at step",
                                              "Pause when this step is reached:", self.session.num_steps + 10,
                                              0, 10**9)
        if ok:
            self.add(Breakpoint("step", step=k))

    def add_for_selected(self, action: str | None) -> None:
        """Pause when the selected agent does ``action`` (None: reaches its goal)."""
        s = self.session
        if s.history is None or s.selected is None:
            self.shell.status("Select an agent first (click it on the map).")
            return
        name = s.agent_names[s.selected]
        self.add(Breakpoint("action", agent=name, action=action) if action else Breakpoint("goal", agent=name))

    def fill_agent_menu(self, menu: QtWidgets.QMenu) -> None:
        """The "Pause when selected agent does" entries, one per action."""
        for n in ACTION_NAMES:
            menu.addAction(n).triggered.connect(lambda _=False, n=n: self.add_for_selected(n))
