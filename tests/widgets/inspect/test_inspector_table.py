"""The inspector's true-predicates table: the ego's relations are open, another entity's relation rows are made
when the user expands it (a crowded view has hundreds), an expanded entity stays expanded from step to step, and
double-clicking a relation row asks for its entity."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.view.inspect import Inspector  # noqa: E402
from tests.support.qt import paint_spy  # noqa: E402
from tests.support.studio import recorded_run  # noqa: E402


@pytest.fixture(scope="module")
def run():
    return recorded_run("default", 30)


def crowded_view(cfg, ep):
    """(step, agent, report) of a view with at least two entities that have relations."""
    ins = Inspector(cfg)
    for k in range(5, ep.num_steps):
        for a in range(len(ep.agents)):
            r = ins.report(ep, k, a)
            if sum(1 for row in r.view if row.relations) >= 2 and r.view[0].relations:
                return k, a, r, ins
    pytest.fail("no agent sees two related entities in the run")


def test_relations_of_other_entities_are_made_when_expanded(qtbot, inspector, run):
    cfg, ep = run
    k, a, rep, ins = crowded_view(cfg, ep)
    w = inspector
    w.resize(420, 700)
    w.show()
    w.set_report(rep)
    table = w.table
    ego = table.topLevelItem(0)
    assert ego.isExpanded() and [ego.child(c).text(1) for c in range(ego.childCount())] == list(rep.view[0].relations)
    j = next(j for j, row in enumerate(rep.view) if j > 0 and row.relations)
    other = table.topLevelItem(j)
    assert not other.isExpanded() and other.childCount() == 0
    assert other.childIndicatorPolicy() == other.ChildIndicatorPolicy.ShowIndicator
    # the user opens it with the keyboard
    table.setFocus()
    table.setCurrentItem(other)
    qtbot.keyClick(table.viewport(), QtCore.Qt.Key.Key_Right)
    qtbot.waitUntil(other.isExpanded, timeout=2000)
    assert [other.child(c).text(1) for c in range(other.childCount())] == list(rep.view[j].relations)
    # the next step of the same agent: that entity (if still in view) stays expanded
    nxt = ins.report(ep, k + 1, a)
    w.set_report(nxt)
    names = [table.topLevelItem(i).text(0).split("  ")[0] for i in range(table.topLevelItemCount())]
    if rep.view[j].name in names and nxt.view[names.index(rep.view[j].name)].relations:
        assert table.topLevelItem(names.index(rep.view[j].name)).isExpanded()
    # double-clicking a relation row asks for its entity
    item = table.topLevelItem(0).child(0)
    table.scrollToItem(item)
    qtbot.waitUntil(lambda: table.visualItemRect(item).isValid() and
                    table.viewport().rect().contains(table.visualItemRect(item).center()), timeout=2000)
    rect = table.visualItemRect(item)
    qtbot.mouseClick(table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())   # (a tree view takes a
    with qtbot.waitSignal(w.agentRequested, timeout=2000) as sig:                      # double click after a press)
        qtbot.mouseDClick(table.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=rect.center())
    assert sig.args == [a]


def rows_of(table) -> list:
    """Every row of the table as shown: (entity, predicates, tooltip, bold, agent, expanded, child rows)."""
    out = []
    for i in range(table.topLevelItemCount()):
        it = table.topLevelItem(i)
        out.append((it.text(0), it.text(1), it.toolTip(1), it.font(0).bold(), it.data(0, QtCore.Qt.ItemDataRole.UserRole),
                    it.isExpanded(), [it.child(c).text(1) for c in range(it.childCount())]))
    return out


def test_rows_updated_in_place_show_what_a_new_table_shows(qtbot, run):
    """The table updates its rows in place from step to step and agent to agent: what it shows is what a new
    inspector shows for the same report, and the explanation keeps the tallest height it needed for the agent."""
    from widgets.inspect.inspector import InspectorWidget

    cfg, ep = run
    ins = Inspector(cfg)
    kept = InspectorWidget()
    qtbot.addWidget(kept)
    kept.resize(420, 700)
    kept.show()
    held = []
    for a in (0, 3, 0):
        for k in range(5, 25, 3):
            rep = ins.report(ep, k, a)
            kept.set_report(rep)
            fresh = InspectorWidget()
            qtbot.addWidget(fresh)
            fresh.resize(420, 700)
            fresh.show()
            fresh.set_report(rep)
            assert rows_of(kept.table) == rows_of(fresh.table)
            held.append((a, kept.summary.height()))
            fresh.close()
    assert min(h for _, h in held) >= kept.summary.floor_height()
    for (a0, h0), (a1, h1) in zip(held, held[1:]):
        assert a0 != a1 or h1 >= h0   # the same agent: never shorter (no re-layout of the dock below it)


def test_the_ego_s_relation_rows_are_updated_in_place(qtbot, inspector, run):
    """From step to step the ego's relation rows are given their new texts, and only the missing ones are made
    (or the extra ones removed): removing all of them and making new ones made the view lay every row out again."""
    cfg, ep = run
    ins = Inspector(cfg)
    w = inspector
    w.resize(420, 700)
    w.show()
    model = w.table.model()
    changed = []
    model.rowsInserted.connect(lambda parent, a, b: changed.append(b - a + 1) if parent.isValid() else None)
    model.rowsRemoved.connect(lambda parent, a, b: changed.append(-(b - a + 1)) if parent.isValid() else None)
    seen = 0
    for a in range(len(ep.agents)):
        prev = None
        for k in range(5, ep.num_steps):
            rep = ins.report(ep, k, a)
            changed.clear()
            w.set_report(rep)
            ego = w.table.topLevelItem(0)
            now = [ego.child(c).text(1) for c in range(ego.childCount())]
            assert now == list(rep.view[0].relations)
            if prev is not None and prev and now and prev != now:
                seen += 1
                assert sum(abs(n) for n in changed) == abs(len(now) - len(prev)), (changed, len(prev), len(now))
            prev = now
        if seen >= 3:
            break
    assert seen >= 3



def test_a_collapsed_entity_s_new_relations_change_no_row_and_show_when_expanded(qtbot, inspector, run):
    """A collapsed entity whose relations change from step to step (same name and predicates) keeps its row as it
    is (its relations wait outside the tree until it is expanded: no change of the row, no copy into Qt), and
    expanding it then shows the new relations."""
    cfg, ep = run
    ins = Inspector(cfg)
    w = inspector
    w.resize(420, 700)
    w.show()
    t = w.table
    changed: list[int] = []
    t.itemChanged.connect(lambda item, col: changed.append(t.indexOfTopLevelItem(item)) if item.parent() is None
                          else None)
    seen = 0
    for a in range(len(ep.agents)):
        prev = None
        for k in range(5, ep.num_steps):
            rep = ins.report(ep, k, a)
            changed.clear()
            w.set_report(rep)
            if prev is not None:
                same = [j for j, (r0, r1) in enumerate(zip(prev.view, rep.view)) if j and r0.name == r1.name
                        and r0.unary == r1.unary and r0.relations != r1.relations and r1.relations
                        and not t.topLevelItem(j).isExpanded()]
                for j in same:
                    seen += 1
                    assert j not in changed, (k, a, j)
                if same and seen >= 3:
                    item = t.topLevelItem(same[0])
                    item.setExpanded(True)
                    assert [item.child(c).text(1) for c in range(item.childCount())] == \
                        list(rep.view[same[0]].relations)
                    return
            prev = rep
    pytest.fail(f"only {seen} collapsed entities with new relations in the run")




def test_a_new_step_repaints_the_table_s_rows_not_its_frame_and_group_box(qtbot, inspector, run):
    """The rows of a new step are repainted, and the scroll bar whose range changed paints its own background:
    the table's frame, its group box and the splitter beneath are not painted again (each a paint of its own)."""
    from PySide6 import QtWidgets

    cfg, ep = run
    ins = Inspector(cfg)
    w = inspector
    w.resize(420, 560)
    w.show()
    qtbot.waitExposed(w)
    t = w.table
    app = QtWidgets.QApplication.instance()
    checked = 0
    for a in range(len(ep.agents)):
        for k in range(5, ep.num_steps):
            w.set_report(ins.report(ep, k, a))
            qtbot.wait(10)
            bar = t.verticalScrollBar().isVisible()
            rep = ins.report(ep, k + 1, a) if k + 1 <= ep.num_steps else None
            if rep is None or rep.view == w.report.view:
                continue
            spy = paint_spy()
            app.installEventFilter(spy)
            try:
                w.set_report(rep)
                qtbot.waitUntil(lambda spy=spy: t.viewport() in spy.painted, timeout=2000)
                qtbot.wait(10)
            finally:
                app.removeEventFilter(spy)
            if t.verticalScrollBar().isVisible() != bar:
                continue   # the scroll bar shown or hidden: the frame is repainted where it was
            checked += 1
            assert not {id(x) for x in (t, w.view_box, w.splitter)} & {id(x) for x in spy.painted}
            if checked >= 4:
                return
    assert checked >= 4
