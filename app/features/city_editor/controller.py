"""City editor mode: the toolbar toggle E, paint tools with one-key shortcuts, brush size, snapping, a
live cursor preview, the New city dialog, Resize canvas, and import/export of the city as map YAML.

How it fits (docs/city-editor.md): the tools (app/features/city_editor/tools.py) edit the session's city only through
commands (core/studio/city_edit.py), so every stroke is one step in Edit ▸ Undo and the History panel; this
controller redraws the map whenever the project's city object changed (after a stroke, an undo, a redo, a New
city), with the derived layers (mid lanes, intersections) and, in editor mode, the lanes of the lane graph; the
Problems panel (the problems feature's service) re-checks the city after each change. Editing pauses playback; the recording stays as it was made until Apply / Reset re-simulates the edited
city (core/studio/apply.py).

Keys while the mode is on (netedit-like one-key modes): W walking street, T traffic street, C crossing, 1–5 House,
Gas Station, Office, Garage, Store, X erase, R rectangle fill, K eyedropper, M select/move block, ',' and '.' brush
size, S snapping, Escape cancels a stroke or puts the tool down.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets
from scipy import ndimage

from app.features.city_editor.tools import MoveTool, PaintTool, PickTool, RectTool
from app.shell.features import FeatureController, FeatureHost
from app.shell.menus import MenuSpec
from core.base.errors import LogiCityError
from core.map.derived import CityBuilder
from core.map.edit import resized
from core.map.io import load_map, save_map
from core.map.model import CityMap
from core.map.reference import import_reference_map
from core.studio import city_edit
from core.studio.city_edit import ReplaceCity
from core.view.city_draft import PAINT_RGB
from core.view.colouring import intersection_rgba, semantic_rgb
from widgets.city_editor.dialogs import NewCityDialog, ResizeDialog
from widgets.map_tools import redraw_city

#: (tool key, menu text, shortcut); paint kinds are core/map/edit.py's, "traffic" follows the stroke direction
TOOLS: tuple[tuple[str, str, str], ...] = (
    ("walking", "&Walking street", "W"), ("traffic", "&Traffic street", "T"), ("crossing", "&Crossing", "C"),
    ("House", "House", "1"), ("Gas Station", "Gas station", "2"), ("Office", "Office", "3"),
    ("Garage", "Garage", "4"), ("Store", "Store", "5"), ("empty", "Erase (to empty)", "X"),
    ("rect", "&Rectangle fill", "R"), ("pick", "Eyedropper", "K"), ("move", "Select / &move block", "M"),
)
#: brush sizes a tool starts with (cells): a street's usual width, a small brush for the rest
DEFAULT_SIZES = {"traffic": 11, "walking": 5, "crossing": 5, "empty": 3}
LANES_RGBA = (40, 120, 255, 150)
ISOLATED_RGBA = (255, 120, 0, 140)


def lanes_rgba(city: CityMap) -> np.ndarray:
    """The editor's graph overlay: the lane lines of the lane graph (blue; none when the lanes cannot be built, the
    Problems panel says why) and the walking areas cut off from the main walking network (orange)."""
    out = np.zeros(city.shape + (4,), np.uint8)
    labels, n = ndimage.label(city.walkable)
    if n > 1:
        sizes = np.bincount(labels.ravel())
        sizes[0] = 0
        out[(labels != 0) & (labels != int(np.argmax(sizes)))] = ISOLATED_RGBA
    try:
        mask = city.lane_graph.lane_cells()
    except LogiCityError:
        return out
    out[mask] = LANES_RGBA
    return out


class _Layers:
    """A window of a city's layers (what :func:`semantic_rgb` reads), to recolour only the cells an edit changed."""

    def __init__(self, city: CityMap, rows: slice, cols: slice) -> None:
        self.street = city.street[rows, cols]
        self.midline = city.midline[rows, cols]
        self.building = city.building[rows, cols]
        self.shape = self.street.shape


