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
