"""The layout fence (widgets/layout_fence.py): a fenced label whose text changes repaints itself only, and looks as
it did transparent over its panel."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402

from tests.support.qt import paint_spy  # noqa: E402
from widgets.layout_fence import fenced  # noqa: E402


def panel(qtbot, transparent: bool = False):
    w = QtWidgets.QWidget()
    qtbot.addWidget(w)
    lay = QtWidgets.QVBoxLayout(w)
    lay.addWidget(QtWidgets.QLabel("above"))
    label = QtWidgets.QLabel("Steps 0–120 (shown step 40 of 120): 3 agents reached their goals")
    label.setWordWrap(True)
    area = fenced(label, lines=3)
    if transparent:   # a fence without a background of its own: the panel is painted beneath it
        for x in (area, area.viewport(), label):
            x.setAutoFillBackground(False)
        area.setStyleSheet("QScrollArea { background: transparent; } QScrollArea > QWidget > QWidget "
                           "{ background: transparent; }")
    lay.addWidget(area)
    lay.addStretch(1)
    w.resize(300, 160)
    w.show()
    qtbot.waitExposed(w)
    return w, label




def test_a_fenced_label_looks_as_over_its_panel_and_a_new_text_repaints_it_alone(qtbot):
    w, label = panel(qtbot)
    old, old_label = panel(qtbot, transparent=True)
    for text in ("Steps 0–120 (shown step 41 of 120)", "one\ntwo\nthree\nfour lines: a scroll bar", ""):
        label.setText(text)
        old_label.setText(text)
        qtbot.wait(20)
        assert w.grab().toImage() == old.grab().toImage(), text
    spy = paint_spy()
    app = QtWidgets.QApplication.instance()
    app.installEventFilter(spy)
    try:
        label.setText("Steps 0–120 (shown step 42 of 120)")
        qtbot.waitUntil(lambda: label in spy.painted, timeout=2000)
        qtbot.wait(20)
    finally:
        app.removeEventFilter(spy)
    assert w not in spy.painted and spy.painted.count(label) == 1
