"""Apply as an undoable command (no Qt): Edit ▸ Undo after an Apply shows the recording from before it again.

Why a command: Apply replaces what the studio shows — the recording, the shown step, the selection, the forced
actions (a restart drops them) and the recordings kept for the next save — so it is a user edit like any other
and belongs on the session's command stack (Edit ▸ Undo/Redo, the History dock, "unsaved changes").

What it changes: not the city or the agents (their edits are commands of their own, below this one on the stack),
only the recording shown. :class:`ApplyEdits` takes :meth:`Session.recording` before it changes anything and
undo puts exactly that back (the recording object itself; a branch in place cuts its recording, so it keeps a
copy). The recording it leaves is kept in turn, so redo shows the applied recording again as it was at the undo
(steps simulated since the Apply included) instead of simulating it anew; undo after that shows the earlier one
as it was at the redo. Only when an Apply is undone before its new recording arrived does redo start it again.

The simulation behind the studio: the first ``do`` calls ``launch(config, previous)`` — the studio's playback
keeps the simulation that made ``previous`` (the recording being left) and starts a new one from ``config``
(None: re-simulates the recording branched in place to continue it from its end), answering with
:meth:`Session.set_history`. An undo or redo emits the session's ``restored`` event; the playback then continues
the simulation it kept for the recording shown again, or re-simulates it when it no longer has it
(app/features/playback/controller.py). A script or test passes a ``launch`` that simulates directly.
"""
from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Callable

from core.sim.frames import copy_episode
from core.studio.apply import BRANCH_KEY, branch_in_place
from core.studio.session import Recording, Session
from core.studio.stack import Command

__all__ = ["ApplyEdits", "RESTART", "IN_PLACE", "NEW_RECORDING", "Launch"]

RESTART = "restart"             # re-simulate from step 0 with the edits
IN_PLACE = "in_place"           # branch at step k, same recording (only concepts / priorities changed)
NEW_RECORDING = "new"           # branch at step k as a new recording whose step 0 is the state shown

#: ``launch(config, previous)``: start simulating ``config`` (None: continue the shown recording, branched in
#: place); ``previous`` is the recording being replaced (its simulation may be kept for an undo)
Launch = Callable[[Any, "Recording | None"], None]


class ApplyEdits(Command):
    """Apply the edited city and agents (see the module docstring). ``mode``: :data:`RESTART`, :data:`IN_PLACE`
    (branch at ``step``, check :func:`core.studio.apply.continue_problem` first) or :data:`NEW_RECORDING` (branch
    at ``step`` with ``config`` from :func:`core.studio.apply.branch_config`)."""

    def __init__(self, mode: str, launch: Launch, step: int = 0, config: Any = None) -> None:
        if mode not in (RESTART, IN_PLACE, NEW_RECORDING):
            raise ValueError(f"unknown Apply mode {mode!r}")
        if mode == NEW_RECORDING and config is None:
            raise ValueError("a new recording from a branch needs its config (branch_config)")
        self.mode, self.launch, self.step, self.config = mode, launch, int(step), config
        self.text = {RESTART: "Apply edits from step 0",
                     IN_PLACE: f"Apply edits: branch at step {step}",
                     NEW_RECORDING: f"Apply edits: new recording from step {step}"}[mode]
        self.before: Recording | None = None   # what undo shows again
        self.after: Recording | None = None    # what redo shows again (None: start it anew)
        self.launches = 0                      # simulations started (a redo that restores starts none)

    def do(self, target: Session) -> None:
        if self.after is not None:             # redo: show the applied recording again, as it was at the undo
            self.before = target.recording()
            after, self.after = self.after, None
            target.restore_recording(after)
            return
        before = target.recording()
        if self.mode == IN_PLACE and before.history is not None:   # branch_in_place cuts the object itself
            before = replace(before, history=copy_episode(before.history, copy.deepcopy(before.history.meta)))
        self.before = before
        self.launches += 1
        if self.mode == IN_PLACE:
            branch_in_place(target, self.step)
            target.set_cursor(self.step)
            self.launch(None, before)
            return
        if self.mode == RESTART:
            assert target.project is not None   # refusal() keeps Apply from running without a project
            config = target.project.config
        else:
            config = self.config
        if self.mode == NEW_RECORDING:
            kept = target.keep_recording(f"before branch at step {self.step}") if target.num_steps else None
            config.extra[BRANCH_KEY].pop("episode", None)
            if kept is not None:
                config.extra[BRANCH_KEY]["episode"] = kept   # the new recording names the one it branched from
        target.restart(None)
        self.launch(config, before)

    def undo(self, target: Session) -> None:
        assert self.before is not None
        now = target.recording()
        arrived = self.mode == IN_PLACE or now.history is not self.before.history
        self.after = now if arrived else None
        target.restore_recording(self.before)
