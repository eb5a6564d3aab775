"""The simulations behind the recordings an Apply replaced: what undo and redo of Apply show again can be continued
at once (a part of the playback controller, app/features/playback/controller.py).

Why: the Apply command (core/studio/apply_command.py) puts the recording from before an Apply back on undo, and
the applied one on redo, without simulating anything; but the studio must be able to continue (step, play) the
recording it shows, and the worker's simulation made the other one. So when Apply starts a new simulation the
worker keeps the old one (``SimWorker.stash``, app/shell/worker.py), and when undo/redo shows a recording again the
worker continues the simulation it kept for it (``unstash``) from that recording's newest step. A recording whose
simulation is no longer kept (the worker keeps the last few) is re-simulated in the background, as when a project
is opened, with the city and agents that made it.
"""
from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any, Protocol

from app.shell.worker import SimController
from core.base.errors import LogiCityError
from core.sim.provenance import provenance
from core.sim.replay import config_from_episode
from core.studio.apply import start_config
from core.studio.session import Session

__all__ = ["AppliedRecordings"]


class _Playback(Protocol):
    """What the applied recordings read and set of the playback controller."""

    session: Session
    sim: SimController
    syncing: bool
    sim_steps: int

    def start(self, project: Any) -> None: ...

    def pause(self) -> None: ...

    def notify_changed(self) -> None: ...

    def schedule_redraw(self) -> None: ...


class AppliedRecordings:
    """The playback controller's record of the simulations the worker keeps for recordings an Apply replaced."""

    def __init__(self, playback: _Playback) -> None:
        self.pb = playback
        self.session = playback.session
        self.sim = playback.sim
        self.session.events.restored.connect(self._on_restored)
        self.session.stack.events.cleared.connect(lambda e: self._forget())
        #: id(recording) -> (recording, key of the worker's simulation that made it)
        self._stashed: dict[int, tuple[Any, int]] = {}
        self._stash_keys = itertools.count(1)
        self.restoring = False      # the worker continues (or re-simulates) a recording undo/redo showed again

    def _forget(self) -> None:
        """No Apply can be undone any more (another project): the kept simulations go."""
        self._stashed.clear()
        self.sim.forget_stash()

    def launch(self, config: Any, previous: Any) -> None:
        """An Apply: keep the simulation of the ``previous`` recording for an undo, then simulate ``config`` from
        its start (a reset with the project's seed) or, ``config`` None, the recording branched in place."""
        self.pb.pause()
        if previous is not None:
            self._keep(previous.history, previous.interventions)
        if config is None:
            self.pb.start(self.session.project)
            self.pb.schedule_redraw()
        else:
            assert self.session.project is not None, "an Apply edits the open project"
            self.sim.reset(config, self.session.project.seed)

    def _keep(self, history: Any, interventions: Any) -> None:
        """The worker keeps its simulation, which made ``history`` (up to its newest step at least) with the forced
        actions ``interventions``."""
        if history is None or self.pb.syncing or self.session.read_only is not None or self.pb.sim_steps < \
                history.num_steps:
            return
        key = next(self._stash_keys)
        self._stashed[id(history)] = (history, key)
        while len(self._stashed) > 8:       # the worker keeps fewer; the oldest are re-simulated
            del self._stashed[next(iter(self._stashed))]
        self.sim.stash(key, interventions)

    def _on_restored(self, e: Any) -> None:
        """Undo/redo of an Apply showed another recording: continue the simulation kept for it (no re-simulation),
        else re-simulate it in the background as when it is opened."""
        self.pb.pause()
        if e.left is not None and e.left is not e.value:
            self._keep(e.left, e.left.meta.get("interventions") or ())   # the meta mirrors them
        kept = self._stashed.pop(id(e.value), None) if e.value is not None else None
        if kept is None or kept[0] is not e.value:
            self.resync()
        else:
            self.pb.syncing = self.restoring = True
            self.pb.sim_steps = 0
            self.sim.unstash(kept[1], self.session.num_steps)
            self.sim.set_interventions(self.session.interventions)
            self.pb.notify_changed()
        self.pb.schedule_redraw()

    def resync(self) -> None:
        """Re-simulate the shown recording so it can be continued: with the project's city and agents when they
        made it, else with those the recording embeds (its meta's ``config_texts``)."""
        s = self.session
        if s.project is None:
            return
        if s.history is None or s.read_only is not None or \
                s.history.meta.get("provenance") == provenance(s.project.config):
            self.restoring = False
            self.pb.start(s.project)
            return
        try:
            config = replace(config_from_episode(s.history.meta), extra=dict(s.project.config.extra or {}))
        except LogiCityError:
            config = s.project.config     # the sync then continues it as far as it matches
        self.pb.sim_steps = 0
        self.pb.syncing = self.restoring = True
        self.sim.sync(start_config(config, s.history.meta), int(s.history.meta.get("seed", s.project.seed)),
                      s.positions(), s.interventions)
        self.pb.notify_changed()
