"""The city map view: static semantics as one image, agents as one glyph batch, paths, goals and the field of view.

Why this structure (performance): the static map is a single ``ImageItem`` built once per city; a frame only
updates one glyph batch (all agents, oriented glyph per heading: ``widgets/map_glyphs.GlyphBatch``), one path
batch (a painter path per colour), one goals batch, a selection ring and one rectangle. No per-agent graphics
items are created or destroyed while playing. Glyphs are rasterised once per style into an atlas and blitted in
one call, with sizes recomputed from the zoom, so they keep their size in cells while a frame costs a few numpy
operations and one blit instead of a vector path (or a scatter spot record) per agent.

The view knows nothing about episodes: it draws a :class:`core.view.scene.MapScene` and reports clicks and
hovers as cells and agent indices.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from core.base.codes import Kind
from core.sim.events import FORCED_MARK_COLOUR
from core.view.colouring import intersection_rgba, semantic_at, semantic_rgb
from core.view.scene import MapScene, nearest_agent
from widgets.map_glyphs import GlyphBatch, PathBatch, joined_polyline_path
from widgets.map_tools import MapToolHost

#: Glyph sizes in cells (the reference draws car icons 6 cells and pedestrians 4 cells wide).
CAR_SIZE = 5.0
PED_SIZE = 3.6
SELECT_SIZE = 9.0
MARK_SIZE = 11.0
FORCED_SIZE = 7.0     # cells: the diamond around an agent whose action is forced by the user
GOAL_SIZE = 4.0
_NO_RGB = np.zeros((1, 3), np.uint8)   # outline batches take no colour


def _car_path(oriented: bool) -> QtGui.QPainterPath:
    """A car seen from above, pointing to +x, in the unit box (-0.5..0.5)."""
    p = QtGui.QPainterPath()
    if oriented:
        p.moveTo(-0.5, -0.3)
        p.lineTo(0.15, -0.3)
        p.lineTo(0.5, 0.0)
        p.lineTo(0.15, 0.3)
        p.lineTo(-0.5, 0.3)
        p.closeSubpath()
    else:
        p.addRoundedRect(QtCore.QRectF(-0.4, -0.4, 0.8, 0.8), 0.15, 0.15)
    return p


def _ped_path(oriented: bool) -> QtGui.QPainterPath:
    """A pedestrian: a disc, with a nose towards +x once it has moved."""
    p = QtGui.QPainterPath()
    if oriented:
        p.moveTo(0.5, 0.0)
        p.lineTo(0.05, -0.33)
        p.arcTo(QtCore.QRectF(-0.42, -0.42, 0.84, 0.84), 52.0, 256.0)
        p.closeSubpath()
    else:
        p.addEllipse(QtCore.QPointF(0.0, 0.0), 0.36, 0.36)
    return p


def _rotated(path: QtGui.QPainterPath, heading: int) -> QtGui.QPainterPath:
    """Rotate a +x glyph to a heading. Data y grows downward on screen (the view is inverted), so the angle is
    measured from +x towards +y (= rows)."""
    vec = {0: (0, -1), 1: (0, 1), 2: (-1, 0), 3: (1, 0)}[heading]  # (d_row, d_col)
    angle = math.degrees(math.atan2(vec[0], vec[1]))
    return QtGui.QTransform().rotate(angle).map(path)


def glyph_symbols() -> dict[tuple[int, int], QtGui.QPainterPath]:
    """(kind, heading) -> painter path; heading -1 gives the un-oriented glyph."""
    out = {}
    for kind, fn in ((int(Kind.CAR), _car_path), (int(Kind.PEDESTRIAN), _ped_path)):
        out[(kind, -1)] = fn(False)
        for h in range(4):
            out[(kind, h)] = _rotated(fn(True), h)
    return out


@dataclass(frozen=True)
class HoverInfo:
    row: int
    col: int
    semantic: str
    agent: int | None
    agent_name: str | None


class MapView(pg.GraphicsView):
    """Pan with the left mouse button, zoom with the wheel; click an agent to select it."""

    agentClicked = QtCore.Signal(int)      # -1: clicked on empty map
    hovered = QtCore.Signal(object)        # HoverInfo or None (left the map)
    painted = QtCore.Signal()              # a frame reached the screen (the viewport was painted)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent, background=pg.mkColor(40, 44, 52))
        # the view paints its whole background itself (an opaque colour): Qt need not fill the viewport first
        self.viewport().setAttribute(QtCore.Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.setMinimumSize(320, 240)
        self.vb = pg.ViewBox(lockAspect=True, invertY=True, enableMenu=False)
        self.vb.setDefaultPadding(0.01)
        self.setCentralItem(self.vb)
        self.city = None
        self.scene_data: MapScene | None = None
        self.follow = False
        self.style = "glyphs"          # or "icons"
        self._renderer = None
        self._last_frame = None
        self._symbols = glyph_symbols()
        self._symbol_keys = list(self._symbols)          # (kind, heading) per symbol index of the glyph batch
        self._symbol_index = np.full((max(k for k, _h in self._symbol_keys) + 1, 5), -1, np.int64)
        for i, (k, h) in enumerate(self._symbol_keys):
            self._symbol_index[k, h + 1] = i             # [kind, heading + 1]: heading -1 is un-oriented
        self._pen_cache: dict[tuple[int, int, int], QtGui.QPen] = {}

        self.map_item = pg.ImageItem(axisOrder="row-major")
        self.map_item.setZValue(0)
        self.icon_item = pg.ImageItem(axisOrder="row-major")   # icon art: an opaque picture of the whole city
        self.icon_item.setZValue(1)
        self.inter_item = pg.ImageItem(axisOrder="row-major")  # translucent: above the icon art, so it shows in
        self.inter_item.setZValue(2)                           # both drawing styles
        self.inter_item.setVisible(False)
        self.icon_item.setVisible(False)
        for item in (self.map_item, self.icon_item, self.inter_item):
            # otherwise the static pictures are drawn scaled into the whole viewport on every frame; Qt keeps each
            # one as a pixmap of the view's pixels and redraws it only when the zoom, the pan or the picture changes
            item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.fov_item = QtWidgets.QGraphicsRectItem()
        pen = QtGui.QPen(QtGui.QColor(255, 235, 59), 2.0, QtCore.Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        self.fov_item.setPen(pen)
        self.fov_item.setBrush(QtGui.QBrush(QtGui.QColor(255, 235, 59, 28)))
        self.fov_item.setZValue(3)
        self.fov_item.setVisible(False)
        self.path_item = PathBatch()          # every planned path, one painter path per colour
        self.path_item.setZValue(4)
        self.sel_path = PathBatch()           # the selected agent's, wide and yellow on top
        self.sel_path.setZValue(5)
        self._sel_pen = pg.mkPen(255, 235, 59, width=3.5)
        self.goal_item = GlyphBatch(pg.mkPen(30, 30, 30, width=1), [pg.graphicsItems.ScatterPlotItem.Symbols["star"]])
        self.goal_item.setZValue(6)
        # every agent glyph in one blit (widgets/map_glyphs.py); getData() gives the glyph centres
        self.agent_item = GlyphBatch(pg.mkPen(20, 20, 20, width=1.2), [self._symbols[k] for k in self._symbol_keys])
        self.agent_item.setZValue(8)
        # rings and marks around glyphs: outline batches (a pyqtgraph scatter, even of one or a few spots, pays for
        # bounds and culling at every paint; widgets/map_glyphs.py draws the same pixels)
        symbol = pg.graphicsItems.ScatterPlotItem.Symbols
        self.select_item = GlyphBatch(pg.mkPen(255, 235, 59, width=3), [symbol["o"]], hollow=True)
        self.select_item.setZValue(9)
        # agents marked as a group (a gridlock's, by set_marked): magenta squares around their glyphs
        self.mark_item = GlyphBatch(pg.mkPen(225, 40, 235, width=3), [symbol["s"]], hollow=True)
        self.mark_item.setZValue(9)
        self.mark_item.setVisible(False)
        self.marked = np.zeros(0, np.int64)
        # what the overlays below show now, so an unchanged one is not rebuilt every frame (see show_scene)
        self._marked_key: bytes | None = None
        self._forced_key: bytes | None = None
        self._goals_key: tuple | None = None
        # agents whose action at the shown state is forced by the user: a dashed diamond in the timeline's
        # 'forced' marker colour (core/sim/events.py), so an override never looks like a rule's decision
        pen = pg.mkPen(*FORCED_MARK_COLOUR, width=2.5, style=QtCore.Qt.PenStyle.DashLine)
        self.forced_item = GlyphBatch(pen, [symbol["d"]], hollow=True)
        self.forced_item.setZValue(9)
        self.forced_item.setVisible(False)
        for it in (self.map_item, self.inter_item, self.icon_item, self.fov_item):
            self.vb.addItem(it)
        for it in (self.forced_item, self.path_item, self.sel_path, self.goal_item, self.agent_item,
                   self.select_item, self.mark_item):
            self.vb.addItem(it, ignoreBounds=True)
        self.show_paths = "all"
        self.show_goals = True
        self.show_fov = True

        self._ppc = 0.0                     # screen pixels per cell (glyph sizes follow the zoom)
        self._sizes_cells = np.zeros(0)
        self._goal_cells = np.zeros(0)
        self.vb.sigRangeChanged.connect(self._rescale)
        self.vb.sigResized.connect(self._rescale)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        #: the active mouse tool (city brushes, start/goal picking): widgets/map_tools.py
        self.tools = MapToolHost(self)

    # ---- city ------------------------------------------------------------------------------------------------
    def set_city(self, city) -> None:
        """Build the static layers (once per city) and fit the view."""
        self.city = city
        self.map_item.setImage(semantic_rgb(city), autoLevels=False, levels=(0, 255))
        self.inter_item.setImage(intersection_rgba(city), autoLevels=False, levels=(0, 255))
        self.icon_item.clear()
        self._renderer = None
        self._last_frame = None
        self.scene_data = None  # the previous city's agents must never be read against the new one
        self._marked_key = self._forced_key = self._goals_key = None
        self.vb.setLimits(xMin=-city.width * 0.5, xMax=city.width * 1.5, yMin=-city.height * 0.5,
                          yMax=city.height * 1.5, minXRange=8, minYRange=8)
        extent = QtCore.QRectF(-city.width * 0.5, -city.height * 0.5, city.width * 2.0, city.height * 2.0)
        for it in (self.path_item, self.sel_path, self.goal_item, self.agent_item, self.select_item, self.mark_item,
                   self.forced_item):   # all they draw: in the limits
            it.set_extent(extent)
        self.fit()

    def fit(self) -> None:
        if self.city is not None:
            self.vb.setRange(QtCore.QRectF(0, 0, self.city.width, self.city.height), padding=0.01)

    def zoom(self, factor: float) -> None:
        """factor < 1 zooms in."""
        self.vb.scaleBy((factor, factor))

    def set_intersections_visible(self, on: bool) -> None:
        self.inter_item.setVisible(on)

    def set_style(self, style: str) -> None:
        """``"glyphs"`` (oriented shapes coloured by the colour-by scheme) or ``"icons"`` (rendered icon art)."""
        if style not in ("glyphs", "icons"):
            raise ValueError(style)
        self.style = style
        self.icon_item.setVisible(style == "icons")
        self.agent_item.setVisible(style == "glyphs")
        if self.scene_data is not None:
            self.show_scene(self.scene_data)

    def set_follow(self, on: bool) -> None:
        self.follow = on
        if on:
            self._centre_on_selected()

    def set_overlays(self, *, paths: str | None = None, goals: bool | None = None, fov: bool | None = None) -> None:
        if paths is not None:
            self.show_paths = paths
        if goals is not None:
            self.show_goals = goals
        if fov is not None:
            self.show_fov = fov
        if self.scene_data is not None:
            self.show_scene(self.scene_data)

    # ---- glyph sizes follow the zoom ---------------------------------------------------------------------
    def _pixels_per_cell(self) -> float:
        px = self.vb.viewPixelSize()[0] if self.vb.width() > 0 else 0.0
        return 1.0 / px if px > 0 else 3.0

    def _px(self, cells: np.ndarray, minimum: float) -> np.ndarray:
        return np.maximum(np.asarray(cells, float) * self._ppc, minimum)

    def _rescale(self, *args) -> None:
        ppc = self._pixels_per_cell()
        if abs(ppc - self._ppc) < 1e-3 * max(ppc, 1e-9):
            return
        self._ppc = ppc
        if len(self._sizes_cells) and self.style == "glyphs":
            self.agent_item.set_sizes(self._px(self._sizes_cells, 7.0))
        if len(self._goal_cells):
            self.goal_item.set_sizes(self._px(self._goal_cells, 7.0))
        self.select_item.set_sizes(self._px(np.array([SELECT_SIZE]), 16.0)[0])
        self.mark_item.set_sizes(self._px(np.array([MARK_SIZE]), 18.0)[0])
        self.forced_item.set_sizes(self._px(np.array([FORCED_SIZE]), 14.0)[0])

    # ---- frames ----------------------------------------------------------------------------------------------
    def _path_pen(self, rgb) -> QtGui.QPen:
        key = (int(rgb[0]), int(rgb[1]), int(rgb[2]))
        p = self._pen_cache.get(key)
        if p is None:
            p = QtGui.QPen(QtGui.QColor(key[0], key[1], key[2]), 1.0)   # 1 px cosmetic: Qt's fastest line path
            p.setCosmetic(True)
            self._pen_cache[key] = p
        return p

    def show_scene(self, sc: MapScene) -> None:
        """Draw one state. Cheap: a handful of setData calls whatever the number of agents."""
        self.scene_data = sc
        n = len(sc.positions)
        xy = np.empty((n, 2), float)
        xy[:, 0] = sc.positions[:, 1] + 0.5
        xy[:, 1] = sc.positions[:, 0] + 0.5
        rgb = sc.rgb
        if self.style == "glyphs":
            kinds = sc.kinds.astype(np.int64)
            heads = np.clip(sc.headings.astype(np.int64), -1, 3)
            self._ppc = self._pixels_per_cell()
            self._sizes_cells = np.where(kinds == int(Kind.CAR), CAR_SIZE, PED_SIZE)
            self.agent_item.setData(xy[:, 0], xy[:, 1], self._symbol_index[kinds, heads + 1],
                                     self._px(self._sizes_cells, 7.0), rgb)
        else:
            self._draw_icons(sc)
        self._draw_paths(sc, rgb)
        sel = sc.selected
        goals_key = (sc.goals.tobytes(), rgb.tobytes(), sel) if sc.goals is not None and self.show_goals else None
        if goals_key is not None and goals_key == self._goals_key:
            pass   # goals and their colours rarely change: keep the batch (setData restyles every glyph)
        elif goals_key is not None:
            gxy = np.empty((n, 2), float)
            gxy[:, 0] = sc.goals[:, 1] + 0.5
            gxy[:, 1] = sc.goals[:, 0] + 0.5
            sizes = np.full(n, GOAL_SIZE)
            if sel is not None:
                sizes[sel] = GOAL_SIZE * 1.8
            self._goal_cells = sizes
            self.goal_item.setData(gxy[:, 0], gxy[:, 1], 0, self._px(sizes, 7.0), rgb)
            self.goal_item.setVisible(True)
        else:
            self.goal_item.setVisible(False)
        self._goals_key = goals_key
        if sel is not None:
            self.select_item.setData(xy[sel:sel + 1, 0], xy[sel:sel + 1, 1], 0,
                                     self._px(np.array([SELECT_SIZE]), 16.0), _NO_RGB)
            self.select_item.setVisible(True)
        else:
            self.select_item.setVisible(False)
        if sel is not None and sc.fov is not None and self.show_fov:
            r0, r1, c0, c1 = sc.fov
            self.fov_item.setRect(QtCore.QRectF(c0, r0, c1 - c0 + 1, r1 - r0 + 1))
            self.fov_item.setVisible(True)
        else:
            self.fov_item.setVisible(False)
        self._draw_marked()
        forced = sc.forced_agents
        fxy = xy[forced] if len(forced) else None
        forced_key = None if fxy is None else fxy.tobytes()
        if forced_key is not None and forced_key != self._forced_key:   # usually none, or the same as last frame
            self.forced_item.setData(fxy[:, 0], fxy[:, 1], 0, self._px(np.array([FORCED_SIZE]), 14.0)[0],
                                     np.zeros((len(fxy), 3), np.uint8))
        self._forced_key = forced_key
        if self.forced_item.isVisible() != (forced_key is not None):
            self.forced_item.setVisible(forced_key is not None)
        if self.follow:
            self._centre_on_selected()

    def _draw_paths(self, sc: MapScene, rgb: np.ndarray) -> None:
        """Planned paths: one painter path per colour (each agent's remaining cells, not joined to the next)."""
        sel = sc.selected
        planned = sc.planned
        keep = planned.lengths >= 2
        if self.show_paths == "none":
            keep[:] = False
        elif self.show_paths != "all":
            keep &= planned.agents == (-1 if sel is None else sel)
        drawn = np.flatnonzero(keep)
        batches = []
        if len(drawn):
            c = np.asarray(rgb, np.int64)[planned.agents[drawn]]
            packed = (c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2]
            _u, first, inv = np.unique(packed, return_index=True, return_inverse=True)
            inv = inv.reshape(-1)
            for g in np.argsort(first):          # colours in the order of their first path
                key = tuple(int(v) for v in c[first[g]])
                batches.append((self._path_pen(key), joined_polyline_path(*planned.pick(drawn[inv == g]))))
        self.path_item.set_paths(batches)
        self.path_item.setVisible(bool(batches))
        mine = np.flatnonzero((planned.agents == (-1 if sel is None else sel)) & (planned.lengths >= 2))
        if sel is not None and len(mine) and self.show_paths != "none":
            cells, ends = planned.pick(mine)
            self.sel_path.set_segments(self._sel_pen, np.split(cells, ends[:-1]))
            self.sel_path.setVisible(True)
        else:
            self.sel_path.setVisible(False)

    def set_marked(self, agents) -> None:
        """Mark these agents (indices) in every state drawn from now on, until changed; empty: none."""
        marked = np.asarray(list(agents or ()), np.int64)
        if not np.array_equal(marked, self.marked):
            self.marked = marked
            self._draw_marked()

    def _draw_marked(self) -> None:
        sc, m = self.scene_data, self.marked
        if sc is None or not len(m) or int(m.max()) >= len(sc.positions):
            self._marked_key = None
            if self.mark_item.isVisible():
                self.mark_item.setVisible(False)
            return
        pos = np.asarray(sc.positions)[m]
        key = pos.tobytes()
        if key != self._marked_key:   # a gridlock's agents stand still: the same marks frame after frame
            self._marked_key = key
            self.mark_item.setData(pos[:, 1] + 0.5, pos[:, 0] + 0.5, 0, self._px(np.array([MARK_SIZE]), 18.0)[0],
                                   np.zeros((len(pos), 3), np.uint8))
        self.mark_item.setVisible(True)

    def show_cells(self, cells, margin: float = 12.0) -> None:
        """Zoom and pan so that every (row, col) in ``cells`` is in view with ``margin`` cells around them."""
        cells = np.asarray(cells, float).reshape(-1, 2)
        if not len(cells):
            return
        (r0, c0), (r1, c1) = cells.min(axis=0) - margin, cells.max(axis=0) + 1 + margin
        self.vb.setRange(QtCore.QRectF(c0, r0, c1 - c0, r1 - r0), padding=0)

    def _draw_icons(self, sc: MapScene) -> None:
        """Icon art: the renderer composes background + sprites into one image (a few ms per frame)."""
        from core.base.world import WorldSnapshot

        if self.city is None or sc.agents is None:
            return
        if self._renderer is None:
            from core.render.renderer import Renderer

            self._renderer = Renderer(self.city, px_per_cell=4)
        snap = WorldSnapshot(sc.step, sc.agents, np.array(sc.positions, np.int32), np.array(sc.headings, np.int8))
        frame = self._renderer.render(snap, previous=self._last_frame)
        self._last_frame = frame
        self.icon_item.setImage(frame.image, autoLevels=False, levels=(0, 255))
        self.icon_item.setRect(QtCore.QRectF(0, 0, self.city.width, self.city.height))

    def offscreen_copy(self) -> "MapView":
        """A hidden copy of this view (same city, overlays, intersections, drawing style, size and visible region)
        that draws scenes for an export without touching what is on screen."""
        copy = MapView()
        copy.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        copy.resize(max(self.width(), 64), max(self.height(), 64))
        copy.show()
        if self.city is not None:
            copy.set_city(self.city)
        copy.set_overlays(paths=self.show_paths, goals=self.show_goals, fov=self.show_fov)
        copy.set_intersections_visible(self.inter_item.isVisible())
        copy.set_style(self.style)
        copy.vb.setRange(self.vb.viewRect(), padding=0)
        return copy

    def reload_icons(self, semantic: str, library) -> None:
        """The accepted icons of ``semantic`` changed in ``library`` (e.g. the Render panel accepted one): use them at
        once. Before the icon art was first drawn there is nothing to do (the renderer reads the library then)."""
        if self._renderer is not None:
            self.set_icon_set(self._renderer.icons.reload(semantic, library))

    def set_icon_set(self, icons) -> None:
        """Use new icon art (e.g. after the render dock accepted an icon)."""
        if self._renderer is not None:
            self._renderer.set_icons(icons)
        if self.scene_data is not None and self.style == "icons":
            self._draw_icons(self.scene_data)

    def _centre_on_selected(self) -> None:
        sc = self.scene_data
        if sc is None or sc.selected is None:
            return
        r, c = sc.positions[sc.selected]
        (x0, x1), (y0, y1) = self.vb.viewRange()
        w, h = x1 - x0, y1 - y0
        cx, cy = c + 0.5, r + 0.5
        self.vb.setRange(QtCore.QRectF(cx - w / 2, cy - h / 2, w, h), padding=0)

    def paintEvent(self, ev) -> None:  # noqa: N802 (Qt name)
        super().paintEvent(ev)
        self.painted.emit()

    # ---- mouse -------------------------------------------------------------------------------------------------
    def _cell_at(self, scene_pos) -> tuple[float, float] | None:
        if self.city is None or not self.vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = self.vb.mapSceneToView(scene_pos)
        return p.y(), p.x()

    def _pick_radius(self) -> float:
        """Agents are clickable within their glyph or 10 screen pixels, whichever is larger (in cells)."""
        px = self.vb.viewPixelSize()[0] if self.vb.width() else 1.0
        return max(CAR_SIZE / 2, 10 * px)

    def agent_at(self, row: float, col: float) -> int | None:
        if self.scene_data is None:
            return None
        return nearest_agent(self.scene_data.positions, row, col, self._pick_radius())

    def _on_mouse_moved(self, scene_pos) -> None:
        rc = self._cell_at(scene_pos)
        if rc is None or self.city is None:
            self.hovered.emit(None)
            return
        row, col = rc
        r, c = int(math.floor(row)), int(math.floor(col))
        if not (0 <= r < self.city.height and 0 <= c < self.city.width):
            self.hovered.emit(None)
            return
        agent = self.agent_at(row, col)
        name = self.scene_data.names[agent] if agent is not None and self.scene_data is not None else None
        self.hovered.emit(HoverInfo(r, c, semantic_at(self.city, r, c), agent, name))

    def _on_mouse_clicked(self, ev) -> None:
        if ev.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        rc = self._cell_at(ev.scenePos())
        if rc is None:
            return
        agent = self.agent_at(*rc)
        self.agentClicked.emit(-1 if agent is None else agent)

    def scene_pos_of_cell(self, row: float, col: float) -> QtCore.QPointF:
        """Scene coordinates of a cell centre (tests click there)."""
        return self.vb.mapViewToScene(QtCore.QPointF(col + 0.5, row + 0.5))

    def render_image(self, width: int | None = None) -> QtGui.QImage:
        """The current view as an image (``width`` px wide, keeping the aspect; default the widget's size)."""
        size = self.viewport().size()
        if width is None or width <= 0:
            return self.grab().toImage()
        h = max(1, round(width * size.height() / max(size.width(), 1)))
        img = QtGui.QImage(width, h, QtGui.QImage.Format.Format_RGB32)
        img.fill(QtGui.QColor(40, 44, 52))
        painter = QtGui.QPainter(img)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        self.render(painter, QtCore.QRectF(0, 0, width, h), self.viewport().rect())
        painter.end()
        return img

