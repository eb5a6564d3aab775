"""The city editor's dialogs (widgets/city_editor/dialogs.py): New city previews the generator's city for the values set
and refuses impossible ones with the generator's message; Resize canvas computes the anchor offset."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402

from widgets.city_editor.dialogs import NewCityDialog, ResizeDialog  # noqa: E402


def test_new_city_preview_follows_the_values(qtbot):
    dlg = NewCityDialog(seed=3)
    qtbot.addWidget(dlg)
    ok = dlg.buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
    assert dlg.city is not None and dlg.city.shape == (241, 241) and ok.isEnabled()
    assert not dlg.preview.pixmap().isNull()
    dlg.block_rows.setValue(2)
    dlg.block_cols.setValue(3)
    qtbot.waitUntil(lambda: dlg.city is not None and dlg.city.shape == (103, 149), timeout=5000)
    assert "103 × 149" in dlg.size_label.text()
    dlg.traffic_width.setValue(4)                       # even: the generator refuses it
    qtbot.waitUntil(lambda: not ok.isEnabled(), timeout=5000)
    assert dlg.city is None and "traffic_width must be odd" in dlg.preview.text()
    dlg.traffic_width.setValue(5)
    qtbot.waitUntil(ok.isEnabled, timeout=5000)
    dlg.accept()
    assert dlg.result() == QtWidgets.QDialog.DialogCode.Accepted and dlg.city.generator["traffic_width"] == 5


def test_resize_dialog_anchor_offsets(qtbot):
    dlg = ResizeDialog(100, 80)
    qtbot.addWidget(dlg)
    dlg.height_box.setValue(120)
    dlg.width_box.setValue(60)
    assert dlg.result_size() == (120, 60, (0, 0))
    dlg.anchor.setCurrentText("Centre")
    assert dlg.result_size() == (120, 60, (10, -10))
    dlg.anchor.setCurrentText("Bottom right")
    assert dlg.result_size() == (120, 60, (20, -20))
