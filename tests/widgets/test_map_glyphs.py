"""The map's lean per-agent items (widgets/map_glyphs.py) draw exactly what pyqtgraph's scatter and curves drew: the
same pixels for glyphs of several symbols, colours and sizes, for paths of one colour (straight runs shortened to
their ends) and for a wide path drawn as segments."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")


def _pair(qtbot):
    import pyqtgraph as pg
    from PySide6 import QtCore

    views = []
    for _ in range(2):
        v = pg.GraphicsView(background=pg.mkColor(40, 44, 52))
        vb = pg.ViewBox(lockAspect=True, invertY=True, enableMenu=False)
        v.setCentralItem(vb)
        v.resize(240, 200)
        qtbot.addWidget(v)
        v.show()
        vb.setRange(QtCore.QRectF(0, 0, 30, 24), padding=0)
        views.append((v, vb))
    return views


def _pixels(view) -> np.ndarray:
    from app.features.export.animation import qimage_to_rgb

    return qimage_to_rgb(view.grab().toImage()).astype(int)


def test_glyph_batch_draws_what_the_scatter_drew(qtbot):
    import pyqtgraph as pg

    from widgets.map_glyphs import GlyphBatch
    from widgets.map_view import glyph_symbols

    (v_old, vb_old), (v_new, vb_new) = _pair(qtbot)
    symbols = list(glyph_symbols().values())
    rng = np.random.default_rng(3)
    n = 40
    x, y = rng.uniform(1, 29, n), rng.uniform(1, 23, n)
    sym = rng.integers(0, len(symbols), n)
    size = rng.choice([7.0, 11.5], n)
    rgb = rng.choice(np.array([[230, 60, 60], [60, 200, 90], [40, 120, 230]], np.uint8), n)
    pen = pg.mkPen(20, 20, 20, width=1.2)
    old = pg.ScatterPlotItem(pxMode=True, pen=pen)
    old.setData(x=x, y=y, symbol=[symbols[s] for s in sym], size=size, brush=[pg.mkBrush(*c) for c in rgb])
    vb_old.addItem(old)
    new = GlyphBatch(pen, symbols)
    new.setData(x, y, sym, size, rgb)
    vb_new.addItem(new, ignoreBounds=True)
    a, b = _pixels(v_old), _pixels(v_new)
    assert (a != b).any(axis=2).sum() == 0
    assert (a != _pixels_of_empty(qtbot)).any()            # something was drawn
    gx, gy = new.getData()
    assert np.array_equal(gx, x) and np.array_equal(gy, y) and np.array_equal(new.rgb, rgb)
    new.set_sizes(size * 2)                                # the zoom changed: bigger glyphs, other pixels
    assert (_pixels(v_new) != b).any()


@pytest.mark.parametrize("symbol, dashed", [("o", False), ("s", False), ("d", True)])
def test_hollow_glyph_batch_draws_what_the_hollow_scatter_drew(qtbot, symbol, dashed):
    """The selection ring, the gridlock marks and the forced diamond (outlines, no brush) as the scatter drew them."""
    import pyqtgraph as pg
    from PySide6 import QtCore

    from widgets.map_glyphs import GlyphBatch

    (v_old, vb_old), (v_new, vb_new) = _pair(qtbot)
    style = QtCore.Qt.PenStyle.DashLine if dashed else QtCore.Qt.PenStyle.SolidLine
    pen = pg.mkPen(255, 235, 59, width=3, style=style)
    x, y = np.array([4.5, 12.5, 20.5]), np.array([5.5, 11.5, 17.5])
    old = pg.ScatterPlotItem(pxMode=True, symbol=symbol, size=20, pen=pen, brush=pg.mkBrush(None))
    old.setData(pos=np.column_stack([x, y]), size=23.5)
    vb_old.addItem(old)
    new = GlyphBatch(pen, [pg.graphicsItems.ScatterPlotItem.Symbols[symbol]], hollow=True)
    new.setData(x, y, 0, 23.5, np.zeros((3, 3), np.uint8))
    vb_new.addItem(new, ignoreBounds=True)
    a, b = _pixels(v_old), _pixels(v_new)
    assert (a != b).any(axis=2).sum() == 0
    inside = a[int(vb_old.mapViewToScene(QtCore.QPointF(12.5, 11.5)).y()),
               int(vb_old.mapViewToScene(QtCore.QPointF(12.5, 11.5)).x())]
    assert (a != _pixels_of_empty(qtbot)).any() and tuple(inside) == (40, 44, 52)   # drawn, and hollow


def _pixels_of_empty(qtbot) -> np.ndarray:
    (v, _vb), _ = _pair(qtbot)
    return _pixels(v)


def test_path_batch_draws_what_the_curves_drew(qtbot):
    import pyqtgraph as pg

    from widgets.map_glyphs import PathBatch, polyline_path

    (v_old, vb_old), (v_new, vb_new) = _pair(qtbot)
    paths = [np.array([[2, 2], [2, 3], [2, 4], [2, 5], [3, 5], [4, 5], [5, 5], [5, 6]]),
             np.array([[10, 20], [11, 20], [12, 20], [12, 21], [12, 22], [13, 22]]),
             np.array([[20, 3], [20, 4]])]
    xs, ys = [], []
    for p in paths:                               # what the map drew before: NaN breaks, connect="finite"
        xs += [*(p[:, 1] + 0.5), np.nan]
        ys += [*(p[:, 0] + 0.5), np.nan]
    pen = pg.mkPen(200, 60, 200)
    vb_old.addItem(pg.PlotCurveItem(np.array(xs), np.array(ys), pen=pen, connect="finite"))
    wide = pg.mkPen(255, 235, 59, width=3.5)
    vb_old.addItem(pg.PlotCurveItem(paths[1][:, 1] + 0.5, paths[1][:, 0] + 0.5, pen=wide))
    thin, sel = PathBatch(), PathBatch()
    thin.set_paths([(pen, polyline_path(paths))])
    sel.set_segments(wide, [paths[1]])
    for it in (thin, sel):
        vb_new.addItem(it, ignoreBounds=True)
    assert polyline_path(paths).elementCount() == 5 + 5 + 3   # straight runs: their two ends (the last twice)
    assert (_pixels(v_old) != _pixels(v_new)).any(axis=2).sum() == 0


def test_glyph_atlas_starts_afresh_after_many_zoom_levels(qtbot, monkeypatch):
    import pyqtgraph as pg

    import widgets.map_glyphs as mg

    monkeypatch.setattr(mg, "ATLAS_LIMIT", 20)
    g = mg.GlyphBatch(pg.mkPen(20, 20, 20, width=1.2), [pg.graphicsItems.ScatterPlotItem.Symbols["o"]])
    g.setData(np.arange(3.0), np.zeros(3), 0, 8.0, np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255]], np.uint8))
    for px in np.linspace(8, 30, 15):                # zooming: three new styles per size
        g.set_sizes(px)
        assert len(g._coords) <= 20 + 3
    assert g._src[:, 2].min() > 0                     # every point still has its glyph


def test_joined_polyline_path_is_the_path_of_the_separate_arrays():
    from widgets.map_glyphs import joined_polyline_path, polyline_path

    paths = [np.array([[2, 2], [2, 3], [2, 4], [3, 4]]), np.array([[7, 7]]), np.array([[9, 1], [9, 2]])]
    ends = np.cumsum([len(p) for p in paths])
    joined = joined_polyline_path(np.concatenate(paths).astype(np.int32), ends)
    ref = polyline_path(paths)
    assert joined.elementCount() == ref.elementCount() > 0
    assert [(joined.elementAt(i).x, joined.elementAt(i).y, joined.elementAt(i).type) for i in range(ref.elementCount())] \
        == [(ref.elementAt(i).x, ref.elementAt(i).y, ref.elementAt(i).type) for i in range(ref.elementCount())]
    assert joined_polyline_path(np.zeros((0, 2), np.int32), np.zeros(0, np.int64)).isEmpty()
