"""Gridlocks on the command line: ``episode gridlock EP.npz`` (text and --json) and the line in ``simulate``'s
summary."""
from __future__ import annotations

import json

import pytest

from core.cli import run_cli
from core.sim.gridlock import DEFAULT_STILL_STEPS
from tests.support.gridlock import lock_scene


@pytest.fixture(scope="module")
def locked_episode(tmp_path_factory):
    """An episode file of the two-car lock-up (scene API), K + 10 steps."""
    from core.sim.config import load_mode
    from core.sim.scene import build_simulation
    from tests.support.studio import DEFAULT_MODE

    sim = build_simulation(load_mode(DEFAULT_MODE), lock_scene(), seed=0)
    sim.run(DEFAULT_STILL_STEPS + 10)
    return sim.buffer.save(tmp_path_factory.mktemp("ep") / "locked.npz")


def test_episode_gridlock_lists_the_cycle(locked_episode, capsys):
    assert run_cli(["episode", "gridlock", str(locked_episode)]) == 0
    out = capsys.readouterr().out
    assert f"K = {DEFAULT_STILL_STEPS} steps" in out
    assert (f"gridlock at step {DEFAULT_STILL_STEPS} (still locked at step {DEFAULT_STILL_STEPS + 10}): "
            "Gridlock of 2 agents, still since step 1: Car_1 waits on Car_2 (Stop#7), Car_2 waits on Car_1 "
            "(Stop#2)") in out


def test_episode_gridlock_json_and_k(locked_episode, capsys):
    assert run_cli(["episode", "gridlock", str(locked_episode), "--json", "--still-steps", "10"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["still_steps"] == 10 and data["steps"] == DEFAULT_STILL_STEPS + 10
    (g,) = data["gridlocks"]
    assert (g["step"], g["since"], g["end"], g["cycle"]) == (10, 1, None, ["Car_1", "Car_2"])
    assert [(lk["agent"], lk["waits_on"], lk["label"]) for lk in g["links"]] == [
        ("Car_1", "Car_2", "Stop#7"), ("Car_2", "Car_1", "Stop#2")]
    # K longer than the recording: nothing
    assert run_cli(["episode", "gridlock", str(locked_episode), "--still-steps", "500"]) == 0
    assert "gridlocks: none (no agents stood still for 500 steps" in capsys.readouterr().out


@pytest.mark.parametrize("argv, rc, expect", [
    (["episode", "gridlock", "{ep}", "--still-steps", "0"], 2, "--still-steps must be >= 1, got 0"),
    (["episode", "gridlock", "{tmp}/missing.npz"], 1, "missing.npz: file not found"),
    (["episode", "gridlock", "{tmp}/bad.npz"], 1, "bad.npz"),
    (["simulate", "--steps", "3", "--still-steps", "-1"], 2, "--still-steps must be >= 1, got -1"),
])
def test_bad_input_is_a_clear_error(locked_episode, tmp_path, capsys, argv, rc, expect):
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    argv = [a.replace("{ep}", str(locked_episode)).replace("{tmp}", str(tmp_path)) for a in argv]
    assert run_cli(argv) == rc
    err = capsys.readouterr().err
    assert expect in err and "Traceback" not in err


def test_simulate_summary_has_a_gridlock_line(capsys):
    assert run_cli(["simulate", "--steps", "5", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"gridlocks: none (no agents stood still for {DEFAULT_STILL_STEPS} steps waiting on one another)" in out
