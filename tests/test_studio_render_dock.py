"""The Render dock is docked in the studio and an accepted icon shows in the map view's icon art at once."""
from __future__ import annotations

import numpy as np
from PIL import Image

from tests.test_studio_gui import _close, _open_window


def test_render_dock_accept_updates_map_icons(qtbot, tmp_path):
    win = _open_window(qtbot, tmp_path / "studio.ini")
    try:
        assert "render" in win.docks and win.render_dock is not None
        assert win.docks["render"].toggleViewAction() in win.docks_menu.actions()
        win.actions_by_name["icons"].trigger()          # icon art on: the map view builds its renderer
        qtbot.waitUntil(lambda: getattr(win.map, "_renderer", None) is not None, timeout=10_000)
        renderer = win.map._renderer
        assert not renderer.icons.from_library["ambulance"]
        dock = win.render_dock
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
        _close(win)
