"""File ▸ Episode info… (Ctrl+Shift+I): which city and agents produced each saved episode of the project and the
recording on screen (the recorded episode remembers which city and agents produced it).

The content is plain data from :mod:`core.studio.episode_info` (the manifest's ``provenance`` of each episode,
written by core/project/model.py on save, and the shown recording's meta); the window is :mod:`widgets.project.episode_info`.
"""
from __future__ import annotations

from app.shell.features import FeatureController, FeatureHost
from app.shell.menus import ActionSpec
from core.studio.episode_info import recording_lines, saved_episodes
from widgets.project.episode_info import EpisodeInfo

__all__ = ["EpisodeInfoController"]


class EpisodeInfoController(FeatureController):
    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.host = host
        self.session = host.session
        self.dialog: EpisodeInfo | None = None
        self.action = host.add(ActionSpec("Episode &info…", self.show, "Ctrl+Shift+I",
                                          "The saved episodes and the city and agents that produced each",
                                          menu="file", section="info"))
        ev = self.session.events
        for emitter in (ev.project, ev.history, ev.saved, ev.agents, ev.truncated):
            emitter.connect(lambda e: self.refresh())

    def show(self) -> None:
        if self.dialog is None:
            self.dialog = EpisodeInfo(self.host.shell.dialog_parent)
        self.refresh(force=True)
        self.dialog.show()
        self.dialog.raise_()

    def refresh(self, force: bool = False) -> None:
        if self.dialog is None or not (force or self.dialog.isVisible()):
            return
        saved = []
        for line in saved_episodes(self.session):
            e = next((e for e in self.session.project.episodes if e.file == line.file), None)
            prov = (e.provenance or {}) if e is not None else {}
            tip = "\n".join(f"{k}: {v}" for k, v in prov.items()) or "no hashes recorded (saved by an older version)"
            saved.append((line.text(), tip))
        self.dialog.show_info(recording_lines(self.session), saved)

    def shutdown(self, wait_ms: int) -> bool:
        if self.dialog is not None:
            self.dialog.close()
        return True
