"""Closing the studio while the Render dock loads a model or finishes an image ends the process cleanly.

Each scenario runs tests/support/icongen_close_probe.py in a fresh interpreter (the exit code and Qt's
"QThread: Destroyed while thread … is still running" abort can only be seen from outside). Model loading cannot be interrupted, so the
studio must keep the thread alive, say that it waits, and close once the worker has stopped.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.render.library import IconLibrary
from tests.support.paths import ROOT

pytestmark = pytest.mark.gui


#: scenario -> seconds the slow part takes; the window scenarios outlast a 5 s timeout, so closing must wait for the
#: thread itself rather than destroy it while it runs
SCENARIOS = {"window-load": 6.0, "window-post": 6.0, "dock-quit": 2.0}


@pytest.fixture(scope="module")
def probes(tiny_sd_model, tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, dict, Path]]:
    """Run every scenario at once (each in its own interpreter), then collect what each saw."""
    running = {}
    for scenario, slow in SCENARIOS.items():
        tmp = tmp_path_factory.mktemp(scenario)
        env = {**os.environ, "LOGICITY_DATA_DIR": str(tmp / "data")}
        running[scenario] = (tmp, subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "support" / "icongen_close_probe.py"), str(tiny_sd_model), scenario,
             str(slow), str(tmp / "lib")], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    out = {}
    for scenario, (tmp, proc) in running.items():
        try:
            stdout, stderr = proc.communicate(timeout=240)   # after the probe's own limit (slow + 150 s)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
        lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
        out[scenario] = (subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr),
                         json.loads(lines[-1]) if lines else {}, tmp)
    return out


@pytest.mark.parametrize("scenario", ["window-load", "window-post"])
def test_closing_the_studio_while_the_icon_generator_is_busy_exits_cleanly(probes, scenario):
    r, seen, tmp = probes[scenario]
    assert "Destroyed while thread" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 0, r.stderr[-3000:]
    assert not seen.get("timed_out"), seen
    assert seen["visible_after_close"], "the window stays open (and says why) until the generator has stopped"
    assert any("Waiting for the icon generator to stop" in m for m in seen["messages"]), seen
    assert "waiting for the icon generator to stop" in seen["dock_status"].lower()
    if scenario == "window-post":  # the image being post-processed when the window closed is saved
        assert len(seen["saved"]) == 1 and IconLibrary(tmp / "lib").list("bus")


def test_closing_a_render_dock_and_quitting_at_once_waits_for_the_thread(probes):
    r, seen, _tmp = probes["dock-quit"]
    assert "Destroyed while thread" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 0, r.stderr[-3000:]
    assert not seen.get("timed_out") and not seen["visible_after_close"], seen
    assert "waiting for the icon generator to stop" in r.stderr  # the quitting process says what it waits for
