"""The studio's SPF mode: a window where a person drives the ego car of a Safe Path Following episode.

Layout: the city map (the ego selected, its field of view and planned path drawn, the view following it) and
the :class:`widgets.spf.panel.SPFPanel`. Keys 1–4 act (Slow, Normal, Fast, Stop); the panel shows reward and its
parts, violations with the violated clause, steps left and the outcome; the slider scrubs back through the
run; the run can be saved as a demonstration (same format as ``python main.py spf collect``). A run with unsaved
steps is never dropped silently: starting another episode, switching the mode or episode set, or closing the window
asks "Save this run as a demonstration?" (Save / Discard / Cancel, through the window's dialogs).

The session (:class:`core.tasks.spf.session.PlaySession`) runs in the GUI thread: an SPF step is far shorter than the
time between two key presses.

Opened from the main window's Simulation menu through an :class:`SPFLauncher` (its action and the window it opens);
``python -m app.features.spf.play`` opens it alone.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtGui, QtWidgets

from app.features.spf.play_model import SPFModelDriver
from app.shell.dialogs import Dialogs, QtDialogs, UnattendedDialogs
from core.base.codes import ACTION_NAMES, Action
from core.base.errors import LogiCityError
from core.view.agent_rows import violation_witnesses
from widgets.map_overlays import WitnessOverlay
from widgets.map_view import MapView
from widgets.spf.panel import SPFPanel

if TYPE_CHECKING:   # the task package loads with the first episode, not with the studio
    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.session import PlaySession

#: the same key map as core.tasks.spf.session.KEY_MAP (kept here so opening the studio does not import the
#: task package; a test checks they agree)
KEY_MAP: dict[str, Action] = {"1": Action.SLOW, "2": Action.NORMAL, "3": Action.FAST, "4": Action.STOP}

#: cells shown around the ego when following it
VIEW_RADIUS = 45


def _env(session: PlaySession) -> SPFEnv:
    """The session's environment, which it makes when it is created (core annotates the field as ``object``)."""
    return session.env  # type: ignore[return-value]


