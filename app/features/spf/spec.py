"""The SPF feature: Simulation ▸ Safe Path Following (the play window, Ctrl+Shift+F), the SPF models dock (Tools ▸
SPF models…, Ctrl+Alt+M) and a loaded model driving the selected car from the shown step (Ctrl+Alt+B)."""
from __future__ import annotations

from app.features.spf.model_branch import BranchDriver
from app.features.spf.models import SPFModelsPanel
from app.features.spf.play import SPFLauncher
from app.shell.features import FeatureController, FeatureHost, FeatureSpec, register
from app.shell.menus import ActionSpec
from app.shell.panels import RIGHT, PanelSpec
from app.shell.panels import register as register_panel


class SPFFeature(FeatureController):
    """The SPF play window's launcher and the SPF models dock, which drives the studio through its services."""

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.launcher = SPFLauncher(self, host.shell.dialogs)
        host.add(ActionSpec("Safe Path Following: drive the ego car…", self.launcher.open, "Ctrl+Shift+F",
                            "Play an SPF evaluation episode with keys 1–4 and save it as a demonstration",
                            menu="simulation", section="tasks"))
        host.guard_close(lambda: self.launcher.close_window(discard=host.shell.unattended))
        self.panel: SPFModelsPanel = host.panels.widget("spf_models")
        self.panel.branch = BranchDriver(self.panel, host)
        self.panel.spf_launcher = self.launcher
        show = lambda: host.panels.show("spf_models")  # noqa: E731

        def drive_selected() -> None:
            show()
            self.panel.drive_from_shown_step()

        host.add(ActionSpec("SPF &models…", show, "Ctrl+Alt+M", "Load a trained SPF model and watch it drive an episode",
                            menu="tools", section="models"))
        host.add(ActionSpec("SPF model drives the selected car", drive_selected, "Ctrl+Alt+B",
                            "Branch at the shown step: the selected car follows the loaded SPF model, everybody else "
                            "the rules", menu="tools", section="models"))

    def shutdown(self, wait_ms: int) -> bool:
        return self.panel.shutdown(wait_ms)


register_panel(PanelSpec("spf_models", "SPF models", RIGHT, lambda session, jobs: SPFModelsPanel(session, jobs),
                         visible=False))
register(FeatureSpec("spf", SPFFeature))
