"""Study feature: the "&Study" menu — design a study (a background job), run a participant session full screen,
and show results (Table 4 layout, kappa, confusion matrix, response times, exports). Logic lives in core/study.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import QtCore, QtWidgets

from app.shell.features import FeatureController, FeatureHost
from app.shell.jobs import JobHandle
from app.shell.menus import ActionSpec
from core.base.errors import LogiCityError
from core.base.paths import ROOT

if TYPE_CHECKING:   # the results view (pyqtgraph) is imported when results are first shown
    from widgets.study.results import StudyResultsView


class StudyController(FeatureController):
    made = QtCore.Signal(object)          # the Study, after New Study's job finished
    llm_finished = QtCore.Signal(str)     # a model run's name, after its job finished

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.host = host
        self.shell = host.shell
        self.parent_widget = host.shell.dialog_parent
        self.full_screen = True
        self.runners: list[QtWidgets.QWidget] = []
        self.results: list[StudyResultsView] = []
        self.job: JobHandle | None = None
        for text, slot, tip in (
                ("&New Study…", self.new_study, "Design a study and make its question bank"),
                ("&Run Participant Session…", self.run_session, "Open a study and run one participant full screen"),
                ("Study &Results…", self.show_results,
                 "Accuracy per action, Fleiss' kappa, confusion matrix, response times"),
                ("&Evaluate a Language Model…", self.evaluate_llm,
                 "Ask a model the study's questions (k-shot); replies are journalled, a rerun resumes")):
            host.add(ActionSpec(text, slot, None, tip, menu="study"))

    def pick_folder(self, title: str) -> str:
        return QtWidgets.QFileDialog.getExistingDirectory(self.parent_widget, title)

    def pick_save(self, title: str, filt: str) -> str:
        return QtWidgets.QFileDialog.getSaveFileName(self.parent_widget, title, "", filt)[0]

    # ---- design -------------------------------------------------------------------------------------------------
    def new_study(self) -> QtWidgets.QDialog:
        from widgets.study.designer import StudyDesignerDialog

        modes = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "configs" / "modes").glob("*.yaml"))
        dlg = StudyDesignerDialog(modes, self.parent_widget)
        dlg.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.accepted.connect(lambda: self.make(dlg.spec(), dlg.target()))
        dlg.open()
        return dlg

    def make(self, spec, folder: Path):
        from core.study.design import make_study

        def work(ctx):
            return make_study(spec, folder, base=ROOT, progress=lambda stage, d, t: ctx.progress(stage, d, t),
                              cancelled=lambda: ctx.cancelled)

        self.shell.status(f"making study {spec.name}…")
        self.job = self.host.jobs.start(work, kind="study")
        self.job.progress.connect(lambda v: self.shell.status(f"study: {v[0]} {v[1]}/{v[2]}"))
        self.job.succeeded.connect(self._made)
        return self.job

    def _made(self, study) -> None:
        self.shell.status(f"study made: {len(study.test)} questions in {study.folder}")
        self.made.emit(study)

    def _load(self, folder: str | Path | None, title: str):
        from core.study.design import load_study

        folder = folder or self.pick_folder(title)
        if not folder:
            return None
        try:
            return load_study(folder)
        except LogiCityError as exc:
            self.shell.show_error("Cannot open the study", exc.location() or str(folder), exc.message)
            return None

    # ---- participants ---------------------------------------------------------------------------------------------
    def run_session(self, folder: str | Path | None = None):
        from widgets.study.runner import StudyRunnerWindow

        study = self._load(folder, "Open a study folder")
        if study is None:
            return None
        win = StudyRunnerWindow(study)
        win.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        win.finished.connect(lambda pid: self.shell.status(f"participant {pid} finished"))
        win.destroyed.connect(lambda *_: self.runners.remove(win) if win in self.runners else None)
        self.runners.append(win)
        win.showFullScreen() if self.full_screen else win.show()
        win.activateWindow()
        win.pid.setFocus()
        return win

    # ---- results --------------------------------------------------------------------------------------------------
    def show_results(self, folder: str | Path | None = None):
        from core.study.report import build_report
        from widgets.study.results import StudyResultsView

        study = self._load(folder, "Open a study folder")
        if study is None:
            return None
        view = StudyResultsView()
        view.setWindowTitle(f"Study results — {study.spec.name}")
        view.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        view.resize(1200, 800)

        def refresh() -> None:
            try:
                view.set_report(build_report(study))
            except LogiCityError as exc:
                self.shell.show_error("Cannot read the study's journals", exc.location(), exc.message)

        def export(kind: str) -> None:
            path = self.pick_save(f"Export answers ({kind.upper()})", f"{kind.upper()} (*.{kind})")
            if path and view.report is not None:
                view.report.export(Path(path) if kind == "csv" else None, Path(path) if kind == "jsonl" else None)
                self.shell.status(f"exported {len(view.report.long_rows())} answers to {path}")

        view.refresh_requested.connect(refresh)
        view.export_requested.connect(export)
        refresh()
        view.destroyed.connect(lambda *_: self.results.remove(view) if view in self.results else None)
        self.results.append(view)
        view.show()
        return view

    # ---- language models ------------------------------------------------------------------------------------------
    def evaluate_llm(self, folder: str | Path | None = None):
        from widgets.study.llm_dialog import StudyLLMDialog

        study = self._load(folder, "Open a study folder")
        if study is None:
            return None
        dlg = StudyLLMDialog(len(study.by_role("training")), self.parent_widget)
        dlg.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.accepted.connect(lambda: self.run_llm(study, dlg.options()))
        dlg.open()
        return dlg

    def run_llm(self, study, o: dict):
        """Run the model as a job (the same functions as ``main.py study llm``); results views refresh after."""
        from core.study.llm import OpenAIChat, RunOptions, TransformersModel, import_batch, run_backend, run_name

        model = o["model"]
        label = Path(model).name if o["backend"] != "openai" else model
        name = o["name"] or run_name(label if o["backend"] != "jsonl-import" else Path(model).stem, o["k"])
        meta = {"backend": o["backend"], "model": model, "k": o["k"]}

        def work(ctx):
            if o["backend"] == "jsonl-import":
                return import_batch(study, Path(model), name, meta)
            if o["backend"] == "openai":
                ask = OpenAIChat(o["base_url"], model, o["key_env"], rpm=o["rpm"])
            else:
                ask = TransformersModel(model, o["mode"])
            return run_backend(study, ask, name, RunOptions(o["k"], name), meta=meta,
                               progress=lambda d, t: ctx.progress(d, t), cancelled=lambda: ctx.cancelled)

        self.shell.status(f"language model run {name}…")
        self.job = self.host.jobs.start(work, kind="study model run")
        self.job.progress.connect(lambda v: self.shell.status(f"{name}: {v[0]}/{v[1]} questions"))
        self.job.succeeded.connect(lambda r: self._llm_done(name, r))
        return self.job

    def _llm_done(self, name: str, result) -> None:
        added, bad = result
        self.shell.status(f"{name}: {added} new answers ({bad} unparseable)")
        for view in self.results:
            view.refresh_requested.emit()
        self.llm_finished.emit(name)

    def shutdown(self, wait_ms: int) -> bool:
        for w in list(self.runners) + list(self.results):
            w.close()
        if self.job is not None and self.job.is_running():
            self.job.cancel()
            return self.job.wait(wait_ms)
        return True

