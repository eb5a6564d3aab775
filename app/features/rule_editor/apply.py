"""Applying edited rules to the simulation, and loading analysis scenes (part of the rule editor feature).

Why apart from :mod:`app.features.rule_editor.controller`: these are the only parts of the feature that change what the
simulation runs. Each asks first when recorded steps would be discarded, refuses on a read-only replay, gives the
project the edited configuration (:meth:`core.studio.rule_commands.RuleWorkspace.config_for`, which refuses a text
with errors) and rebuilds the inspector's program, so the inspector explains new steps with the new clauses:

* *from step 0*: a reset with the project's seed;
* *from the shown step*: the studio's branch of the same recording: steps 0..k are kept (decided and explained by
  the rules that made them), the steps after k are discarded, and the edited rules decide from step k on; the
  recording's meta lists which program decided which steps (core/studio/rule_branch.py,
  core/sim/rule_segments.py), the simulation re-simulates 0..k with those programs and continues;
* *Load as scene*: a new recording whose state 0 is a conflict witness or deadlock scene (core/sim/scene.py),
  simulated with the analysed rules and section.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from app.shell.services import Drawing, Playback, Shell
from core.base.errors import LogiCityError
from core.studio.rule_branch import branch_problem, branch_rules_in_place
from core.studio.rule_commands import RuleWorkspace
from core.studio.session import Session

__all__ = ["RuleApply"]


class RuleApply:
    """The rule editor's Apply and Load as scene; ``workspace()`` is the editor's current rule workspace."""

    def __init__(self, shell: Shell, session: Session, playback: Playback, drawing: Drawing,
                 workspace: Callable[[], RuleWorkspace | None]) -> None:
        self.shell = shell
        self.session = session
        self.playback = playback
        self.drawing = drawing
        self._workspace = workspace

    @property
    def workspace(self) -> RuleWorkspace | None:
        return self._workspace()

    def _edited_config(self, section: str | None = None) -> Any:
        ws, project = self.workspace, self.session.project
        if ws is None or project is None:
            self.shell.status("Open a project first.")
            return None
        try:
            config = ws.config_for(project.config)
        except (LogiCityError, KeyError) as exc:
            self.shell.show_error("Rules not applied", ws.documents["rules"].title,
                                   f"the rules do not load: {exc}", "Rule file")
            return None
        if section is not None and section != config.rule_section and section in config.rules.sections:
            config = replace(config, rule_section=section)
        return config

    def _set_config(self, config: Any) -> None:
        """The project now runs ``config``; the inspector explains with its program from now on."""
        project = self.session.project
        assert project is not None, "edited rules are applied to the open project (_edited_config checked it)"
        project.config = config
        self.drawing.set_config(config)

    def apply_from_start(self) -> bool:
        """Give the simulation the edited rules and restart it from the seed (asks first when steps are recorded)."""
        pb, s = self.playback, self.session
        if pb.refused_read_only("apply rules"):
            return False
        if s.num_steps > 0 and self.shell.ask(
                "apply_rules", "Apply the edited rules?",
                f"This re-simulates from step 0 with the edited rules, discarding the {s.num_steps} recorded steps.",
                [("apply", "Re-simulate"), ("cancel", "Cancel")], "apply") != "apply":
            return False
        config = self._edited_config()
        if config is None:
            return False
        self._set_config(config)
        pb.reset_simulation(confirm=False)
        self.shell.status("Applied the edited rules: re-simulating from step 0.")
        return True

    def apply_from_shown(self) -> bool:
        """Re-decide from the shown step with the edited rules: a branch of the same recording (steps 0..k kept,
        decided by the rules that made them; the edited rules decide from step k on; core/studio/rule_branch.py)."""
        pb, s = self.playback, self.session
        if pb.refused_read_only("apply rules") or s.history is None:
            return False
        if pb.syncing:
            self.shell.status("Still re-simulating the loaded episode; apply again in a moment.")
            return False
        why = branch_problem(s)
        if why is not None:
            self.shell.status(f"Cannot apply the rules from the shown step: {why}.", 15000)
            return False
        k, t = int(s.cursor), s.num_steps
        if k > pb.sim_steps:
            self.shell.status(f"Step {k} is not simulated yet in this session; apply from step {pb.sim_steps} or "
                               f"re-simulate from step 0.")
            return False
        later = f" The recorded steps {k + 1}–{t} are discarded." if k < t else ""
        if self.shell.ask("apply_rules_here", "Apply the edited rules from this step?",
                           f"Branch at step {k}: steps 0–{k} are kept with the decisions and explanations of the "
                           f"rules that made them, and the edited rules decide from step {k} on." + later,
                           [("apply", f"Branch at step {k}"), ("cancel", "Cancel")], "apply") != "apply":
            return False
        config = self._edited_config()
        if config is None:
            return False
        pb.pause()
        branch_rules_in_place(s, k, config)     # before the project's config changes (the old program is kept)
        self._set_config(config)
        pb.start(s.project)                     # re-simulates 0..k with the recorded programs, continues from k
        pb.set_cursor(k)
        self.shell.status(f"Branched at step {k}: the edited rules decide from step {k} on; steps 0–{k} keep "
                           f"their recorded explanations.")
        return True

    def load_scene(self, payload: Any, title: str) -> bool:
        """"Load as scene": the analysed rules and a new recording whose state 0 is the witness / deadlock scene."""
        section, scene = payload
        pb, s = self.playback, self.session
        if pb.refused_read_only("load a scene"):
            return False
        if s.num_steps > 0 and self.shell.ask(
                "load_scene", "Load the scene?",
                f"This starts a new recording in the {title} state, with the edited rules, discarding the "
                f"{s.num_steps} recorded steps.", [("load", "Load scene"), ("cancel", "Cancel")], "load") != "load":
            return False
        config = self._edited_config(section)
        if config is None:
            return False
        pb.pause()
        s.restart()
        self._set_config(config)
        assert s.project is not None   # _set_config checked it
        pb.reset_scene(config, scene, s.project.seed)
        self.shell.status(f"Loaded the {title} as a scene: step it with → or play it.")
        return True
