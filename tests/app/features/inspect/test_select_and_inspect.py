"""What the studio window shows of the run (pytest-qt): clicking selects an agent and the inspector agrees with the
logic core, Follow keeps it centred, colour-by recolours glyphs and legend, the intersection overlay shows over
glyphs and icon art alike."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.studio import WAIT, simulate

pytest.importorskip("pytestqt")

from PySide6 import QtCore, QtWidgets  # noqa: E402


def test_clicking_an_agent_selects_it_and_the_inspector_matches_the_core(studio, qtbot):
    from core.base.codes import ACTION_NAMES
    from core.logic.grounding.grounder import Grounder

    simulate(qtbot, studio, 12)
    k = 6
    studio.set_cursor(k)
    studio.flush_redraw()
    i = 4
    r, c = studio.history.snapshot(k).positions[i]
    studio.map.fit()
    qtbot.wait(20)
    scene_pt = studio.map.scene_pos_of_cell(r, c)
    view_pt = studio.map.mapFromScene(scene_pt)
    qtbot.mouseClick(studio.map.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=view_pt)
    qtbot.waitUntil(lambda: studio.selected is not None, timeout=WAIT)
    picked = studio.selected
    assert tuple(studio.history.snapshot(k).positions[picked]) == (r, c)   # an agent on the clicked cell
    rep = studio.inspector.report
    assert rep is not None and rep.agent == picked and rep.step == k
    cfg = studio.project.config
    snap = studio.history.snapshot(k)
    grounding = Grounder(cfg.city, cfg.ontology).ground(snap, np.random.default_rng(0))
    assert rep.fired_clause == int(studio.history.step_record(k).fired[picked])   # recorded, not re-decided
    assert "recorded" in studio.inspector.summary.parts.why_title and "re-grounded" in studio.inspector.view_box.title()
    assert studio.inspector.summary.parts.facts["Action"].startswith(
        f"<b>{ACTION_NAMES[int(studio.history.step_record(k).decided[picked])]}</b>")
    assert studio.inspector.summary.parts.facts["Position"] == f"row {r}, col {c}"
    table = studio.inspector.table
    names_in_table = [table.topLevelItem(j).text(0).split("  ")[0] for j in range(table.topLevelItemCount())]
    view = grounding.ego_view(picked)
    assert names_in_table == [row.name for row in view.rows]
    for j, row in enumerate(view.rows):      # every true predicate of the core's view, and nothing else
        item = table.topLevelItem(j)
        if row.agent != picked:
            assert not item.isExpanded()      # the ego's relations are open, the others' made on demand
        table.expandItem(item)
        assert item.text(1) == (", ".join(row.unary) or "—")
        assert [item.child(c).text(1) for c in range(item.childCount())] == \
            [f"{p}({row.name}, {o})" for p, o in row.relations]
    if rep.fired:
        assert rep.fired in studio.inspector.summary.parts.why.replace("&lt;", "<").replace("&gt;", ">") or \
            rep.fired.split(":")[0] in studio.inspector.summary.parts.why
    # hovering names the cell, its semantic and the agent on it
    studio.map._on_mouse_moved(scene_pt)
    hover = studio.status_labels.hover_label.text()
    assert f"cell ({r}, {c})" in hover and studio.history.agents.names[picked] in hover
    from core.view.colouring import semantic_at

    assert semantic_at(cfg.city, r, c) in hover
    # the action plot's cursor follows the timeline
    studio.set_cursor(9)
    studio.flush_redraw()
    assert studio.inspector.cursor.value() == 9
    # selected agent's field of view and path are drawn; empty click deselects
    assert studio.map.fov_item.isVisible() and studio.map.select_item.isVisible()
    studio.map.agentClicked.emit(-1)
    assert studio.selected is None and not studio.map.fov_item.isVisible()


def test_text_selected_in_the_inspector_can_be_copied_and_keeps_the_studio_s_keys(studio, qtbot):
    """Selecting the inspector's text with the mouse gives it the keyboard for Ctrl+C, and the studio's keys still
    work there: Space plays and pauses, the arrows move the shown step (the summary does not take them)."""
    simulate(qtbot, studio, 6)
    studio.select_agent(0)
    studio.set_cursor(3)
    qtbot.waitUntil(lambda: studio.inspector.report is not None and studio.inspector.report.step == 3, timeout=WAIT)
    summary = studio.inspector.summary
    vp = summary.viewport()
    qtbot.mousePress(vp, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(4, 6))
    qtbot.mouseMove(vp, QtCore.QPoint(vp.width() - 4, vp.height() // 2))
    qtbot.mouseRelease(vp, QtCore.Qt.MouseButton.LeftButton, pos=QtCore.QPoint(vp.width() - 4, vp.height() // 2))
    assert summary.textCursor().hasSelection()
    focus = QtWidgets.QApplication.focusWidget()
    assert focus in (summary, vp)
    qtbot.keyClick(focus, QtCore.Qt.Key.Key_C, QtCore.Qt.KeyboardModifier.ControlModifier)
    words = QtWidgets.QApplication.clipboard().text().split()     # (the document's spaces are non-breaking)
    assert words and words == summary.textCursor().selectedText().split()
    assert studio.inspector.report.name in QtWidgets.QApplication.clipboard().text()
    qtbot.keyClick(focus, QtCore.Qt.Key.Key_Left)
    assert studio.cursor == 2
    studio.set_speed(0)
    qtbot.keyClick(focus, QtCore.Qt.Key.Key_Space)            # play
    qtbot.waitUntil(lambda: studio.num_steps >= 10, timeout=WAIT)
    qtbot.keyClick(focus, QtCore.Qt.Key.Key_Space)            # pause
    qtbot.waitUntil(lambda: not studio.simulation.worker.playing, timeout=WAIT)


def test_follow_keeps_the_selected_agent_centred(studio, qtbot):
    simulate(qtbot, studio, 6)
    studio.select_agent(1)
    studio.map.zoom(0.3)
    studio.action("View", "Follow selected agent").setChecked(True)
    for k in (0, 3, 6):
        studio.set_cursor(k)
        studio.flush_redraw()
        r, c = studio.history.snapshot(k).positions[1]
        (x0, x1), (y0, y1) = studio.map.vb.viewRange()
        assert abs((x0 + x1) / 2 - (c + 0.5)) < 1.0 and abs((y0 + y1) / 2 - (r + 0.5)) < 1.0


def test_colour_by_changes_glyph_colours_and_legend(studio, qtbot):
    from core.view.colouring import ACTION_COLOURS

    simulate(qtbot, studio, 5)
    studio.set_cursor(2)
    studio.set_colour_scheme("Action (next)")
    studio.flush_redraw()
    dec = studio.history.step_record(2).decided
    colours = studio.map.agent_item.rgb          # the glyphs' fill colours, as drawn (widgets/map_glyphs.py)
    from core.base.codes import ACTION_NAMES

    for i, c in enumerate(colours):
        assert tuple(int(v) for v in c) == ACTION_COLOURS[ACTION_NAMES[int(dec[i])]]
    assert studio.legend._agent_title.title() == "Agents — Action (next)"
    assert studio.feature("view").colour_combo.currentText() == "Action (next)"


def test_intersection_overlay_shows_over_icon_art(studio, qtbot):
    import numpy as np

    from app.features.export.animation import qimage_to_rgb

    win = studio
    simulate(qtbot, win, 2)
    for icons in (False, True):
        win.action("View", "Draw agents as icon art").setChecked(icons)
        assert win.map.style == ("icons" if icons else "glyphs"), win.last_error
        shots = []
        for on in (False, True):
            win.action("View", "Show intersections").setChecked(on)
            win.flush_redraw()
            QtWidgets.QApplication.processEvents()
            shots.append(qimage_to_rgb(win.map.render_image(600)).astype(int))
        changed = np.abs(shots[0] - shots[1]).sum(axis=2) > 30
        assert changed.mean() > 0.01, (icons, changed.mean())      # the overlay is visible in both styles
    assert win.map.inter_item.zValue() > win.map.icon_item.zValue()
