"""Small pytest-qt helpers shared by the widget and window tests."""
from __future__ import annotations


def shown(qtbot, widget, width: int, height: int):
    """``widget`` handed to ``qtbot`` (closed with the test), resized to ``width`` x ``height``, shown and exposed."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def paint_spy():
    """An event filter to install on widgets: ``painted`` lists the objects that received a paint event, in order,
    and ``rects`` the rectangle each was asked to paint (tests count paints, never time them)."""
    from PySide6 import QtCore

    class PaintSpy(QtCore.QObject):
        def __init__(self) -> None:
            super().__init__()
            self.painted: list[QtCore.QObject] = []
            self.rects: list[QtCore.QRect] = []

        def eventFilter(self, obj, ev) -> bool:  # noqa: N802 (Qt name)
            if ev.type() == QtCore.QEvent.Type.Paint:
                self.painted.append(obj)
                self.rects.append(QtCore.QRect(ev.rect()))
            return False

    return PaintSpy()