def redraw(view: Any, city: CityMap) -> None:
    """The map layers of ``city`` after an edit: street codes with mid lanes, buildings, intersections.

    Only what changed since the city shown is recoloured (the bounding box of the changed cells; the intersection
    overlay only when the intersections changed): a stroke costs its own size, not the city's."""
    old = view.city
    img = view.map_item.image
    if old is None or old.shape != city.shape or img is None or img.shape[:2] != city.shape:
        redraw_city(view, city, semantic_rgb(city), intersection_rgba(city))
        return
    diff = (old.street != city.street) | (old.building != city.building) | (old.midline != city.midline)
    rgb = img
    if diff.any():
        rows, cols = np.flatnonzero(diff.any(axis=1)), np.flatnonzero(diff.any(axis=0))
        rs, cs = slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1)
        rgb = img.copy()
        # semantic_rgb reads only a city's shape and layers, which _Layers has; core annotates it with CityMap
        rgb[rs, cs] = semantic_rgb(_Layers(city, rs, cs))  # type: ignore[arg-type]
    same_inter = np.array_equal(old.intersections, city.intersections)
    inter = view.inter_item.image if same_inter and view.inter_item.image is not None else intersection_rgba(city)
    redraw_city(view, city, rgb, inter)


def read_city_file(path: str | Path) -> CityMap:
    """A city from a map YAML: our format (docs/formats.md "City map") or the reference's (imported as before)."""
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="replace")
    if "Traffic Street" in text or "Walking Street" in text or "grid_size" in text:
        return import_reference_map(p)
    return load_map(p)