class SPFPlayWindow(QtWidgets.QMainWindow):
    stateShown = QtCore.Signal(int)

    def __init__(self, parent: QtWidgets.QWidget | None = None, dialogs: Dialogs | None = None) -> None:
        super().__init__(parent)
        self.dialogs: Dialogs = dialogs if dialogs is not None else QtDialogs()
        self.model_driver: SPFModelDriver | None = None
        self.setWindowTitle("LogiCity Studio — Safe Path Following")
        self.sessions: dict[tuple[str, str], PlaySession] = {}   # by (mode, split)
        self.session: PlaySession | None = None
        self.shown = 0
        self.last_saved: Path | None = None
        self._saved_steps = 0               # steps of the current run already saved or discarded
        self.map = MapView(self)
        self.map.setObjectName("spfMap")
        self.witness = WitnessOverlay(self.map.vb)   # the witness of a violated rule, linked to the ego
        self.panel = SPFPanel(self)
        split = QtWidgets.QSplitter()
        split.addWidget(self.map)
        scroll = QtWidgets.QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self.panel)
        scroll.setMinimumWidth(400)
        split.addWidget(scroll)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        self.setCentralWidget(split)
        self.statusBar()
        self.panel.startRequested.connect(self.start)
        self.panel.choiceChanged.connect(self._on_choice)
        self.panel.actionRequested.connect(self.act)
        self.panel.seekRequested.connect(self.show_state)
        self.panel.liveRequested.connect(lambda: self.show_state(self.num_steps))
        self.panel.saveRequested.connect(self.save_dialog)
        self.panel.hint_check.toggled.connect(lambda _: self._refresh_live())
        for key, action in KEY_MAP.items():   # keys act wherever the focus is (except in the spin box)
            sc = QtGui.QShortcut(QtGui.QKeySequence(key), self)
            sc.setContext(QtCore.Qt.ShortcutContext.WindowShortcut)
            sc.activated.connect(lambda a=int(action): self.act(a))
        self._on_choice(self.panel.mode, self.panel.split)
        self.model_driver = SPFModelDriver(self)    # the Model dock: a trained run drives the ego (keys 5, M)

    # ---- session ------------------------------------------------------------------------------------------------
    def _session_for(self, mode: str, split: str) -> PlaySession:
        from core.tasks.spf.session import PlaySession

        key = (mode, split)
        if key not in self.sessions:
            self.sessions[key] = PlaySession(mode, split)
        return self.sessions[key]

    def _on_choice(self, mode: str, split: str) -> None:
        s = self.session
        if s is not None and (s.mode, s.split) != (mode, split) and not self.maybe_keep_run():
            self.panel.mode_box.blockSignals(True)   # cancelled: back to the run's mode and episode set
            self.panel.split_box.blockSignals(True)
            try:
                self.panel.set_choice(s.mode, s.split, s.episode or 0)
            finally:
                self.panel.mode_box.blockSignals(False)
                self.panel.split_box.blockSignals(False)
            return
        try:
            n = self._session_for(mode, split).num_episodes
        except LogiCityError as exc:
            self.statusBar().showMessage(f"cannot load SPF {mode}/{split}: {exc}", 10000)
            n = 0
        self.panel.set_episode_count(n)

    @property
    def num_steps(self) -> int:
        return self.session.num_steps if self.session else 0

    def start(self, mode: str, split: str, episode: int) -> None:
        """Start episode ``episode`` of the ``split`` set of ``mode`` (after asking about an unsaved run)."""
        if not self.maybe_keep_run():
            return
        try:
            s = self._session_for(mode, split)
            s.start(episode)
        except (LogiCityError, IndexError) as exc:
            self._warn("Cannot start the episode", str(exc))
            return
        self._saved_steps = 0
        env = _env(s)
        if self.session is None or _env(self.session).sim.city is not env.sim.city or self.map.city is None:
            self.map.set_city(env.sim.city)
        self.session = s
        self.panel.set_choice(mode, split, episode)
        st = env.episodes.state(episode)
        self.panel.show_episode(
            f"{mode.capitalize()} · {split} episode {episode}: ego {env.settings.ego} "
            f"({env.ego_concept}, priority {int(env.sim.agents.priorities[env.ego])}); the rules' oracle "
            f"needs {st.label['oracle_step']} steps, you have {s.max_steps}.")
        self.statusBar().showMessage("Drive with keys 1–4: " + ", ".join(
            f"{k} {ACTION_NAMES[int(a)]}" for k, a in KEY_MAP.items()), 8000)
        self.map.setFocus()
        self._refresh_live()
        self._refresh_violations()  # the new run has none yet: never show the previous run's
        self.show_state(0)

    def act(self, action: int) -> None:
        """Take ``action`` at the newest step (if reviewing an older state, the view jumps back to live)."""
        s = self.session
        if s is None or not s.started:
            self.statusBar().showMessage("Start an episode first", 4000)
            return
        if s.done:
            self.statusBar().showMessage(f"The episode is over ({s.outcome}); start another or save the run", 5000)
            return
        rec = s.act(action)
        self._refresh_live()
        self._refresh_violations()
        self.show_state(s.num_steps)
        if s.done:
            self.statusBar().showMessage(f"Episode over: {s.outcome}, score {s.total_reward:+.4f}. Scrub back with "
                                         f"the slider; save the run as a demonstration.", 15000)
        elif rec.violations:
            self.statusBar().showMessage("Rule violated", 5000)

    # ---- display ---------------------------------------------------------------------------------------------------
    def _refresh_live(self) -> None:
        s = self.session
        if s is None or not s.started:
            return
        last = s.records[-1] if s.records else None
        if last is None:
            reward = "–"
        else:
            c = last.components
            reward = (f"{last.reward:+.4f} ({ACTION_NAMES[last.action]}: action {c['action_cost']:+.4f}, "
                      f"rules {c['rule']:+.4f}" + (f", overtime {c['overtime']:+.1f}" if c["overtime"] else "") + ")")
        hint = None if s.done else f"oracle: {s.describe_action(s.oracle_hint())}"
        self.panel.show_live(outcome=s.outcome, step=s.num_steps, steps_left=s.steps_left, reward=reward,
                             score=s.total_reward, hint=hint, running=not s.done, num_steps=s.num_steps)

    def _refresh_violations(self) -> None:
        s = self.session
        if s is None:
            return
        items = []
        for r in s.records:
            for v in r.violations:
                items.append((r.step, f"{v['rule']} — {v['text']}"))
        self.panel.set_violations(items)

    def show_state(self, k: int) -> None:
        """Show state ``k`` (0 = start, num_steps = newest) on the map and in the review line."""
        s = self.session
        if s is None or not s.started:
            return
        k = max(0, min(int(k), s.num_steps))
        self.shown = k
        scene = s.scene(k)
        self.map.show_scene(scene)
        r, c = (int(x) for x in s.ego_position(k))
        self.map.vb.setRange(QtCore.QRectF(c - VIEW_RADIUS, r - VIEW_RADIUS, 2 * VIEW_RADIUS, 2 * VIEW_RADIUS),
                             padding=0.0)
        rec = s.record(k)
        ego = _env(s).ego
        self.witness.show(scene.positions, ego, violation_witnesses(rec.violations if rec is not None else (), ego))
        if rec is None:
            text = "start of the episode"
        else:
            driver = self.model_driver
            who = "the model" if driver is not None and rec.step in driver.driven else "you"
            text = (f"step {rec.step}: {who} chose {ACTION_NAMES[rec.action]}, the oracle "
                    f"{ACTION_NAMES[rec.oracle_action]}, reward {rec.reward:+.4f}")
            if rec.violations:
                text += " — violated: " + "; ".join(v["rule"] for v in rec.violations)
        self.panel.show_review(k, s.num_steps, text)
        self.stateShown.emit(k)

    # ---- saving --------------------------------------------------------------------------------------------------
    def save_to(self, path: str | Path) -> Path | None:
        s = self.session
        if s is None or not s.started:
            self.statusBar().showMessage("Nothing to save yet", 4000)
            return None
        try:
            out = s.save(path)
        except (OSError, LogiCityError) as exc:
            self._warn("Cannot save the demonstration", f"{path}: {exc}" if isinstance(exc, OSError) else str(exc))
            return None
        self.last_saved = out
        self._saved_steps = s.num_steps
        self.statusBar().showMessage(f"Saved {s.num_steps} steps to {out}", 8000)
        return out

    def save_dialog(self) -> Path | None:
        """Ask for a file name and save the run there; None when cancelled or failed."""
        s = self.session
        if s is None or not s.started:
            self.statusBar().showMessage("Nothing to save yet", 4000)
            return None
        default = f"spf_{_env(s).spf.name}_{s.split}_ep{s.episode}_human.npz"
        path = self.dialogs.save_file_name(self, "save_path", "Save demonstration", default, "Demonstrations (*.npz)")
        return self.save_to(path) if path else None

    # ---- unsaved runs --------------------------------------------------------------------------------------------
    @property
    def has_unsaved_run(self) -> bool:
        """The current run has steps that were neither saved nor discarded."""
        s = self.session
        return s is not None and s.started and s.num_steps > self._saved_steps

    def maybe_keep_run(self) -> bool:
        """Before the current run is replaced or the window closes: ask Save / Discard / Cancel when it has unsaved
        steps. True = go ahead (saved or discarded), False = stay (cancelled, or the save did not happen)."""
        s = self.session
        if s is None or not self.has_unsaved_run:
            return True
        choice = self.ask("unsaved_run", "Unsaved run",
                          f"Save this run as a demonstration? ({_env(s).spf.name} {s.split} episode {s.episode}, "
                          f"{s.num_steps} steps, {s.outcome})",
                          [("save", "Save…"), ("discard", "Discard"), ("cancel", "Cancel")], "save")
        if choice == "save":
            return self.save_dialog() is not None
        if choice == "discard":
            self.discard_run()
            return True
        return False

    def discard_run(self) -> None:
        """Forget the current run's unsaved steps (closing asks nothing about them)."""
        if self.session is not None:
            self._saved_steps = self.session.num_steps

    def ask(self, key: str, title: str, text: str, choices: list[tuple[str, str]], default: str) -> str:
        return self.dialogs.ask(self, key, title, text, choices, default)

    def _warn(self, title: str, text: str) -> None:
        """A non-blocking warning (the window keeps running), repeated in the status line."""
        self.dialogs.warn(self, title, text)
        self.statusBar().showMessage(f"{title}: {text}", 10000)

    def closeEvent(self, ev: QtGui.QCloseEvent) -> None:  # noqa: N802 (Qt name)
        if not self.maybe_keep_run():
            ev.ignore()
            return
        ev.accept()


