"""Breakpoint editing: every change is an undoable command on the session (Edit ▸ Undo, History panel), shown in
the Breakpoints panel; the Breakpoints menu's agent entries act on the selected agent."""
from __future__ import annotations

from typing import cast

from PySide6 import QtCore, QtWidgets

from core.codes import ACTION_NAMES
from core.sim.events import Breakpoint
from core.studio.commands import (AddBreakpoint, ClearBreakpoints, RemoveBreakpoint, SetBreakpointEnabled,
                                  can_add)
from core.studio.session import Session
from widgets.breakpoint_list import BreakpointList

from . import Shell


class BreakpointsController(QtCore.QObject):
    def __init__(self, shell: Shell, session: Session, panel: BreakpointList,
                 parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.session = session
        self.panel = panel
        panel.toggled.connect(self.set_enabled)
        panel.removeRequested.connect(self.remove)
        panel.clearRequested.connect(self.clear)
        session.events.breakpoints.connect(lambda e: panel.set_rows((b.describe(), b.enabled) for b in e.value))

    def add(self, bp: Breakpoint) -> None:
        if not can_add(self.session, bp):
            return
        self.session.execute(AddBreakpoint(bp))
        self.shell.status(f"Breakpoint added: {bp.describe()}")

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
        k, ok = QtWidgets.QInputDialog.getInt(cast(QtWidgets.QWidget, self.shell), "Pause at step",
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