class CityEditorController(FeatureController):
    """See the module docstring."""

    modeChanged = QtCore.Signal(bool)

    def __init__(self, host: FeatureHost) -> None:
        super().__init__(host.shell.dialog_parent)
        self.host = host
        self.shell = host.shell
        self.session = host.session
        self.map = host.map
        self.on = False
        self.kind = "walking"            # the current paint kind (the rectangle fills with it)
        self.tool_key = "walking"
        self.snap = True
        self.show_lanes = True
        self.sizes: dict[str, int] = {}
        self.shown_city: CityMap | None = None
        # the lanes overlay follows the map layers in the next event-loop pass (the lane graph is the slowest part
        # to derive; the stroke's cells, mid lanes and junctions are on screen first)
        self._lanes_timer = QtCore.QTimer(self)
        self._lanes_timer.setSingleShot(True)
        self._lanes_timer.timeout.connect(self.draw_lanes)
        self.mode_action = self._checkable("&City editor", self.toggle, "E",
                                           "Edit the city: paint streets and buildings")
        self.mode_action.setObjectName("cityEditorMode")
        self.tool_actions: dict[str, QtGui.QAction] = {}
        group = QtGui.QActionGroup(self)
        for key, text, sc in TOOLS:
            act = self._checkable(text, lambda k=key: self.select_tool(k), sc, text.replace("&", ""))
            act.setIcon(self._icon(key))
            group.addAction(act)
            self.tool_actions[key] = act
        self.size_spin = QtWidgets.QSpinBox()
        self.size_spin.setObjectName("cityBrushSize")
        self.size_spin.setRange(1, 61)
        self.size_spin.setPrefix("brush ")
        self.size_spin.setToolTip("Brush size in cells (, smaller  . larger)")
        self.size_spin.valueChanged.connect(self._size_changed)
        smaller = host.action("Smaller brush", lambda: self.size_spin.stepBy(-1), ",", "Smaller brush")
        larger = host.action("Larger brush", lambda: self.size_spin.stepBy(1), ".", "Larger brush")
        self.snap_action = self._checkable("&Snap strokes to a line", self._toggle_snap, "S",
                                           "A stroke keeps to the row or column it starts on")
        self.snap_action.setChecked(True)
        self.lanes_action = self._checkable("Show &lanes and cut-off sidewalks", self._toggle_lanes, None,
                                            "Draw the lane graph's lanes (blue) and walking areas cut off from the "
                                            "walking network (orange) over the city while editing")
        self.lanes_action.setChecked(True)
        self.new_action = host.action("&New city…", self.new_city_dialog, "Ctrl+Shift+N",
                                      "Replace the city by a generated one (undoable)")
        self.resize_action = host.action("Resize &canvas…", self.resize_dialog, None, "Change the city's size")
        self.import_action = host.action("&Import city…", self.import_dialog, None,
                                         "Replace the city by a map YAML (ours or the reference's)")
        self.export_action = host.action("E&xport city…", self.export_dialog, None, "Save the city as map YAML")
        self.mode_only = list(self.tool_actions.values()) + [smaller, larger, self.snap_action]
        host.add_to_menu("city", self.mode_action, section="mode")
        tools_menu = host.menu("city/tools", MenuSpec("city/tools", "&Tools"), section="mode")
        for act in self.tool_actions.values():
            tools_menu.addAction(act)
        host.add_to_menu("city", smaller, larger, self.snap_action, self.lanes_action, section="tools")
        host.add_to_menu("city", self.new_action, self.resize_action, self.import_action, self.export_action,
                         section="city")
        # its own row: next to the playback bar it would make the window wider
        self.toolbar = host.toolbar("city_editor", "City Editor", new_row=True)
        self.toolbar.addAction(self.mode_action)
        self.toolbar.addSeparator()
        for act in self.tool_actions.values():
            self.toolbar.addAction(act)
        self.toolbar.addWidget(self.size_spin)
        self.toolbar.addAction(self.snap_action)
        self.toolbar.addAction(self.new_action)
        self.map.tools.toolChanged.connect(self._tool_changed)
        self.session.stack.events.index.connect(lambda e: self.sync())
        self.session.events.project.connect(lambda e: self._project_opened())
        self._set_mode_actions(False)
        self.select_tool("walking", activate=False)

    def status(self, text: str, ms: int = 6000) -> None:
        self.shell.status(text, ms)

    # ---- mode ---------------------------------------------------------------------------------------------------
    def _checkable(self, text: str, slot: Any, shortcut: str | None, tip: str) -> QtGui.QAction:
        """A checkable action whose slot runs on the user's trigger only (not on a programmatic setChecked)."""
        act = self.host.action(text, slot, shortcut, tip)
        act.setCheckable(True)
        return act

    def _icon(self, key: str) -> QtGui.QIcon:
        pix = QtGui.QPixmap(16, 16)
        pix.fill(QtCore.Qt.GlobalColor.transparent)
        p = QtGui.QPainter(pix)
        if key in PAINT_RGB:
            p.setBrush(QtGui.QColor(*PAINT_RGB[key]))
            p.setPen(QtGui.QColor(30, 30, 30))
            p.drawRect(1, 1, 13, 13)
        else:
            p.setPen(QtGui.QPen(QtGui.QColor(30, 30, 30), 2))
            p.drawText(pix.rect(), QtCore.Qt.AlignmentFlag.AlignCenter, {"rect": "▭", "pick": "✎", "move": "✥"}[key])
        p.end()
        return QtGui.QIcon(pix)

    def _set_mode_actions(self, on: bool) -> None:
        for act in self.mode_only:
            act.setEnabled(on)
        self.size_spin.setEnabled(on)

    def toggle(self) -> None:
        self.set_mode(self.mode_action.isChecked())

    def set_mode(self, on: bool) -> None:
        """City editor mode on/off: the tools take the left mouse button; playback pauses."""
        if on and self.session.project is None:
            self.status("Open a city first.")
            on = False
        if on and self.session.read_only is not None:
            self.status("A read-only replay cannot be edited: File ▸ Save project as… first.", 10000)
            on = False
        self.on = on
        self.mode_action.setChecked(on)
        self._set_mode_actions(on)
        if on:
            self.host.playback.pause()
            self.select_tool(self.tool_key)
            self.sync(force=True)
            self.host.problems.show_panel()
            self.status("City editor: W/T/C streets, 1–5 buildings, X erase, R rectangle, K eyedropper, "
                                    "M move block; E leaves.", 10000)
        else:
            self.map.tools.set_tool(None)
            self.map.tools.set_overlay(None)
            self.map.tools.clear_preview()
        self.modeChanged.emit(on)

    def _tool_changed(self, tool: Any) -> None:
        if tool is None and self.on:       # Escape put the tool down: the map pans again, the mode stays
            for act in self.tool_actions.values():
                act.setChecked(False)

    # ---- tools --------------------------------------------------------------------------------------------------
    def brush_size(self, kind: str) -> int:
        return self.sizes.get(kind, DEFAULT_SIZES.get(kind, 3))

    def _size_changed(self, value: int) -> None:
        if self.tool_key in ("rect", "pick", "move"):
            return
        self.sizes[self.tool_key] = int(value)

    def _toggle_snap(self) -> None:
        self.snap = self.snap_action.isChecked()

    def _toggle_lanes(self) -> None:
        self.show_lanes = self.lanes_action.isChecked()
        if self.on:
            self.sync(force=True)

    def select_tool(self, key: str, activate: bool = True) -> None:
        """Pick up a tool (a paint kind, "rect", "pick" or "move"); turns the mode on when it is off."""
        self.tool_key = key
        if key not in ("rect", "pick", "move"):
            self.kind = key
            self.size_spin.blockSignals(True)
            self.size_spin.setValue(self.brush_size(key))
            self.size_spin.blockSignals(False)
        self.tool_actions[key].setChecked(True)
        if not activate:
            return
        if not self.on:
            self.set_mode(True)
            return
        tool = {"rect": RectTool, "pick": PickTool, "move": MoveTool}.get(key)
        self.map.tools.set_tool(tool(self) if tool is not None else PaintTool(self, key))
        self.map.setFocus()        # Escape then reaches the tool (not the window's Deselect)

    # ---- edits and redraws ----------------------------------------------------------------------------------------
    def execute(self, command: Any) -> None:
        self.session.execute(command)

    def _project_opened(self) -> None:
        self.shown_city = self.session.project.config.city if self.session.project is not None else None
        if self.on:
            self.map.tools.set_tool(None)
            self.set_mode(False)

    def sync(self, force: bool = False) -> None:
        """Redraw when the project's city is another object than the one shown (an edit, undo, redo)."""
        if self.session.project is None:
            return
        city = self.session.project.config.city
        if city is self.shown_city and not force:
            return
        self.shown_city = city
        redraw(self.map, city)
        if self.show_lanes and self.on:
            self._lanes_timer.start(0)
        else:
            self._lanes_timer.stop()
            self.map.tools.set_overlay(None)

    @property
    def lanes_pending(self) -> bool:
        return self._lanes_timer.isActive()

    def draw_lanes(self) -> None:
        """The lane graph's lanes over the shown city (editor mode, Show lanes)."""
        self._lanes_timer.stop()
        if self.shown_city is not None and self.show_lanes and self.on:
            self.map.tools.set_overlay(lanes_rgba(self.shown_city))

    # ---- whole-city commands ------------------------------------------------------------------------------------
    def new_city_dialog(self) -> None:
        if self.session.project is None:
            return
        dlg = NewCityDialog(self.shell.dialog_parent, seed=int(self.session.project.seed))
        if dlg.exec() == QtWidgets.QDialog.DialogCode.Accepted and dlg.city is not None:
            self.replace(dlg.city, "New city")

    def replace(self, city: CityMap, text: str) -> None:
        self.execute(ReplaceCity(city, text))
        self.map.fit()

    def resize_dialog(self) -> None:
        if self.session.project is None:
            return
        city = self.session.project.config.city
        dlg = ResizeDialog(city.height, city.width, self.shell.dialog_parent)
        if dlg.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            h, w, anchor = dlg.result_size()
            self.resize(h, w, anchor)

    def resize(self, height: int, width: int, anchor: tuple[int, int] = (0, 0)) -> None:
        draft = resized(city_edit.draft_of(self.session), height, width, anchor)
        self.replace(CityBuilder().build(draft), f"Resize canvas to {height} × {width}")

    def import_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.shell.dialog_parent, "Import city", "",
                                                        "Map YAML (*.yaml *.yml);;All files (*)")
        if path:
            self.import_city(path)

    def import_city(self, path: str | Path) -> bool:
        try:
            city = read_city_file(path)
        except LogiCityError as exc:
            self.shell.show_error("Cannot import the city", str(exc.file or path), exc.message)
            return False
        except OSError as exc:
            self.shell.show_error("Cannot import the city", str(path), str(exc))
            return False
        self.replace(city, f"Import city {Path(path).name}")
        return True

    def export_dialog(self) -> None:
        if self.session.project is None:
            return
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.shell.dialog_parent, "Export city", "city.yaml",
                                                        "Map YAML (*.yaml *.yml)")
        if path:
            self.export_city(path)

    def export_city(self, path: str | Path) -> None:
        try:
            save_map(self.session.project.config.city, path)
        except OSError as exc:
            self.shell.show_error("Cannot export the city", str(path), str(exc))
            return
        self.status(f"Exported the city to {path}", 8000)

    def shutdown(self, wait_ms: int) -> bool:
        if self.on:     # put the tool down: its event filter on the map must not outlive the closing window
            self.set_mode(False)
        return True

