"""A fence against re-layouts of the whole window: a label whose text changes at every step (the shown step, a
count) re-lays out every widget up to the top-level window — Qt asks each parent again, since any size hint may
have changed — and the main window then re-lays out all its docks (making animation objects for each dock) at
every step. :func:`fenced` puts such a widget in a frameless scroll area of fixed height: the request stops at its
viewport, which the label fills (bench/gui.py's seek figures include it). The fence fills its background with the
window colour (what a panel of a dock shows beneath it), so a new text repaints the label only.
"""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


def fenced(widget: QtWidgets.QWidget, lines: int = 1) -> QtWidgets.QScrollArea:
    """``widget`` in a frameless scroll area ``lines`` text lines high (a vertical scroll bar appears only if its
    text needs more); add the returned area to the layout instead of the widget."""
    area = QtWidgets.QScrollArea()
    area.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
    area.setWidgetResizable(True)
    area.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setVerticalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    area.setWidget(widget)
    m = widget.contentsMargins()
    area.setFixedHeight(widget.fontMetrics().lineSpacing() * max(1, lines) + m.top() + m.bottom() + 4)
    area.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)
    # opaque, in the window colour its parent shows beneath it (a panel of a dock): a new text repaints the label
    # alone, not the panel and the dock under it (a transparent fence makes Qt paint them at every step)
    for w in (area, area.viewport(), widget):
        w.setBackgroundRole(QtGui.QPalette.ColorRole.Window)
        w.setAutoFillBackground(True)
    area.setStyleSheet("QScrollArea > QWidget > QScrollBar { background: transparent; }")   # the scroll bar's own look
    return area
