"""The project feature: File ▸ Open, Open the default city, Open recent, Save, Save as and Episode info; the
unsaved-changes question before the window closes; the projects service."""
from __future__ import annotations

from PySide6 import QtWidgets

from app.features.project.controller import ProjectController
from app.features.project.episode_info import EpisodeInfoController
from app.shell.features import FeatureHost, FeatureSpec, register
from app.shell.menus import ActionSpec, MenuSpec
from app.shell.services import PROJECTS
from core.base.paths import DEFAULT_MODE

SP = QtWidgets.QStyle.StandardPixmap


def install(host: FeatureHost) -> ProjectController:
    pj = ProjectController(host.shell, host.session, host.playback, host.shell.dialog_parent)
    host.provide(PROJECTS, pj)
    add = host.add
    add(ActionSpec("&Open project…", pj.open_dialog, "Ctrl+O", "Open a project folder or a mode file",
                   icon=SP.SP_DialogOpenButton, menu="file", section="open"))
    add(ActionSpec("Open the &default city", lambda: pj.open_path(DEFAULT_MODE), None,
                   "Open the bundled default city (configs/modes/default.yaml)", menu="file", section="open"))
    recent = host.menu("file/recent", MenuSpec("file/recent", "Open &recent"), section="open")
    recent.aboutToShow.connect(lambda: pj.fill_recent(recent))
    add(ActionSpec("&Save project", pj.save, "Ctrl+S", "Save the project (city, rules, episode)",
                   icon=SP.SP_DialogSaveButton, menu="file", section="save"))
    add(ActionSpec("Save project &as…", pj.save_as, "Ctrl+Shift+S", "Save into a new folder", menu="file",
                   section="save"))
    host.guard_close(lambda: pj.maybe_save("quit"))
    return pj


register(FeatureSpec("project", install))
register(FeatureSpec("episode_info", EpisodeInfoController))
