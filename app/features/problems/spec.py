"""The problems feature: the Problems panel (View ▸ Problems, Ctrl+Shift+M), shown when simulating is refused on
errors; the problems service."""
from __future__ import annotations

from app.features.problems.controller import ProblemsController
from app.shell.features import FeatureHost, FeatureSpec, register
from app.shell.panels import BOTTOM, PanelSpec
from app.shell.panels import register as register_panel
from app.shell.services import PROBLEMS
from widgets.problems.problems_panel import ProblemsPanel


def install(host: FeatureHost) -> ProblemsController:
    problems = ProblemsController(host)
    host.provide(PROBLEMS, problems)
    return problems


#: a tab next to the Timeline: the whole window's width for its messages; docked beside the Timeline instead, even
#: hidden, it made the window wider than a 1000-pixel screenshot asks for (Timeline's minimum + its own)
register_panel(PanelSpec("problems", "Problems", BOTTOM, lambda session, jobs: ProblemsPanel(), visible=False,
                         tabify_with="timeline"))
register(FeatureSpec("problems", install))
