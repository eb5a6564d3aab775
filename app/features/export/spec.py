"""The export feature: File ▸ Export view as PNG (Ctrl+E), Export steps as GIF / images (Ctrl+Shift+E) and Export
dataset (Ctrl+Alt+X)."""
from __future__ import annotations

from app.features.export.animation import ExportController
from app.features.export.dataset import DatasetExportController
from app.shell.features import FeatureHost, FeatureSpec, register
from app.shell.menus import ActionSpec


def install(host: FeatureHost) -> ExportController:
    ex = ExportController(host.shell, host.session, host.jobs, host.map, host.drawing.scene_at, host.playback.pause)
    host.add(ActionSpec("Export view as &PNG…", ex.export_png, "Ctrl+E", "Save the map view as PNG", menu="file",
                        section="export"))
    host.add(ActionSpec("Export steps as GIF / &images…", ex.export_animation, "Ctrl+Shift+E",
                        "Export a step range as an animated GIF or an image sequence", menu="file", section="export"))
    return ex


register(FeatureSpec("export", install))
register(FeatureSpec("dataset_export", DatasetExportController))
