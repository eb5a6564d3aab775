"""The agent editor's files in the studio: the reference agent YAML imports as before, export → import gives the same
set, and projects keep agent edits and branch recordings across save → reopen (the branch can be continued)."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from core.agents.io import load_agent_set
from core.agents.reference import import_reference_agents
from core.base.codes import Kind
from core.studio import agent_sets as A
from core.studio.apply import BRANCH_KEY, apply_status
from tests.support.paths import MODES, REFERENCE_CONFIGS
from tests.support.studio import WAIT, simulate
from widgets.agent_editor.editor import GenerateDialog

Qt = QtCore.Qt
REF = REFERENCE_CONFIGS / "master" / "config" / "agents" / "easy" / "val.yaml"


def test_reference_import_export_and_undo(studio, qtbot, tmp_path):
    win = studio
    ctl = win.features["agent_editor"]
    ctl.show_panel()
    before = win.session.project.config.agents
    assert ctl.import_file(REF)
    assert win.session.project.config.agents == import_reference_agents(REF)
    assert ctl.panel.model.rowCount() == len(import_reference_agents(REF))
    out = tmp_path / "out.yaml"
    ctl.run(A.place(win.session, ctl.tab, 0, start=(15, 15)))
    assert ctl.export_file(out)
    assert load_agent_set(out) == win.session.project.config.agents
    win.action("Edit", "Undo").trigger()
    win.action("Edit", "Undo").trigger()
    assert win.session.project.config.agents == before
    assert ctl.import_file(out) and win.session.project.config.agents == load_agent_set(out)
    bad = tmp_path / "bad.yaml"
    bad.write_text("agents:\n- {type: Pedestrian, id: 1, concepts: [ambulance]}\n")
    assert not ctl.import_file(bad) and win.last_error is not None           # a located error dialog
    assert win.session.project.config.agents == load_agent_set(out)          # nothing changed


def test_saved_branch_reopens_continuable_and_edits_survive(studio, qtbot, tmp_path):
    win = studio
    ctl = win.features["agent_editor"]
    simulate(qtbot, win, 10)
    win.set_cursor(6)
    car = next(i for i, a in enumerate(win.session.project.config.agents) if a.kind is Kind.CAR)
    ctl.run(A.edit(win.session, ctl.tab, [car], priority=7))
    win.answers["apply_branch"] = "branch"
    assert ctl.apply("branch")
    qtbot.waitUntil(lambda: win.history is not None and BRANCH_KEY in win.history.meta, timeout=WAIT)
    simulate(qtbot, win, 4)
    steps = win.num_steps
    root = tmp_path / "proj"
    assert win.save_to(root)
    assert win.open_path(root, ask_save=False)
    qtbot.waitUntil(lambda: win.history is not None and not win.syncing, timeout=WAIT)
    assert win.num_steps == steps and win.playback.sim_steps == steps     # re-simulated exactly: continuable
    assert win.history.meta[BRANCH_KEY]["step"] == 6 and not apply_status(win.session).pending
    # edits saved before Apply: the project opens with them (the old recording stays in its file)
    ctl.run(A.add(win.session, ctl.tab, Kind.CAR))
    n = len(win.session.project.config.agents)
    assert win.save_to(root)
    assert win.open_path(root, ask_save=False)
    qtbot.waitUntil(lambda: win.history is not None and not win.syncing, timeout=WAIT)
    assert len(win.session.project.config.agents) == n == len(win.history.agents)
    assert "made with other agents" in win.last_message


def test_split_mode_tabs_in_the_dock(qtbot, settings_path):
    from tests.support.studio import close_window, open_window

    win = open_window(qtbot, settings_path, MODES / "spf_easy.yaml")
    try:
        ctl = win.features["agent_editor"]
        ctl.show_panel()
        tabs = ctl.panel.tabs
        assert [tabs.tabData(i) for i in range(tabs.count())] == ["train", "val", "test"]
        assert tabs.tabText(0) == "train ●" and not ctl.panel.activate.isEnabled()
        qtbot.mouseClick(tabs, Qt.MouseButton.LeftButton, pos=tabs.tabRect(1).center())   # the val tab
        assert ctl.tab == "val" and ctl.panel.model.rowCount() == len(A.agent_set(win.session, "val"))
        qtbot.mouseClick(ctl.panel.activate, Qt.MouseButton.LeftButton)
        assert A.active_tab(win.session) == "val" and tabs.tabText(1) == "val ●"
        assert win.session.project.config.agents == A.agent_set(win.session, "val")
        win.action("Edit", "Undo").trigger()
        assert A.active_tab(win.session) == "train"
    finally:
        close_window(win)


def test_generate_dialog_replaces_the_set_in_one_undoable_step(studio, qtbot):
    win = studio
    ctl = win.features["agent_editor"]
    ctl.show_panel()
    before = win.session.project.config.agents
    qtbot.mouseClick(ctl.panel.generate, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: any(isinstance(w, GenerateDialog) and w.isVisible()
                                for w in QtWidgets.QApplication.topLevelWidgets()), timeout=WAIT)
    dlg = next(w for w in QtWidgets.QApplication.topLevelWidgets() if isinstance(w, GenerateDialog) and w.isVisible())
    for (kind, concept), sb in dlg.spins.items():
        sb.setValue({(Kind.CAR, "normal"): 3, (Kind.CAR, "ambulance"): 2, (Kind.PEDESTRIAN, "old"): 4}.get(
            (kind, concept), 0))
    dlg.seed.setValue(11)
    dlg.accept()
    agents = win.session.project.config.agents
    assert len(agents) == 9 and sum(a.concepts == ("ambulance",) for a in agents) == 2
    assert ctl.panel.model.rowCount() == 9
    win.action("Edit", "Undo").trigger()
    assert win.session.project.config.agents == before
