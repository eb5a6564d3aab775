"""Projects: open (dialog, path, recent files), show, save / save as, and the unsaved-changes question.

Every failure ends in a non-blocking error dialog naming the file and the problem; the studio keeps the project it
had. Problems in a project's saved view state that the session leaves out (a bad breakpoint) are reported in the
status line and the log.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtWidgets

from app.shell import gui_gc
from app.shell.features import FeatureController
from app.shell.services import Playback, Shell
from app.shell.settings import add_recent, recent_files, remove_recent
from core.base.errors import LogiCityError
from core.base.paths import ROOT
from core.project.load import describe_error, is_project, manifest_name, replaced_files
from core.project.model import Project
from core.studio.episode_file import is_episode_file
from core.studio.session import Session, load_target


class ProjectController(FeatureController):
    def __init__(self, shell: Shell, session: Session, playback: Playback,
                 parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.session = session
        self.playback = playback

    @property
    def _widget(self) -> QtWidgets.QWidget:
        return self.shell.dialog_parent

    # ---- opening ------------------------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        if not self.maybe_save("open another project"):
            return
        p = self.session.project
        start = str(p.root) if p and p.root else str(ROOT / "configs" / "modes")
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self._widget, "Open project, mode file or episode", start,
            "Projects, mode files and episodes (project.yaml *.yaml *.yml *.npz *.pkl);;Episodes (*.npz);;"
            "LogiCity runs (*.pkl);;All files (*)")
        if path:
            self.open_path(path, ask_save=False)

    def fill_recent(self, menu: QtWidgets.QMenu) -> None:
        """File ▸ Open recent, filled each time it is shown."""
        menu.clear()
        settings = self.shell.settings
        files = recent_files(settings)
        if not files:
            menu.addAction("(none yet)").setEnabled(False)
        for f in files:
            menu.addAction(f).triggered.connect(lambda _=False, f=f: self.open_path(f))
        if files:
            menu.addSeparator()
            menu.addAction("Clear list").triggered.connect(lambda: settings.setValue("recent/files", []))

    def open_path(self, path: str | Path, ask_save: bool = True) -> bool:
        """Open a project folder, its project.yaml, a mode file, or an episode file (.npz, shown as a read-only
        replay). Errors show a dialog and the studio keeps what it had; returns success."""
        if ask_save and not self.maybe_save("open another project"):
            return False
        p = Path(path)
        settings = self.shell.settings
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.WaitCursor)
        try:
            project, episode = load_target(p)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a dialog, the studio keeps running
            file, problem = describe_error(exc)
            self.shell.show_error("Could not open the project", str(p) if file == "(internal error)" else file,
                                  problem)
            if not p.exists() and str(p.resolve()) in recent_files(settings):
                remove_recent(settings, str(p.resolve()))
            return False
        finally:
            QtWidgets.QApplication.restoreOverrideCursor()
        try:
            self.install(project, episode, read_only=p if is_episode_file(p) else None)
        except Exception as exc:  # noqa: BLE001 - a project that loads but cannot be shown: report, start clean
            file, problem = describe_error(exc)
            self.shell.show_error("Could not show the project", str(p) if file == "(internal error)" else file,
                                  problem)
            return False
        add_recent(settings, project.root if project.root is not None else p)
        return True

    def install(self, project: Project, episode: Any = None, read_only: Path | None = None) -> None:
        """Show ``project`` (with a recorded ``episode``) and start its simulation; ``read_only``: the episode
        file shown as a read-only replay (nothing is simulated)."""
        self.playback.pause()
        problems = self.session.open(project, episode, read_only=read_only)
        gui_gc.release_long_lived()   # the replaced project's reference cycles are freed by the next full collection
        self.playback.start(project)
        if problems:   # shown once the simulation is ready, so "Ready: …" does not hide it
            text = f"Left out {len(problems)} breakpoint(s) of the project: {'; '.join(problems)}"
            self.playback.when_ready(lambda: self.shell.status(text, 15000))

    # ---- saving -------------------------------------------------------------------------------------------------
    def save(self) -> bool:
        p = self.session.project
        if p is None:
            return False
        if p.root is None:
            return self.save_as()
        return self.save_to(p.root)

    def save_as(self) -> bool:
        p = self.session.project
        if p is None:
            return False
        start = str(p.root.parent if p.root else Path.home())
        folder = QtWidgets.QFileDialog.getExistingDirectory(self._widget, "Save project into folder (new or empty)",
                                                            start)
        return self.save_to(folder) if folder else False

    def save_to(self, folder: str | Path) -> bool:
        """Save the project and the current recording into ``folder`` (atomic; errors show a dialog)."""
        project = self.session.project
        if project is None:
            return False
        folder = Path(folder)
        own = project.root is not None and folder.resolve() == Path(project.root).resolve()
        if folder.exists() and not folder.is_dir():
            self.shell.show_error("Could not save the project", str(folder), "this is a file, not a folder")
            return False
        if not own and folder.is_dir() and any(folder.iterdir()) and not is_project(folder):
            self.shell.show_error("Could not save the project", str(folder),
                                  "the folder is not empty and holds no project; choose an empty or new folder")
            return False
        replace = False
        if not own and is_project(folder):
            try:   # a project naming files outside its folder or the studio's own files cannot be replaced safely
                replaced_files(folder)
            except LogiCityError as exc:
                file, problem = describe_error(exc)
                self.shell.show_error("Could not replace the project", file, problem)
                return False
            other = manifest_name(folder)
            ans = self.shell.ask("overwrite", "Replace the project?",
                                 f"The folder {folder} already holds the project “{other}”.\n\nReplace it with "
                                 f"“{project.name}”? The files of “{other}” are deleted (other files in the "
                                 f"folder stay).", [("replace", "Replace"), ("cancel", "Cancel")], "cancel")
            if ans != "replace":
                self.shell.status("Not saved: the folder holds another project")
                return False
            replace = True
        try:
            self.session.save(folder, replace=replace)
        except Exception as exc:  # noqa: BLE001
            file, problem = describe_error(exc)
            self.shell.show_error("Could not save the project", str(folder) if file == "(internal error)" else file,
                                  problem)
            return False
        add_recent(self.shell.settings, folder)
        if self.session.read_only is not None:   # a replay saved as a project: reopen it, it can be continued now
            replay = self.session.read_only.name
            if not self.open_path(folder, ask_save=False):
                return False
            self.shell.status(f"Saved the replay of {replay} as a project in {folder}; it can be simulated further")
            return True
        self.shell.status(f"Saved to {folder}")
        return True

    def maybe_save(self, doing: str) -> bool:
        """Unsaved-changes prompt. Returns False when the user cancels."""
        project = self.session.project
        if not self.session.modified or project is None:
            return True
        ans = self.shell.ask("unsaved", "Unsaved changes",
                             f"The project “{project.name}” has unsaved changes (recorded steps, breakpoints). "
                             f"Save them before you {doing}?",
                             [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")], "save")
        if ans == "save":
            return self.save()
        return ans == "discard"
