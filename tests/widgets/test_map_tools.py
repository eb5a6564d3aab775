"""The map's mouse-tool hook (widgets/map_tools.py): with a tool active, left-button strokes reach the tool in cell
coordinates through the real event loop instead of panning or selecting; Escape cancels a stroke, then puts the
tool down, and the view pans again."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.map.generate import generate_city  # noqa: E402
from tests.support.qt import shown  # noqa: E402
from widgets.map_tools import MapTool  # noqa: E402
from widgets.map_view import MapView  # noqa: E402

Qt = QtCore.Qt


class Recorder(MapTool):
    def __init__(self) -> None:
        self.log: list[tuple] = []

    def activated(self, host) -> None:
        self.log.append(("activated",))

    def deactivated(self) -> None:
        self.log.append(("deactivated",))

    def press(self, ev) -> None:
        self.log.append(("press", ev.cell, ev.inside))

    def drag(self, ev) -> None:
        self.log.append(("drag", ev.cell))

    def release(self, ev) -> None:
        self.log.append(("release", ev.cell))

    def hover(self, ev) -> None:
        self.log.append(("hover", None if ev is None else ev.cell))

    def cancel(self) -> None:
        self.log.append(("cancel",))


@pytest.fixture
def view(qtbot):
    v = shown(qtbot, MapView(), 500, 500)
    v.set_city(generate_city(0, blocks=(1, 1)))
    qtbot.wait(20)
    return v


def _pos(view, r, c):
    return view.tools.viewport_pos_of_cell(r, c)


def test_a_stroke_reaches_the_tool_in_cells_and_does_not_select(qtbot, view):
    clicked = []
    view.agentClicked.connect(clicked.append)
    tool = Recorder()
    pressed = []
    view.tools.cellPressed.connect(pressed.append)
    view.tools.set_tool(tool)
    vp = view.viewport()
    before = view.vb.viewRange()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=_pos(view, 5, 6))
    qtbot.mouseMove(vp, _pos(view, 5, 9))
    qtbot.mouseMove(vp, _pos(view, 8, 9))
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=_pos(view, 8, 9))
    assert tool.log[0] == ("activated",)
    assert ("press", (5, 6), True) in tool.log
    assert ("drag", (5, 9)) in tool.log and ("drag", (8, 9)) in tool.log
    assert tool.log[-1] == ("release", (8, 9))
    assert [e.cell for e in pressed] == [(5, 6)]
    assert clicked == []                       # the click went to the tool, not to agent selection
    assert view.vb.viewRange() == before       # and the drag did not pan


def test_escape_cancels_the_stroke_then_puts_the_tool_down(qtbot, view):
    tool = Recorder()
    changed = []
    view.tools.toolChanged.connect(changed.append)
    view.tools.set_tool(tool)
    vp = view.viewport()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=_pos(view, 3, 3))
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert tool.log[-1] == ("cancel",) and view.tools.active
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=_pos(view, 3, 3))
    assert ("release", (3, 3)) not in tool.log     # a cancelled stroke does not end in a release
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not view.tools.active and tool.log[-1] == ("deactivated",)
    assert changed == [tool, None]
    clicked = []
    view.agentClicked.connect(clicked.append)
    qtbot.mouseClick(vp, Qt.MouseButton.LeftButton, pos=_pos(view, 3, 3))
    qtbot.waitUntil(lambda: clicked == [-1])       # the normal click handling is back


def test_preview_and_highlight(qtbot, view):
    view.tools.set_preview([(2, 3, 4, 6)])
    assert view.tools.preview_rects == [(2, 3, 4, 6)]
    view.tools.clear_preview()
    assert view.tools.preview_rects == []
    view.tools.highlight([(1, 2), (3, 4)])
    assert view.tools.highlight_item.isVisible() and view.tools.highlighted == ((1, 2), (3, 4))
    view.tools.highlight([])
    assert not view.tools.highlight_item.isVisible()
