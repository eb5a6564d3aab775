"""The inspector dock says where its content comes from: the recorded explanation (a forced action as forced by the
user, a fired clause with its witness) and the re-grounded view table."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from core.codes import Action  # noqa: E402
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
    why = w.why.text()
    assert "<b>Forced</b> by the user (action override set at step 4)" in why and "Fired:" not in why
    assert "forced by the user" in w.fields["Action"].text() and "rules derived" not in w.fields["Action"].text()
    assert "recorded" in w.why_box.title() and "re-grounded" in w.view_box.title()


def test_fired_clause_shows_with_its_witness_from_the_recording(inspector, recorded):
    cfg, ep = recorded
    fired = np.asarray(ep.array("fired"))
    witness = np.asarray(ep.array("witness"))
    ks, ags = np.nonzero((fired >= 0) & (witness[..., 0] >= 0))
    k, i = int(ks[0]), int(ags[0])
    w = inspector
    rep = Inspector(cfg).report(ep, k, i)
    w.set_report(rep)
    why = w.why.text()
    assert "Fired:" in why and "Witness:" in why and "Source: from the recorded episode" in why
    assert ep.agents.names[int(witness[k, i, 0])] in why


def test_measured_labels_answer_what_a_plain_label_answers(qtbot):
    """The inspector's labels keep their size hints per text and width (widgets/inspector.py _MeasuredLabel): the
    same answers as a plain QLabel, measured again after a new text, format or font."""
    from PySide6 import QtCore, QtGui, QtWidgets

    from widgets.inspector import _MeasuredLabel

    texts = ["<b>Stop</b><br><span style='color:gray'>rules derived: Stop</span>",
             "Fired: Stop(X) :- CollidingClose(X, Y), Car(Y) — a longer explanation that wraps " * 3, "short"]
    kept, plain = _MeasuredLabel(), QtWidgets.QLabel()
    for lab in (kept, plain):
        lab.setWordWrap(True)
        lab.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        qtbot.addWidget(lab)

    def same() -> None:
        for w in (120, 300, 520):
            assert kept.heightForWidth(w) == plain.heightForWidth(w), w
        assert kept.sizeHint() == plain.sizeHint() and kept.minimumSizeHint() == plain.minimumSizeHint()

    for fmt in (QtCore.Qt.TextFormat.RichText, QtCore.Qt.TextFormat.PlainText):
        for t in texts:
            for lab in (kept, plain):
                lab.setTextFormat(fmt)
                lab.setText(t)
            same()
            same()                          # asked again: kept, still the same
    big = QtGui.QFont(kept.font())
    big.setPointSizeF(big.pointSizeF() * 2)
    before = kept.heightForWidth(120)
    for lab in (kept, plain):
        lab.setFont(big)
    same()
    assert kept.heightForWidth(120) > before
