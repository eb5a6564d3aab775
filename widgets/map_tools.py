"""Mouse tools on the map view (the city editor's brushes, the agent editor's start/goal picking) and the overlays
they draw: a cursor preview and a highlight of cells (the Problems panel's "show me").

Why a separate module and an event filter: the map view pans with the left button and selects agents on click
(pyqtgraph's ViewBox handles both). While a tool is active the left button belongs to the tool instead, so the
host filters the viewport's mouse events *before* the scene sees them, turns them into cell coordinates and hands
them to the tool (and emits them as signals for whoever prefers those). The middle button still pans and the
wheel still zooms, as in netedit and image editors; Escape ends a drag (cancelling it) or, with no drag, puts the
tool down. With no tool the events pass untouched: the view behaves exactly as before.

A tool is any object with the :class:`MapTool` methods (all optional: a missing one is skipped).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

Qt = QtCore.Qt


@dataclass(frozen=True)
class CellEvent:
    """A mouse event in map cells: ``row``/``col`` (may lie outside the map: ``inside`` says), the exact position in
    cells (``y``, ``x``), the buttons held and the keyboard modifiers."""

    row: int
    col: int
    y: float
    x: float
    inside: bool
    buttons: Qt.MouseButton
    modifiers: Qt.KeyboardModifier

    @property
    def cell(self) -> tuple[int, int]:
        return (self.row, self.col)

    @property
    def shift(self) -> bool:
        return bool(self.modifiers & Qt.KeyboardModifier.ShiftModifier)

    @property
    def ctrl(self) -> bool:
        return bool(self.modifiers & Qt.KeyboardModifier.ControlModifier)


class MapTool:
    """What a tool may implement (each a no-op here). ``press``/``drag``/``release`` get the left-button stroke;
    ``hover`` every move without a stroke (None: the mouse left the map); ``cancel`` an Escape during a stroke;
    ``activated``/``deactivated`` when the host picks the tool up or puts it down."""

    name = "tool"
    cursor = Qt.CursorShape.CrossCursor

    def activated(self, host: "MapToolHost") -> None: ...
    def deactivated(self) -> None: ...
    def press(self, ev: CellEvent) -> None: ...
    def drag(self, ev: CellEvent) -> None: ...
    def release(self, ev: CellEvent) -> None: ...
    def hover(self, ev: CellEvent | None) -> None: ...
    def cancel(self) -> None: ...


class MapToolHost(QtCore.QObject):
    """The active tool of one :class:`widgets.map_view.MapView` (``view.tools``) and its overlays.

    Signals carry :class:`CellEvent`s (``cellHovered`` may carry None); ``toolChanged`` the new tool or None.
    """

    cellPressed = QtCore.Signal(object)
    cellDragged = QtCore.Signal(object)
    cellReleased = QtCore.Signal(object)
    cellHovered = QtCore.Signal(object)
    toolChanged = QtCore.Signal(object)

    def __init__(self, view: Any) -> None:
        super().__init__(view)
        self.view = view
        self._tool: Any = None
        self._stroke = False          # the left button went down with the tool active
        self._last_cell: tuple[int, int] | None = None
        view.viewport().installEventFilter(self)
        view.installEventFilter(self)
        self._preview: list[QtWidgets.QGraphicsRectItem] = []
        self.highlight_item = pg.ScatterPlotItem(pxMode=False, symbol="s", size=1.0,
                                                 pen=pg.mkPen(255, 64, 129, width=2.5),
                                                 brush=pg.mkBrush(255, 64, 129, 70))
        self.highlight_item.setZValue(20)
        self.highlight_item.setVisible(False)
        view.vb.addItem(self.highlight_item)
        self.highlighted: tuple[tuple[int, int], ...] = ()
        self.overlay_item = pg.ImageItem(axisOrder="row-major")   # a tool's translucent layer (e.g. lanes)
        self.overlay_item.setZValue(2.5)
        self.overlay_item.setVisible(False)
        view.vb.addItem(self.overlay_item)

    # ---- the tool ---------------------------------------------------------------------------------------------
    @property
    def tool(self) -> Any:
        return self._tool

    @property
    def active(self) -> bool:
        return self._tool is not None

    @property
    def stroking(self) -> bool:
        return self._stroke

    def set_tool(self, tool: Any) -> None:
        """Pick up ``tool`` (None: put the current one down; the view pans and selects again)."""
        if tool is self._tool:
            return
        old = self._tool
        if old is not None:
            if self._stroke:
                self._call(old, "cancel")
            self._stroke = False
            self._call(old, "deactivated")
        self._tool = tool
        self.clear_preview()
        vp = self.view.viewport()
        if tool is not None:
            vp.setCursor(getattr(tool, "cursor", Qt.CursorShape.CrossCursor))
            self._call(tool, "activated", self)
        else:
            vp.unsetCursor()
        self.toolChanged.emit(tool)

    @staticmethod
    def _call(tool: Any, name: str, *args) -> None:
        fn = getattr(tool, name, None)
        if fn is not None:
            fn(*args)

    # ---- coordinates --------------------------------------------------------------------------------------------
    def cell_event(self, pos: QtCore.QPointF, buttons, modifiers) -> CellEvent:
        """The cell under viewport position ``pos``."""
        p = self.view.vb.mapSceneToView(self.view.mapToScene(pos.toPoint()))
        y, x = float(p.y()), float(p.x())
        r, c = int(math.floor(y)), int(math.floor(x))
        city = self.view.city
        inside = city is not None and 0 <= r < city.height and 0 <= c < city.width
        return CellEvent(r, c, y, x, inside, buttons, modifiers)

    def viewport_pos_of_cell(self, row: float, col: float) -> QtCore.QPoint:
        """Viewport pixel of a cell centre (tests press there)."""
        return self.view.mapFromScene(self.view.scene_pos_of_cell(row, col))

    # ---- events -------------------------------------------------------------------------------------------------
    def eventFilter(self, obj: QtCore.QObject, ev: QtCore.QEvent) -> bool:  # noqa: N802 (Qt name)
        # getattr: when a closed map view is garbage-collected, Python clears this object's attributes before Qt
        # destroys the viewport it filters, and Qt still sends that viewport's last events here
        if getattr(self, "_tool", None) is None:
            return False
        t = ev.type()
        E = QtCore.QEvent.Type
        if obj is self.view and t == E.ShortcutOverride and ev.key() == Qt.Key.Key_Escape:
            ev.accept()              # Escape belongs to the tool, not to the window's Deselect shortcut
            return True
        if obj is self.view and t == E.KeyPress:
            if ev.key() == Qt.Key.Key_Escape:
                self.escape()
                return True
            return False
        if obj is not self.view.viewport():
            return False
        if t in (E.MouseButtonPress, E.MouseButtonDblClick):
            if ev.button() != Qt.MouseButton.LeftButton:
                return False         # middle button pans, right button zooms (the ViewBox's own drags)
            self.view.setFocus(Qt.FocusReason.MouseFocusReason)
            ce = self.cell_event(ev.position(), ev.buttons(), ev.modifiers())
            if not self._stroke:
                self._stroke = True
                self._last_cell = ce.cell
                self._call(self._tool, "press", ce)
                self.cellPressed.emit(ce)
            return True
        if t == E.MouseMove:
            ce = self.cell_event(ev.position(), ev.buttons(), ev.modifiers())
            if self._stroke:
                if ce.cell != self._last_cell:
                    self._last_cell = ce.cell
                    self._call(self._tool, "drag", ce)
                    self.cellDragged.emit(ce)
                return True
            self._call(self._tool, "hover", ce)
            self.cellHovered.emit(ce)
            return False             # the map's hover read-out keeps working
        if t == E.MouseButtonRelease:
            if ev.button() != Qt.MouseButton.LeftButton or not self._stroke:
                return False
            ce = self.cell_event(ev.position(), ev.buttons(), ev.modifiers())
            self._stroke = False
            self._call(self._tool, "release", ce)
            self.cellReleased.emit(ce)
            return True
        if t == E.Leave and not self._stroke:
            self._call(self._tool, "hover", None)
            self.cellHovered.emit(None)
        return False

    def escape(self) -> None:
        """Escape: cancel the stroke in progress, or put the tool down."""
        if self._stroke:
            self._stroke = False
            self._call(self._tool, "cancel")
            self.clear_preview()
        else:
            self.set_tool(None)

    # ---- overlays -----------------------------------------------------------------------------------------------
    def set_preview(self, rects: Iterable[tuple[int, int, int, int]], rgba: Sequence[int] = (255, 255, 255, 90),
                    outline: Sequence[int] = (255, 255, 255, 230)) -> None:
        """Show translucent rectangles ``(top, left, bottom, right)`` (inclusive cells): the brush under the cursor,
        a rectangle being dragged, a block being moved."""
        rects = list(rects)
        while len(self._preview) < len(rects):
            item = QtWidgets.QGraphicsRectItem()
            item.setZValue(19)
            self.view.vb.addItem(item)
            self._preview.append(item)
        pen = QtGui.QPen(QtGui.QColor(*outline), 1.5)
        pen.setCosmetic(True)
        brush = QtGui.QBrush(QtGui.QColor(*rgba))
        for item, (r0, c0, r1, c1) in zip(self._preview, rects):
            item.setRect(QtCore.QRectF(c0, r0, c1 - c0 + 1, r1 - r0 + 1))
            item.setPen(pen)
            item.setBrush(brush)
            item.setVisible(True)
        for item in self._preview[len(rects):]:
            item.setVisible(False)

    def clear_preview(self) -> None:
        for item in self._preview:
            item.setVisible(False)

    @property
    def preview_rects(self) -> list[tuple[int, int, int, int]]:
        """The rectangles of the visible preview (what tests and screenshots check)."""
        out = []
        for item in self._preview:
            if item.isVisible():
                r = item.rect()
                out.append((int(r.top()), int(r.left()), int(r.bottom()) - 1, int(r.right()) - 1))
        return out

    def highlight(self, cells: Iterable[Sequence[int]]) -> None:
        """Mark these (row, col) cells until the next call (empty: none)."""
        arr = np.asarray(list(cells), float).reshape(-1, 2)
        self.highlighted = tuple((int(r), int(c)) for r, c in arr)
        if not len(arr):
            self.highlight_item.setVisible(False)
            return
        self.highlight_item.setData(x=arr[:, 1] + 0.5, y=arr[:, 0] + 0.5)
        self.highlight_item.setVisible(True)

    def set_overlay(self, rgba: np.ndarray | None) -> None:
        """A translucent ``[H, W, 4]`` layer over the map (None: none), e.g. the city editor's lanes."""
        if rgba is None:
            self.overlay_item.setVisible(False)
            return
        self.overlay_item.setImage(rgba, autoLevels=False, levels=(0, 255))
        self.overlay_item.setVisible(True)


