"""The command that lets a trained SPF model drive an agent of the studio's recording (no Qt).

Why forced actions: the model's choices for a branch are computed off the GUI thread on a rebuilt simulation
(:func:`core.tasks.spf.drive.drive_branch`); the studio's simulation worker then re-simulates them as ordinary forced
actions, so the recording, a saved project and its re-simulation all hold the same run, and the inspector shows
the agent's decisions as forced (``fired = -2``). One command adds all of them, so Edit ▸ Undo takes the whole
model drive back — until a step has been simulated with it, when undoing would make the recording claim a run
that did not happen (the same rule as :class:`core.studio.commands.ForceAction`).
"""
from __future__ import annotations

from typing import Any

from core.studio.stack import Command

__all__ = ["DriveWithModel"]


class DriveWithModel(Command):
    """Add the forced actions ``entries`` (``{"step", "agent", "action"}``, sticky, the last one ``None``) that make
    ``agent`` follow a model from step ``start``; any forced action of that agent at or after ``start`` is
    replaced."""

    def __init__(self, entries: list[dict], agent: int, start: int, text: str) -> None:
        self.entries = [dict(e) for e in entries]
        self.agent, self.start = int(agent), int(start)
        self.text = text
        self.before: tuple[dict, ...] = ()

    def do(self, target: Any) -> None:
        self.before = tuple(dict(e) for e in target.interventions)
        kept = [e for e in self.before if not (e["agent"] == self.agent and e["step"] >= self.start)]
        target.apply_interventions(kept + self.entries)

    def undo(self, target: Any) -> None:
        target.apply_interventions(self.before)

    def blocked(self, target: Any) -> str | None:
        if target.num_steps > self.start:
            return f"step {self.start} was simulated with the model's actions; branch at step {self.start} to change it"
        return None
