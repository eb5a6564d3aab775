"""The VAP feature: the VAP predictions dock (Tools ▸ VAP predictions, Ctrl+Alt+V): dataset frames, a loaded
checkpoint's predictions and its confusion matrix, on a dataset or on the studio's recording."""
from __future__ import annotations

from app.features.vap.overlay import VapPanel
from app.shell.features import FeatureController, FeatureHost, FeatureSpec, register
from app.shell.menus import ActionSpec
from app.shell.panels import RIGHT, PanelSpec
from app.shell.panels import register as register_panel


class VapFeature(FeatureController):
    """Shows the dock; stops its jobs when the window closes."""

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.panel: VapPanel = host.panels.widget("vap")
        self.action = host.add(ActionSpec("&VAP predictions", lambda: host.panels.show("vap"), "Ctrl+Alt+V",
                                          "Visual Action Prediction: dataset frames, model predictions, confusion "
                                          "matrix", menu="tools", section="models"))

    def shutdown(self, wait_ms: int) -> bool:
        return self.panel.shutdown(wait_ms)


register_panel(PanelSpec("vap", "VAP predictions", RIGHT, lambda session, jobs: VapPanel(jobs, session),
                         visible=False, width=520))
register(FeatureSpec("vap", VapFeature))
