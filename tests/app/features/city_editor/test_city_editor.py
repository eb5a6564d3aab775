"""City editor mode in the studio (app/features/city_editor/controller.py) through the real event loop: E turns it on,
T picks the traffic tool, a mouse stroke on the map paints (one undo step, the map shows the new cells at once),
Ctrl+Z undoes it, an edit that breaks the city shows in Problems (click leads to the cells) and stops the
simulation from stepping; New city and export/import round trip."""
from __future__ import annotations

import numpy as np
import pytest

from core.base.codes import BUILDING_CODES
from core.view.city_draft import PAINT_RGB
from tests.support.studio import close_window, open_window

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

Qt = QtCore.Qt


def _stroke(qtbot, win, cells):
    vp = win.map.viewport()
    pos = [win.map.tools.viewport_pos_of_cell(r, c) for r, c in cells]
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=pos[0])
    for p in pos[1:]:
        qtbot.mouseMove(vp, p)
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=pos[-1])


@pytest.fixture
def win(qtbot, tmp_path):
    w = open_window(qtbot, tmp_path / "s.ini")
    w.window.activateWindow()
    w.map.setFocus()
    yield w
    close_window(w)


def test_paint_undo_validate_and_refuse_to_simulate(qtbot, win):
    ed = win.features["city_editor"]
    cfg = win.session.project.config
    qtbot.keyClick(win.window, Qt.Key.Key_E)
    assert ed.on and win.map.tools.active and win.docks["problems"].isVisible()
    win.map.vb.setRange(QtCore.QRectF(0, 0, 60, 60), padding=0)     # zoom in on the top-left block
    qtbot.wait(50)
    qtbot.keyClick(win.window, Qt.Key.Key_1)                               # House
    assert ed.tool_key == "House"
    before = cfg.city
    _stroke(qtbot, win, [(13, 20), (13, 26), (13, 30)])
    assert cfg.city is not before
    assert (cfg.city.building[13, 20:31] == BUILDING_CODES["House"]).all()
    assert tuple(win.map.map_item.image[13, 25]) == PAINT_RGB["House"]         # drawn at once
    assert win.session.stack.count == 1 and win.session.stack.undo_text() == "Paint House"
    qt_stack = win.undo_stack                                           # the History dock's QUndoStack
    assert qt_stack.count() == 1 and qt_stack.text(0) == "Paint House"
    qtbot.keyClick(win.window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert cfg.city is before and tuple(win.map.map_item.image[13, 25]) != PAINT_RGB["House"]

    # a sidewalk cell inside a building lot is cut off from the walking network: orange in the graph overlay
    assert cfg.city.building[20, 20] != 0
    qtbot.keyClick(win.window, Qt.Key.Key_W)
    ed.size_spin.setValue(1)
    _stroke(qtbot, win, [(20, 20)])
    qtbot.waitUntil(lambda: not ed.lanes_pending)
    overlay = win.map.tools.overlay_item.image
    assert tuple(overlay[20, 20]) == (255, 120, 0, 140) and tuple(overlay[13, 40]) != (255, 120, 0, 140)
    assert any(p.code in ("isolated-walking", "walking-split") for p in win.features["problems"].refresh_now())
    qtbot.keyClick(win.window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)

    # erase across the top traffic street: a dead end -> an error in Problems, stepping refused
    qtbot.keyClick(win.window, Qt.Key.Key_X)
    ed.size_spin.setValue(1)
    rect_start, rect_end = (0, 30), (10, 30)
    qtbot.keyClick(win.window, Qt.Key.Key_R)
    assert ed.tool_key == "rect" and ed.kind == "empty"
    _stroke(qtbot, win, [rect_start, (5, 30), rect_end])
    assert (cfg.city.street[0:11, 30] == 0).all()
    ctl = win.features["problems"]
    problems = ctl.refresh_now()
    errors = [p for p in problems if p.is_error and p.source == "city"]
    assert errors, problems
    panel = win.window.panels.widget("problems")
    panel.activate_row(0)
    assert win.map.tools.highlighted == errors[0].cells
    steps = win.num_steps
    qtbot.keyClick(win.window, Qt.Key.Key_F10)
    qtbot.wait(200)
    assert win.num_steps == steps and "Cannot simulate a step" in win.last_message
    qtbot.keyClick(win.window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert [p for p in ctl.refresh_now() if p.is_error] == []
    win.map.setFocus()
    qtbot.keyClick(win.map, Qt.Key.Key_Escape)                      # puts the tool down, not "Deselect"
    assert ed.on and not win.map.tools.active
    qtbot.keyClick(win.window, Qt.Key.Key_E)                               # leave the mode: the map pans again
    assert not ed.on and not win.map.tools.active


def test_new_city_resize_export_and_import(qtbot, win, tmp_path, reference_configs):
    from core.map.generate import generate_city

    ed = win.features["city_editor"]
    cfg = win.session.project.config
    small = generate_city(7, blocks=(2, 2))
    ed.replace(small, "New city")
    assert cfg.city is small and win.map.city is small
    ed.resize(small.height + 10, small.width, (0, 0))
    assert cfg.city.shape == (small.height + 10, small.width) and win.map.city.shape == cfg.city.shape
    out = tmp_path / "city.yaml"
    ed.export_city(out)
    assert out.read_text().startswith("# LogiCity Studio city map")
    win.session.stack.undo()
    assert cfg.city is small
    assert ed.import_city(out)
    assert cfg.city.shape == (small.height + 10, small.width)
    assert np.array_equal(cfg.city.building[:small.height], small.building)
    ref = reference_configs / "master" / "config" / "maps" / "square_5x5.yaml"   # the reference's own format
    assert ed.import_city(ref)
    assert cfg.city.shape == (241, 241) and win.session.stack.undo_text() == "Import city square_5x5.yaml"
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nsize: [10, 10]\nstreets: 3\n")
    win.last_error = None
    assert not ed.import_city(bad)
    assert win.last_error is not None and "bad.yaml" in win.last_error[1]


def test_an_edited_city_is_simulated_after_reset(qtbot, win):
    """Reset (Ctrl+R) re-simulates from step 0 with the edited city: the agents start on the new, smaller city."""
    from core.map.generate import generate_city

    ed = win.features["city_editor"]
    small = generate_city(3, blocks=(2, 2))
    ed.replace(small, "New city")
    win.answers["reset"] = "reset"
    old_history = win.session.history
    qtbot.keyClick(win.window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: win.session.history is not old_history and not win.syncing, timeout=60_000)
    pos = np.asarray(win.session.history.array("positions"))[0]
    assert (pos[:, 0] < small.height).all() and (pos[:, 1] < small.width).all()
    assert small.drivable[tuple(pos[win.session.history.agents.kinds == 1].T)].all()
    qtbot.keyClick(win.window, Qt.Key.Key_F10)
    qtbot.waitUntil(lambda: win.num_steps == 1, timeout=60_000)


def _answer_modal(qtbot, fill):
    """Run ``fill(dialog)`` on the next modal dialog once it is shown (the action runs it modally); ``fill``
    returns True when it accepted the dialog, False to be called again a moment later (a preview not ready)."""
    from PySide6 import QtWidgets

    done = []

    def poll():
        dlg = QtWidgets.QApplication.activeModalWidget()
        if dlg is None or not dlg.isVisible() or not fill(dlg):
            QtCore.QTimer.singleShot(50, poll)
        else:
            done.append(dlg)

    QtCore.QTimer.singleShot(0, poll)
    return done


def test_tool_keys_brush_snapping_preview_and_the_city_menu(qtbot, win, tmp_path, monkeypatch):
    """Each tool key through the real shortcuts: the live preview follows the brush (, and . resize it), K picks a
    kind, T and C paint traffic and a crossing, S turns snapping off (a diagonal stroke), M moves a block; New city
    (Ctrl+Shift+N, its dialog previews), Resize canvas, Export and Import city through the City menu's actions."""
    from PySide6 import QtWidgets

    from core.map.edit import brush_offsets, pick
    from core.map.io import load_map
    from core.studio import city_edit
    from widgets.city_editor.dialogs import NewCityDialog, ResizeDialog

    ed = win.features["city_editor"]
    cfg = win.session.project.config
    stack = win.session.stack

    def kind(r, c):
        return pick(city_edit.draft_of(win.session), r, c)

    def undo():
        qtbot.keyClick(win.window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)

    qtbot.keyClick(win.window, Qt.Key.Key_E)
    win.map.vb.setRange(QtCore.QRectF(0, 0, 60, 60), padding=0)
    qtbot.wait(50)
    qtbot.keyClick(win.window, Qt.Key.Key_W)
    qtbot.keyClick(win.window, Qt.Key.Key_Period)                          # larger brush
    qtbot.keyClick(win.window, Qt.Key.Key_Comma)
    qtbot.keyClick(win.window, Qt.Key.Key_Comma)                           # smaller, twice
    assert ed.size_spin.value() == ed.brush_size("walking") == 4
    qtbot.mouseMove(win.map.viewport(), win.map.tools.viewport_pos_of_cell(30, 30))
    lo, hi = brush_offsets(4)
    qtbot.waitUntil(lambda: win.map.tools.preview_rects == [(30 - lo, 30 - lo, 30 + hi, 30 + hi)], timeout=5000)

    qtbot.keyClick(win.window, Qt.Key.Key_K)                               # eyedropper on an Office
    assert kind(20, 20) == "Office"
    _stroke(qtbot, win, [(20, 20)])
    assert ed.tool_key == "Office" and ed.map.tools.tool.kind == "Office" and stack.count == 0

    qtbot.keyClick(win.window, Qt.Key.Key_T)                               # a traffic street across the block
    _stroke(qtbot, win, [(30, 20), (30, 30), (30, 40)])
    assert kind(30, 30) == "traffic_h" and stack.undo_text() == "Paint traffic street"
    undo()
    assert kind(30, 30) == "walking"
    qtbot.keyClick(win.window, Qt.Key.Key_C)                               # a zebra crossing on the top street
    _stroke(qtbot, win, [(5, 30)])
    assert kind(5, 30) == "crossing" and stack.undo_text() == "Paint crossing"
    undo()

    qtbot.keyClick(win.window, Qt.Key.Key_X)                               # erase a diagonal: snapped, it stays on row 20
    ed.size_spin.setValue(1)
    _stroke(qtbot, win, [(20, 20), (22, 22), (24, 24)])
    assert kind(20, 24) == "empty" and kind(24, 24) == "Office"
    undo()
    qtbot.keyClick(win.window, Qt.Key.Key_S)                               # snapping off: the stroke follows the mouse
    assert not ed.snap
    _stroke(qtbot, win, [(20, 20), (22, 22), (24, 24)])
    assert kind(22, 22) == kind(24, 24) == "empty" and kind(20, 24) == "Office"
    undo()
    qtbot.keyClick(win.window, Qt.Key.Key_S)
    assert ed.snap

    qtbot.keyClick(win.window, Qt.Key.Key_M)                               # select / move a block
    qtbot.mouseMove(win.map.viewport(), win.map.tools.viewport_pos_of_cell(20, 20))
    qtbot.waitUntil(lambda: win.map.tools.preview_rects[:1] == [(11, 11, 45, 45)], timeout=5000)
    _stroke(qtbot, win, [(20, 20), (20, 21), (20, 22)])
    assert stack.undo_text() == "Move block by (0, 2)" and kind(20, 22) == "Office" and kind(20, 11) == "empty"
    undo()
    assert kind(20, 11) == "walking" and stack.index == 0

    def new_city(dlg):
        if not isinstance(dlg, NewCityDialog):
            return False
        if dlg.block_rows.value() != 2:
            dlg.block_rows.setValue(2)
            dlg.block_cols.setValue(2)
        if dlg.city is None or dlg.city.shape != (103, 103) or dlg.preview.pixmap().isNull():
            return False                                            # the preview follows the values
        dlg.accept()
        return True

    answered = _answer_modal(qtbot, new_city)
    qtbot.keyClick(win.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert answered and cfg.city.shape == (103, 103) and stack.undo_text() == "New city"

    def bigger(dlg):
        if not isinstance(dlg, ResizeDialog):
            return False
        dlg.height_box.setValue(113)
        dlg.accept()
        return True

    answered = _answer_modal(qtbot, bigger)
    ed.resize_action.trigger()
    assert answered and cfg.city.shape == (113, 103) and win.map.city.shape == (113, 103)

    out = tmp_path / "exported.yaml"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    ed.export_action.trigger()
    assert np.array_equal(load_map(out).building, cfg.city.building)
    win.window.activateWindow()                                            # the dialogs had the focus
    qtbot.waitUntil(win.window.isActiveWindow, timeout=5000)
    undo()
    undo()                                                          # back to the bundled city
    assert cfg.city.shape == (241, 241)
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(out), ""))
    ed.import_action.trigger()
    assert cfg.city.shape == (113, 103) and stack.undo_text() == "Import city exported.yaml"


def test_edited_city_and_agents_save_and_reopen_equal(qtbot, win, tmp_path, monkeypatch):
    """A stroke and an agent edit, File ▸ Save project as… (Ctrl+Shift+S), then the saved project opened in a new
    window: the same city, layer for layer, and the same agents."""
    from PySide6 import QtWidgets

    from core.base.codes import Kind
    from core.studio import agent_sets as A

    ed = win.features["city_editor"]
    qtbot.keyClick(win.window, Qt.Key.Key_E)
    win.map.vb.setRange(QtCore.QRectF(0, 0, 60, 60), padding=0)
    qtbot.wait(50)
    qtbot.keyClick(win.window, Qt.Key.Key_1)                               # a House stroke
    _stroke(qtbot, win, [(13, 20), (13, 30)])
    assert ed.tool_key == "House" and win.session.stack.count == 1
    car = next(i for i, a in enumerate(win.session.project.config.agents) if a.kind is Kind.CAR)
    win.features["agent_editor"].run(A.edit(win.session, "agents", [car], priority=5))   # as the dock does
    city, aset = win.session.project.config.city, win.session.project.config.agents
    root = tmp_path / "edited"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: str(root))
    qtbot.keyClick(win.window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: (root / "project.yaml").exists() and not win.session.modified, timeout=60_000)
    other = open_window(qtbot, tmp_path / "s2.ini", root)
    try:
        cfg = other.session.project.config
        assert cfg.agents == aset
        for layer in ("building", "street", "drivable", "walkable"):
            assert np.array_equal(getattr(cfg.city, layer), getattr(city, layer)), layer
    finally:
        close_window(other)
