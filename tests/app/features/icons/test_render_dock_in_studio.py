"""The Render dock inside the studio: docked and fitting its tab area, an accepted icon shows in the map view's
icon art at once, a bad icon sidecar does not stop the studio, Generate without a model says how to configure one."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from tests.support.studio import close_window, open_window

pytest.importorskip("pytestqt")


def test_render_dock_accept_updates_map_icons(qtbot, tmp_path):
    win = open_window(qtbot, tmp_path / "studio.ini")
    try:
        assert "render" in win.docks and win.panel("render") is not None
        assert win.docks["render"].toggleViewAction() in win.docks_menu.actions()
        win.action("View", "Draw agents as icon art").trigger()          # icon art on: the map view builds its renderer
        qtbot.waitUntil(lambda: getattr(win.map, "_renderer", None) is not None, timeout=10_000)
        renderer = win.map._renderer
        assert not renderer.icons.from_library["ambulance"]
        dock = win.panel("render")
        img = Image.new("RGBA", (48, 84), (250, 20, 200, 255))
        rec = dock.library.add("ambulance", img, {"prompt": "test ambulance", "seed": 1})
        dock.semantic_combo.setCurrentIndex(dock.semantic_combo.findData("ambulance"))
        dock.gallery.reload()
        assert rec.id in dock.gallery.ids()
        dock.gallery.select([rec.id])
        with qtbot.waitSignal(dock.iconsChanged, timeout=5000):
            dock.gallery.set_selected_status("accepted")
        assert renderer.icons.from_library["ambulance"]
        assert renderer.icons.sources["ambulance"] == (rec.id,)
        sprite = renderer.sprite_rgba("ambulance", 0, 2)
        assert np.all(sprite[..., :3][sprite[..., 3] > 250] == (250, 20, 200))  # the accepted pixels are used
    finally:
        close_window(win)


def test_studio_opens_with_a_bad_icon_sidecar(qtbot, tmp_path, monkeypatch):
    """A hand-broken sidecar in the user's icon library does not stop the studio from opening: the gallery flags it."""
    data = tmp_path / "data"
    folder = data / "icons" / "walking_street"
    folder.mkdir(parents=True)
    Image.new("RGBA", (8, 8), (1, 2, 3, 255)).save(folder / "x1.png")
    (folder / "x1.json").write_text('{"seed": "abc"}')
    monkeypatch.setenv("LOGICITY_DATA_DIR", str(data))
    win = open_window(qtbot, tmp_path / "studio.ini", path=None)
    try:
        dock = win.panel("render")
        dock.set_semantic("walking_street")
        (item_id,) = dock.gallery.ids()
        assert "'seed'" in dock.gallery.list.item(0).toolTip() and str(folder / "x1.json") in \
            dock.gallery.list.item(0).toolTip()
    finally:
        close_window(win)


def _visible_rect(widget, viewport):
    from PySide6.QtCore import QPoint, QRect

    return QRect(widget.mapTo(viewport, QPoint(0, 0)), widget.size()).intersected(viewport.rect())


def test_render_dock_controls_and_results_visible_in_the_studio(qtbot, tmp_path):
    """At 1440×880, tabbed with Statistics, Generate/Cancel/progress and the results must show without scrolling
    (above the model help text, prompts and settings)."""
    from widgets.icons.icon_gallery import THUMB

    win = open_window(qtbot, tmp_path / "studio.ini", path=None)
    try:
        win.window.resize(1440, 880)
        qtbot.wait(50)
        dock_w = win.docks["render"]
        dock_w.show()
        dock_w.raise_()
        qtbot.waitUntil(lambda: dock_w.isVisible() and dock_w.height() >= 300, timeout=5000)
        dock = win.panel("render")
        viewport = dock_w.widget().viewport()
        for w in (dock.generate_btn, dock.cancel_btn, dock.progress_bar, dock.model_help_btn):
            assert _visible_rect(w, viewport).size() == w.size(), w
        assert dock.tabs.currentWidget() is dock.gallery
        assert _visible_rect(dock.gallery.list, viewport).height() >= THUMB
        assert win.docks["inspector"].isVisible() and win.docks["inspector"].height() >= 150
    finally:
        close_window(win)


def test_render_dock_fits_the_short_tab_area(qtbot, tmp_path):
    """Even in the 430×210 px the Statistics tab area has by default, the run controls are at the top."""
    from PySide6 import QtWidgets

    from core.render.library import IconLibrary
    from widgets.icons.render_dock import RenderDock

    dock = RenderDock(IconLibrary(tmp_path / "lib"), model=None)
    scroll = QtWidgets.QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setWidget(dock)
    qtbot.addWidget(scroll)
    scroll.resize(430, 210)
    scroll.show()
    qtbot.waitExposed(scroll)
    assert dock.minimumSizeHint().width() <= 420 and dock.minimumSizeHint().height() <= 210
    viewport = scroll.viewport()
    for w in (dock.generate_btn, dock.cancel_btn, dock.progress_bar, dock.model_summary, dock.model_help_btn):
        assert _visible_rect(w, viewport).size() == w.size(), w
    assert _visible_rect(dock.gallery.list, viewport).height() >= 40
    assert dock.model_summary.text() == "No model configured yet"
    assert "No text-to-image model is configured" in dock.model_info.text()  # the full help: Model tab
    dock.model_help_btn.click()
    assert dock.tabs.currentIndex() == 2


def test_generate_without_a_model_says_how_to_configure_one(studio, monkeypatch):
    monkeypatch.delenv("LOGICITY_ICON_MODEL", raising=False)
    win = studio
    win.docks["render"].show()
    rd = win.panel("render")
    rd.model_edit.setText("")
    rd.tabs.setCurrentIndex(0)
    rd.generate_btn.click()
    assert not rd.is_generating()
    text = rd.status_label.text()
    assert "no text-to-image model is configured" in text and "Model tab" in text and rd.status_label.isVisible()
    assert rd.tabs.currentWidget() is rd.model_tab
