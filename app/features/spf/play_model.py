"""A trained model driving the ego live in the SPF play window: the window's *Model* dock.

*Load run…* a folder of ``spf train`` (or hand one over from the studio's Models panel); then **5** lets the model
take one step and **M** (*Model drives*) lets it drive on its own at the chosen rate until the episode ends, while
1–4 still let the person take over at any step. For every step of the run — the model's or the person's — the dock
records what the model chose or would have chosen on the observation of that step, against the oracle's action:
the probabilities or Q-values as bars, the observation's facts, a timeline with markers where the two disagree
(orange) or a rule was violated (red). On the map the ego's field of view and the entities of its observation are
drawn (numbered in observation order) for the state shown; scrubbing the window's slider or the dock's moves both.
An episode the model drove from start to end is scored with the evaluation's own function and counted in the dock's
TSR / DSR line.

The model runs in the GUI thread, like the window's session: an SPF step and a forward pass of these small networks
are too short to stall the window. Nothing here is imported before the window opens (torch is loaded with the first
run).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui, QtWidgets

from app.features.spf.run_load import ask_run, describe_run, load_run_or_warn, load_run_row
from core.base.codes import ACTION_NAMES
from widgets.spf.model_view import ModelEpisodeView
from widgets.spf.observation_overlay import ObservationOverlay

if TYPE_CHECKING:   # the SPF task stack (and torch) load with the first run, not with this module
    from core.tasks.spf.drive import ObservedView
    from core.tasks.spf.evaluate import EpisodeResult
    from core.tasks.spf.learning.replay import ModelEpisode
    from core.tasks.spf.policy import Policy

#: steps per second offered for *Model drives*
RATES = (1, 2, 5, 10, 20, 50)


class SPFModelDriver(QtCore.QObject):
    """The *Model* dock of an :class:`app.features.spf.play.SPFPlayWindow` and the model's link to its session."""

    def __init__(self, win) -> None:
        super().__init__(win)
        self.win = win
        self.policy: Policy | None = None
        self.pending: dict[int, tuple] = {}   # state k -> (action, scores, probs, ObservedView, names, facts)
        self.views: dict[int, ObservedView] = {}   # state k -> the ego's observation there
        self.driven: set[int] = set()          # steps the model took (the others were the person's)
        self.episode: ModelEpisode | None = None   # the record of the run
        self.results: dict[tuple, EpisodeResult] = {}  # (mode, split, episode) -> result of model-only runs
        self._run_key: tuple[int, int, int] | None = None   # (session, episode, records) the record is of
        self._syncing = False
        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self._tick)
        self._build()
        win.stateShown.connect(self._on_state)

    # ---- the dock ----------------------------------------------------------------------------------------------
    def _build(self) -> None:
        w = self.win
        box = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(box)
        row, self.load_button, self.run_label = load_run_row(self._ask_run)
        lay.addLayout(row)
        row = QtWidgets.QHBoxLayout()
        self.drive_action = QtGui.QAction("Model drives [M]", w)
        self.drive_action.setCheckable(True)
        self.drive_action.setShortcut(QtGui.QKeySequence("M"))
        self.drive_action.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        self.drive_action.setToolTip("Let the model choose the ego's action every step until the episode ends")
        self.drive_action.toggled.connect(self.set_driving)
        self.step_action = QtGui.QAction("Model step [5]", w)
        self.step_action.setShortcut(QtGui.QKeySequence("5"))
        self.step_action.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        self.step_action.setToolTip("The model takes one step")
        self.step_action.triggered.connect(self.model_step)
        for act in (self.drive_action, self.step_action):
            w.addAction(act)
            b = QtWidgets.QToolButton()
            b.setDefaultAction(act)
            row.addWidget(b)
        self.rate = QtWidgets.QComboBox()
        self.rate.addItems([f"{r} steps/s" for r in RATES])
        self.rate.setCurrentIndex(2)
        self.rate.currentIndexChanged.connect(lambda _i: self.timer.setInterval(self._interval()))
        row.addWidget(self.rate)
        row.addStretch(1)
        lay.addLayout(row)
        self.next_label = QtWidgets.QLabel("")
        self.next_label.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.next_label.setWordWrap(True)
        lay.addWidget(self.next_label)
        self.totals = QtWidgets.QLabel("")
        lay.addWidget(self.totals)
        self.view = ModelEpisodeView()
        self.view.stepChanged.connect(self._on_view_step)
        lay.addWidget(self.view, 1)
        self.dock = QtWidgets.QDockWidget("Model", w)
        self.dock.setObjectName("spfModelDock")
        self.dock.setWidget(box)
        w.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.dock.hide()                      # human play needs the room; shown with a model or from the toolbar
        toggle = self.dock.toggleViewAction()
        toggle.setText("Model dock")
        toggle.setToolTip("Show the Model dock: load a trained run and let it drive (keys 5, M)")
        bar = w.addToolBar("Model")
        bar.setObjectName("spfModelToolbar")
        bar.addAction(toggle)
        self.overlay = ObservationOverlay(w.map.vb)
        self._enable()

    def _interval(self) -> int:
        return int(1000 / RATES[self.rate.currentIndex()])

    def _enable(self) -> None:
        on = self.policy is not None
        self.drive_action.setEnabled(on)
        self.step_action.setEnabled(on)

    # ---- the model ---------------------------------------------------------------------------------------------
    def _ask_run(self) -> None:
        ask_run(self.win, self.load)

    def load(self, path: str | Path) -> bool:
        pol = load_run_or_warn(path, self.win._warn)
        return False if pol is None else self.set_policy(pol)

    def set_policy(self, policy) -> bool:
        """Use ``policy`` (a loaded run); a run for another mode than the episode shown is refused by name."""
        s = self.win.session
        if s is not None and not self._compatible(policy, s):
            return False
        self.set_driving(False)
        self.policy = policy
        self.run_label.setText(describe_run(policy, with_test=False))
        self.pending.clear()
        self._enable()
        if not self.dock.isVisible():
            self.dock.show()
            self.win.resizeDocks([self.dock], [430], QtCore.Qt.Orientation.Horizontal)   # leave the map room
        if s is not None and s.started:
            self._reset_run()
            self._on_state(self.win.shown)
        return True

    def _compatible(self, policy, session) -> bool:
        from core.base.errors import LogiCityError
        from core.tasks.spf.learning.run import check_compatible

        try:
            check_compatible(policy.config, session.env, policy.source)
        except LogiCityError as exc:
            self.win._warn("The model cannot drive this episode", str(exc))
            return False
        return True

    def _read(self, k: int):
        """The model's choice on the live state ``k`` (computed once per state)."""
        from core.tasks.spf.drive import observed_view, readout
        from core.tasks.spf.learning.replay import observation_facts
        from core.tasks.spf.learning.run import env_layout

        hit = self.pending.get(k)
        if hit is None:
            assert self.policy is not None, "asked only while a model is loaded"
            env = self.win.session.env
            obs = env.grounding.observation(env.ego, env.fov)
            names = tuple(env.view_entities)
            a, scores, probs = readout(self.policy, obs, f"at step {k + 1}")
            view = observed_view(env.grounding, env.ego, env.fov)
            hit = self.pending[k] = (a, scores, probs, view, names,
                                     observation_facts(obs, env_layout(env), list(names), env.fov))
            self.views[k] = view
        return hit

    def model_step(self) -> bool:
        """The model takes the ego's next step; False when it cannot (no model, no episode, the episode is over)."""
        from core.base.errors import LogiCityError

        s = self.win.session
        if self.policy is None or s is None or not s.started or s.done:
            if s is not None and s.done:
                self.set_driving(False)
            return False
        if not self._compatible(self.policy, s):
            self.set_driving(False)
            return False
        self._sync_run()
        k = s.num_steps
        try:
            a = self._read(k)[0]
        except LogiCityError as exc:
            self.set_driving(False)
            self.win._warn("The model failed", str(exc))
            return False
        self.driven.add(k + 1)
        self.win.act(a)                           # the window's own path: records, refreshes, shows state k+1
        if s.done:
            self.set_driving(False)
        return True

    def set_driving(self, on: bool) -> None:
        """*Model drives* on or off (the checkable action follows)."""
        on = bool(on) and self.policy is not None
        if self.drive_action.isChecked() != on:
            self.drive_action.blockSignals(True)
            self.drive_action.setChecked(on)
            self.drive_action.blockSignals(False)
        if on:
            self.timer.start(self._interval())
        else:
            self.timer.stop()

    def _tick(self) -> None:
        if not self.model_step():
            self.set_driving(False)

    # ---- the run's record ----------------------------------------------------------------------------------------
    def _reset_run(self) -> None:
        s = self.win.session
        self._run_key = (id(s), s.episode, id(s.records))
        self.pending.clear()
        self.views.clear()
        self.driven.clear()
        self.episode = None
        self.view.set_episode(_empty_episode(s, self.policy))

    def _sync_run(self) -> ModelEpisode:
        """Bring the record up to the session's steps (a step the person took is recorded with what the model
        would have chosen there); returns it."""
        from core.tasks.spf.learning.replay import ModelStep

        s = self.win.session
        if (id(s), s.episode, id(s.records)) != self._run_key:
            self._reset_run()
        ep = self.episode or _empty_episode(s, self.policy)
        changed = False
        while len(ep.steps) < s.num_steps:
            t = len(ep.steps) + 1
            hit = self.pending.get(t - 1)
            if hit is None:        # stepped before the model saw it (no model then): nothing to show for it
                break
            a, scores, probs, view, names, facts = hit
            rec = s.records[t - 1]
            viol = tuple(f"{v.get('rule', '?')}: {v.get('text') or v.get('clause', '')}" for v in rec.violations)
            ep.steps.append(ModelStep(t, a, rec.oracle_action, scores, probs, names, facts, rec.reward, viol,
                                      view.cells[0] if view.cells else None))
            changed = True
        if changed or self.episode is None:
            last = s.records[-1] if s.records else None
            ep.success, ep.fail = bool(last and last.success), bool(last and last.fail)
            self.episode = ep
            self._score_if_done()
        return ep

    def _score_if_done(self) -> None:
        s, ep = self.win.session, self.episode
        if ep is None or not s.done or not s.records or len(self.driven) != s.num_steps:
            return
        ep.result = s.result()
        self.results[(s.mode, s.split, s.episode)] = s.result()
        res = list(self.results.values())
        tsr = sum(r.success for r in res) / len(res)
        dec = sum(sum(r.decided.values()) for r in res)
        ok = sum(sum(r.ok.values()) for r in res)
        self.totals.setText(f"{len(res)} episode(s) driven by the model from start to end: TSR {tsr:.2f}, "
                            f"DSR {ok}/{dec}")

    # ---- display -----------------------------------------------------------------------------------------------
    def _on_state(self, k: int) -> None:
        """The window shows state ``k``: the record, the dock's step and the observation drawn on the map."""
        s = self.win.session
        if self.policy is None or s is None or not s.started:
            self.overlay.show(None)
            return
        if s.num_steps == 0 or (id(s), s.episode, id(s.records)) != self._run_key:
            self._reset_run()
        live = k == s.num_steps and not s.done
        if live:
            from core.base.errors import LogiCityError

            try:
                a, _sc, probs, _v, _n, _f = self._read(k)
            except LogiCityError as exc:
                self.next_label.setText(f"<b style='color:#c00'>{exc}</b>")
                a = None
            if a is not None:
                o = int(s.oracle_hint())
                p = "" if probs is None else f" (p {probs[a]:.2f})"
                tag = "agrees" if a == o else "<b style='color:#c60'>disagrees</b>"
                self.next_label.setText(f"now: model <b>{ACTION_NAMES[a]}</b>{p}, oracle <b>{ACTION_NAMES[o]}</b> "
                                        f"({tag})")
        else:
            self.next_label.setText("")
        ep = self._sync_run()
        self._syncing = True
        try:
            self.view.set_episode(ep, show=min(k + 1, len(ep.steps)))   # step k+1 was decided on state k
            if len(self.driven) < len(ep.steps):
                mine = sum(1 for t in range(1, len(ep.steps) + 1) if t in self.driven)
                self.view.summary.setText(f"{mine} of {len(ep.steps)} steps driven by the model (the others by "
                                          f"you; shown: what the model would have chosen)")
            else:
                self.view.summary.setText(f"{len(ep.steps)} steps driven by the model" +
                                          (f", {s.outcome}, score {s.total_reward:+.3f}" if s.done else ""))
        finally:
            self._syncing = False
        if k < len(ep.steps):
            disagrees = ep.steps[k].disagrees
        else:
            pend = self.pending.get(k)
            disagrees = bool(pend is not None and not s.done and pend[0] != int(s.oracle_hint()))
        self.overlay.show(self.views.get(k), disagrees)

    def _on_view_step(self, step: int) -> None:
        if not self._syncing and self.win.session is not None:
            self.win.show_state(step - 1)          # step t was decided on state t-1


def _empty_episode(session, policy):
    from core.tasks.spf.learning.replay import ModelEpisode

    return ModelEpisode(session.mode, session.split, session.episode or 0,
                        policy.name if policy is not None else "model")