class SPFLauncher(QtCore.QObject):
    """The SPF play window, created on first use, then shown again (Simulation ▸ Safe Path Following: drive the ego
    car…); :meth:`close_window` asks about an unsaved run before the studio quits."""

    def __init__(self, parent: QtCore.QObject | None = None, dialogs: Dialogs | None = None) -> None:
        super().__init__(parent)
        self.dialogs = dialogs
        self.window: SPFPlayWindow | None = None

    def open(self) -> "SPFPlayWindow":
        if self.window is None:
            self.window = SPFPlayWindow(dialogs=self.dialogs)
            self.window.resize(1280, 800)
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()
        return self.window

    def close_window(self, discard: bool = False) -> bool:
        """Close the SPF window (asking its "Save this run?"; ``discard`` answers Discard). False when the user
        cancelled and the window stays open."""
        w = self.window
        if w is None or not w.isVisible():
            return True
        if discard:
            w.discard_run()
        return bool(w.close())


def main(argv: list[str] | None = None) -> int:
    """Open the SPF play window alone: ``python -m app.features.spf.play [--mode easy] [--episode 0] [--screenshot P]``."""
    import argparse

    ap = argparse.ArgumentParser(description="LogiCity Studio: drive an SPF episode")
    ap.add_argument("--mode", default="easy", choices=("easy", "medium", "hard", "expert"))
    ap.add_argument("--split", default="test", choices=("test", "val"))
    ap.add_argument("--episode", type=int, default=0)
    ap.add_argument("--keys", default="", help="key presses to play at start, e.g. 2224 (screenshots, demos; 5 = "
                    "a step of the --model)")
    ap.add_argument("--model", default=None, help="a trained run folder (spf train --out DIR) for the Model dock")
    ap.add_argument("--show", type=int, default=None, help="scrub to this state after the key presses")
    ap.add_argument("--hint", action="store_true", help="show the oracle's suggestion")
    ap.add_argument("--screenshot", default=None, help="save the window as PNG and exit")
    args = ap.parse_args(argv)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(sys.argv[:1])
    from app.shell import gui_gc

    gui_gc.install()   # cyclic garbage is freed in the GUI thread, never in a job thread (app/shell/gui_gc.py)
    win = SPFPlayWindow(dialogs=UnattendedDialogs() if args.screenshot else None)   # a screenshot quits unasked
    win.resize(1280, 800)
    win.show()
    win.panel.hint_check.setChecked(args.hint)
    win.start(args.mode, args.split, args.episode)
    driver = win.model_driver
    assert driver is not None   # the window makes its Model dock
    if args.model:
        driver.load(args.model)
    for ch in args.keys:
        if ch in KEY_MAP:
            win.act(int(KEY_MAP[ch]))
        elif ch == "5":
            driver.model_step()
    if args.show is not None:
        win.show_state(args.show)
    if args.screenshot:
        def grab() -> None:
            win.grab().save(args.screenshot)
            screen = QtWidgets.QApplication.primaryScreen()
            if screen is not None:
                screen.grabWindow(0).save(str(Path(args.screenshot).with_suffix("")) + "-screen.png")
            app.quit()

        QtCore.QTimer.singleShot(1200, grab)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