# ---- redrawing an edited city -------------------------------------------------------------------------------------
def paint_cells(view: Any, r0: int, c0: int, rgb: np.ndarray) -> None:
    """Recolour the cells from (r0, c0) with ``rgb`` (``[h, w, 3]`` uint8) in the shown map image at once: the
    instant feedback of a stroke before the derived layers are settled."""
    img = view.map_item.image
    if img is None:
        return
    h, w = rgb.shape[:2]
    img[r0:r0 + h, c0:c0 + w] = rgb
    view.map_item.updateImage()


def redraw_city(view: Any, city: Any, rgb: np.ndarray, inter_rgba: np.ndarray) -> None:
    """Show an edited ``city`` (its colours ``rgb`` and intersection overlay given): same size — the view keeps its
    place and the agents drawn; another size (a resized canvas) — a fresh :meth:`set_city`."""
    old = view.city
    if old is None or tuple(old.shape) != tuple(city.shape):
        view.set_city(city)
        return
    view.city = city
    view.map_item.setImage(np.ascontiguousarray(rgb), autoLevels=False, levels=(0, 255))
    view.inter_item.setImage(inter_rgba, autoLevels=False, levels=(0, 255))
    if getattr(view, "_renderer", None) is not None:   # icon art is composed on the city: make it again
        view._renderer = None
        view._last_frame = None
        if view.scene_data is not None and view.style == "icons":
            view.show_scene(view.scene_data)
