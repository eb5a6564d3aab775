"""Help ▸ Keyboard shortcuts and About: the shortcut list is built from the window's actions themselves (menus
added by installers and dock toggles included), so a shortcut added anywhere is listed."""
from __future__ import annotations

import html
from typing import Iterable

from PySide6 import QtCore, QtGui, QtWidgets


def all_actions(window: QtWidgets.QMainWindow, named: Iterable[QtGui.QAction]) -> list[QtGui.QAction]:
    """Every action of ``window``: the ``named`` ones, then those added elsewhere, each once, in menu order."""
    seen: set[int] = set()
    out: list[QtGui.QAction] = []

    def add(a: QtGui.QAction) -> None:
        if id(a) in seen or a.isSeparator():
            return
        seen.add(id(a))
        out.append(a)
        menu = a.menu()
        if isinstance(menu, QtWidgets.QMenu):   # typed as a QObject: QtGui cannot name a QtWidgets class
            for sub in menu.actions():
                add(sub)

    for group in (named, window.menuBar().actions(), window.actions(), window.findChildren(QtGui.QAction)):
        for a in group:
            add(a)
    return out


def shortcut_rows(actions: Iterable[QtGui.QAction]) -> list[tuple[str, str, str]]:
    """(shortcut(s), action, description) of every action with a shortcut."""
    rows = []
    for a in actions:
        keys = ", ".join(s.toString(QtGui.QKeySequence.SequenceFormat.NativeText) for s in a.shortcuts())
        if keys:
            rows.append((keys, a.text().replace("&", "").rstrip("…").strip() or a.toolTip(), a.statusTip()))
    return rows


def shortcuts_html(rows: Iterable[tuple[str, str, str]]) -> str:
    body = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(n)}</td>"
                   f"<td style='color:gray'>{html.escape(d)}</td></tr>" for k, n, d in rows)
    return ("<table cellspacing=4>" + body + "</table><p>Mouse: drag the map to pan, wheel to zoom, click an "
            "agent to select it; drag or click the timeline to show a step.</p>")


def show_shortcuts(parent: QtWidgets.QWidget, text_html: str) -> QtWidgets.QDialog:
    dlg = QtWidgets.QDialog(parent)
    dlg.setWindowTitle("Keyboard shortcuts")
    dlg.setObjectName("shortcutsDialog")
    lay = QtWidgets.QVBoxLayout(dlg)
    text = QtWidgets.QTextBrowser()
    text.setHtml(text_html)
    lay.addWidget(text)
    bb = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
    bb.rejected.connect(dlg.reject)
    lay.addWidget(bb)
    dlg.resize(640, 560)
    dlg.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    dlg.open()
    return dlg


def show_about(parent: QtWidgets.QWidget) -> None:
    QtWidgets.QMessageBox.about(parent, "About LogiCity Studio",
                                "<b>LogiCity Studio</b><p>Design abstract cities, write first-order-logic "
                                "traffic rules, run and inspect the rule-governed simulation.</p>")
