"""The analysis panel (widgets/rule_editor/analysis_panel.py) on real analyses: a negation cycle drawn in the dependency graph
and listed with its clause lines, an impossible pair with its minimal unsat core, a dead clause; clicking a finding
names its line."""
from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6 import QtCore  # noqa: E402

from core.analysis.report import analyze_rules  # noqa: E402
from core.logic.lang.ontology import load_ontology  # noqa: E402
from core.logic.lang.program import parse_rules  # noqa: E402
from tests.support.paths import ROOT  # noqa: E402
from widgets.rule_editor.analysis_panel import AnalysisPanel  # noqa: E402


@pytest.fixture(scope="module")
def ontology():
    return load_ontology(ROOT / "configs" / "ontologies" / "full.yaml")


def _panel(qtbot, analysis):
    panel = AnalysisPanel()
    qtbot.addWidget(panel)
    panel.resize(500, 600)
    panel.show_analysis(analysis)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_a_negation_cycle_is_listed_and_drawn(qtbot, ontology):
    text = "% a cycle\nStop(X) :- Not(Slow(X)), IsCar(X).\nSlow(X) :- Not(Stop(X)), IsOld(X).\n"
    rules = parse_rules(text, ontology, "cycle.rules", strict=False)
    panel = _panel(qtbot, analyze_rules(rules))
    cyc = panel.items_with("negation cycle")
    assert len(cyc) == 1 and "Stop" in cyc[0].text(0) and "Slow" in cyc[0].text(0)
    lines = {int(cyc[0].child(i).text(1)) for i in range(cyc[0].childCount())}
    assert lines == {2, 3}
    red = [n for n, item in panel.graph.node_items.items() if item.pen().color().name() == "#d1242f"]
    assert sorted(red) == ["Slow", "Stop"]
    got = []
    panel.lineActivated.connect(got.append)
    child = cyc[0].child(0)
    panel.tree.scrollToItem(child)
    qtbot.mouseClick(panel.tree.viewport(), QtCore.Qt.MouseButton.LeftButton,
                     pos=panel.tree.visualItemRect(child).center())
    assert got == [int(child.text(1))]


def test_unsat_core_and_dead_clause_with_their_lines(qtbot, ontology):
    text = ("Stop(X) :- IsCar(X).\n"
            "Slow(X) :- IsPedestrian(X).\n"
            "Fast(X) :- IsCar(X), IsPedestrian(X).\n")
    rules = parse_rules(text, ontology, "t.rules")
    panel = _panel(qtbot, analyze_rules(rules))
    impossible = panel.items_with("Slow + Stop: impossible") + panel.items_with("Stop + Slow: impossible")
    assert impossible, [panel.items_with("")[i].text(0) for i in range(5)]
    core_lines = {impossible[0].child(i).text(1) for i in range(impossible[0].childCount())}
    assert {"1", "2"} <= core_lines
    dead = panel.items_with("Fast#1")
    assert dead and dead[0].text(1) == "3" and "never fires" in dead[0].text(0)
    assert not panel.load_button.isEnabled()
