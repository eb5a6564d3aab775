"""Selecting agents (a click on the map — again on a cell several agents share: the next of them — or in the
inspector's table, the Agents panel, --select) and the hover line of the status bar; the inspector and the
statistics ask for steps through the playback controller."""
from __future__ import annotations

from typing import Any, Callable

from PySide6 import QtCore

from app.shell.features import FeatureController
from app.shell.services import Playback, Shell
from core.base.codes import ACTION_NAMES
from core.studio.session import Session
from core.view.agent_rows import agents_in_cell, pick_in_cell


class SelectionController(FeatureController):
    def __init__(self, shell: Shell, session: Session, playback: Playback, map_view: Any, inspector: Any,
                 stats: Any, show_hover: Callable[[str], None], parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.session = session
        self.show_hover = show_hover
        self.map = map_view
        map_view.agentClicked.connect(self._on_map_click)
        map_view.hovered.connect(self._on_hover)
        inspector.agentRequested.connect(self.select)
        inspector.stepRequested.connect(playback.set_cursor)
        stats.stepRequested.connect(playback.set_cursor)

    def select(self, agent: int | None) -> None:
        s = self.session
        if s.history is None:
            return
        s.select(agent)
        if s.selected is not None:
            self.shell.status(f"Selected {s.agent_names[s.selected]}")

    def _on_map_click(self, agent: int) -> None:
        """A click on the map: the agent hit, or, clicking again on a cell several agents share, the next of them
        (core.view.agent_rows.pick_in_cell), so every agent in a crowded cell can be selected."""
        sc = self.map.scene_data
        if agent >= 0 and sc is not None and agent < len(sc.positions):
            agent = pick_in_cell(sc.positions, agent, self.session.selected)
            row, col = sc.positions[agent]
            sharing = agents_in_cell(sc.positions, (int(row), int(col)))
            self.select(agent)
            if len(sharing) > 1:
                names = self.session.agent_names
                self.shell.status(f"Selected {names[agent]} ({sharing.index(agent) + 1} of {len(sharing)} in this "
                                  f"cell: click again for {names[sharing[(sharing.index(agent) + 1) % len(sharing)]]})")
            return
        self.select(None)

    def select_by_name(self, name: str) -> None:
        if name in self.session.agent_names:
            self.select(self.session.agent_names.index(name))

    def _on_hover(self, info: Any) -> None:
        if info is None:
            self.show_hover("")
            return
        text = f"cell ({info.row}, {info.col}) · {info.semantic}"
        s = self.session
        if info.agent is not None and s.history is not None:
            k = min(s.cursor, s.num_steps)
            act = ""
            if k < s.num_steps:
                act = f", {ACTION_NAMES[int(s.history.step_record(k).decided[info.agent])]}"
            text += f" · {info.agent_name}{act}"
        self.show_hover(text)
