"""Small pytest-qt helpers shared by the widget and window tests."""
from __future__ import annotations


def shown(qtbot, widget, width: int, height: int):
    """``widget`` handed to ``qtbot`` (closed with the test), resized to ``width`` x ``height``, shown and exposed."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget
