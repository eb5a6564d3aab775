"""The inspector dock says where its content comes from: the recorded explanation (a forced action as forced by the
user, a fired clause with its witness) and the re-grounded view table."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from core.base.codes import Action  # noqa: E402
from core.view.inspect import Inspector  # noqa: E402
from tests.support.studio import recorded_run  # noqa: E402


@pytest.fixture(scope="module")
def recorded():
    cfg, ep = recorded_run("sim_expert", 20, force=lambda k: {0: Action.STOP} if 4 <= k <= 8 else None)
    ep.meta["interventions"] = [{"step": 4, "agent": 0, "action": int(Action.STOP)},
                                {"step": 9, "agent": 0, "action": None}]
    return cfg, ep


def test_forced_action_shows_as_forced_by_the_user(inspector, recorded):
    cfg, ep = recorded
    w = inspector
    w.set_report(Inspector(cfg).report(ep, 6, 0))
    why = w.summary.parts.why
    assert "<b>Forced</b> by the user (action override set at step 4)" in why and "Fired:" not in why
    action = w.summary.parts.facts["Action"]
    assert "forced by the user" in action and "rules derived" not in action
    assert "recorded" in w.summary.parts.why_title and "re-grounded" in w.view_box.title()


def test_fired_clause_shows_with_its_witness_from_the_recording(inspector, recorded):
    cfg, ep = recorded
    fired = np.asarray(ep.array("fired"))
    witness = np.asarray(ep.array("witness"))
    ks, ags = np.nonzero((fired >= 0) & (witness[..., 0] >= 0))
    k, i = int(ks[0]), int(ags[0])
    w = inspector
    rep = Inspector(cfg).report(ep, k, i)
    w.set_report(rep)
    why = w.summary.parts.why
    assert "Fired:" in why and "Witness:" in why and "Source: from the recorded episode" in why
    assert ep.agents.names[int(witness[k, i, 0])] in why


def test_the_summary_shows_the_report_as_selectable_text(inspector, recorded):
    """Title, facts and explanation are one read-only document (widgets/inspect/agent_summary.py): what it shows is the
    report, Select All + Copy gives it as text, and a new report replaces all of it."""
    from PySide6 import QtGui, QtWidgets

    cfg, ep = recorded
    ins = Inspector(cfg)
    rep = ins.report(ep, 12, 0)
    inspector.set_report(rep, (10, 120, 200))
    text = inspector.summary.plain_text()
    r, c = rep.position
    assert f"{rep.name} at step 12" in text and f"Position: row {r}, col {c}" in text
    assert "Why this action (recorded" in text and "Source: from the recorded episode" in text
    assert "rgb(10, 120, 200)" in inspector.summary.parts.title   # the map colour's swatch
    inspector.summary.selectAll()
    inspector.summary.copy()
    assert f"Position: row {r}, col {c}" in QtWidgets.QApplication.clipboard().text()
    assert inspector.summary.textInteractionFlags() & QtGui.Qt.TextInteractionFlag.TextSelectableByMouse
    other = ins.report(ep, 6, 0)
    inspector.set_report(other)
    assert "at step 6" in inspector.summary.plain_text() and "at step 12" not in inspector.summary.plain_text()
    inspector.clear()
    assert "No agent selected" in inspector.summary.plain_text() and rep.name not in inspector.summary.plain_text()


def test_the_summary_keeps_its_height_for_an_agent_and_fits_a_longer_text(qtbot, inspector, recorded):
    """The summary is never shorter than the usual summary, keeps the tallest height it needed while the same agent
    is shown at the same width (a height that follows each step would re-lay out the dock below it), and grows to
    show a longer text whole."""
    cfg, ep = recorded
    ins = Inspector(cfg)
    inspector.resize(420, 700)
    inspector.show()
    qtbot.waitExposed(inspector)
    s = inspector.summary
    heights = []
    for k in range(2, 18):
        inspector.set_report(ins.report(ep, k, 0))
        heights.append(s.height())
        assert s.height() >= s.floor_height()
        assert s.document().size().height() <= s.height()      # all of it in sight
    assert heights == sorted(heights)
    narrow = s.height()
    inspector.resize(200, 700)         # a narrow dock wraps the facts: taller
    qtbot.wait(10)
    inspector.set_report(ins.report(ep, 17, 0))
    assert s.height() > narrow and s.document().size().height() <= s.height()
