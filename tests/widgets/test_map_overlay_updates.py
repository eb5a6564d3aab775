"""Map overlays are rebuilt only when what they show changes (widgets/map_view.py, widgets/map_overlays.py): the
same state drawn again, or an agent's witnesses that did not move, touch no scatter item; a change redraws at once."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.support.studio import default_config, run_sim

pytest.importorskip("pytestqt")


class Calls:
    def __init__(self, item, monkeypatch) -> None:
        self.n = 0
        real = item.setData

        def counted(*a, **k):
            self.n += 1
            return real(*a, **k)

        monkeypatch.setattr(item, "setData", counted)


@pytest.fixture(scope="module")
def episode():
    return run_sim(default_config(), seed=0, steps=6).buffer


def test_unchanged_goals_forced_and_gridlock_marks_are_not_rebuilt(qtbot, monkeypatch, episode):
    from core.view.scene import build_scene
    from widgets.map_view import MapView

    view = MapView()
    qtbot.addWidget(view)
    view.set_city(default_config().city)
    goals, forced, marks = (Calls(it, monkeypatch) for it in (view.goal_item, view.forced_item, view.mark_item))
    sc = build_scene(episode, 3, selected=1)
    forced_at_3 = np.zeros(len(sc.positions), bool)
    forced_at_3[[2, 4]] = True
    sc = dataclasses.replace(sc, forced=forced_at_3)
    view.set_marked([0, 5])
    view.show_scene(sc)
    assert (goals.n, forced.n, marks.n) == (1, 1, 1)
    assert view.forced_item.isVisible() and view.mark_item.isVisible()
    view.show_scene(sc)                                   # the same state again: nothing rebuilt
    assert (goals.n, forced.n, marks.n) == (1, 1, 1)
    moved = dataclasses.replace(sc, goals=sc.goals[::-1].copy(), positions=sc.positions[::-1].copy())
    view.show_scene(moved)                               # everything moved: everything redrawn
    assert (goals.n, forced.n, marks.n) == (2, 2, 2)
    view.show_scene(dataclasses.replace(moved, forced=np.zeros(len(sc.positions), bool)))
    assert not view.forced_item.isVisible() and forced.n == 2
    view.set_marked([])
    assert not view.mark_item.isVisible()


def test_witness_overlay_redraws_only_when_its_agents_move(qtbot, monkeypatch):
    import pyqtgraph as pg

    from widgets.map_overlays import WitnessOverlay

    vb = pg.ViewBox()
    w = WitnessOverlay(vb)
    ring = Calls(w.ring, monkeypatch)
    pos = np.array([[1, 1], [5, 5], [9, 9]])
    w.show(pos, 0, (1, 2))
    w.show(pos.copy(), 0, (1, 2))
    assert ring.n == 1 and w.ring.isVisible()
    pos2 = pos.copy()
    pos2[2] = (9, 10)
    w.show(pos2, 0, (1, 2))
    assert ring.n == 2
    w.show(pos2, 0, ())
    assert not w.ring.isVisible() and not w.line.isVisible()
    w.show(pos2, 0, (1, 2))                               # shown again after being hidden
    assert ring.n == 3 and w.ring.isVisible()


def test_static_pictures_are_drawn_once_per_zoom_and_look_the_same(qtbot, monkeypatch, episode):
    """The map's pictures (the city, the intersections) are kept as pixmaps of the view's pixels: a new state
    repaints the view without drawing them again, a zoom draws them anew, and the frame is pixel for pixel the one
    drawn without the cache."""
    from PySide6 import QtWidgets

    from core.view.scene import build_scene
    from tests.support.qt import paint_spy, shown
    from widgets.map_view import MapView

    view = shown(qtbot, MapView(), 420, 380)
    view.set_city(default_config().city)
    view.show_scene(build_scene(episode, 3, selected=1))
    painted = paint_spy()
    view.viewport().installEventFilter(painted)

    def frame() -> None:     # the next paint of the view, through the event loop
        n = len(painted.painted)
        view.viewport().update()
        qtbot.waitUntil(lambda: len(painted.painted) > n)

    frame()
    drawn: list[object] = []

    def counting(item):
        real = item.paint

        def counted(*a):
            drawn.append(item)
            return real(*a)
        return counted

    for item in (view.map_item, view.icon_item, view.inter_item):
        monkeypatch.setattr(item, "paint", counting(item))
    view.show_scene(build_scene(episode, 4, selected=1))
    frame()
    assert drawn == []                                      # a new state: the pictures are blitted
    cached = view.viewport().grab().toImage()
    for item in (view.map_item, view.icon_item, view.inter_item):
        item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.NoCache)
    frame()
    assert view.map_item in drawn
    assert view.viewport().grab().toImage() == cached       # the same pixels without the cache
    for item in (view.map_item, view.icon_item, view.inter_item):
        item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
    frame()
    drawn.clear()
    view.vb.scaleBy((0.8, 0.8))                             # a zoom: drawn again at the new scale
    qtbot.waitUntil(lambda: view.map_item in drawn)
