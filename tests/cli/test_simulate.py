"""`main.py simulate`: a run saved as an episode with its configuration embedded; a bad mode file and bad
arguments are clean errors, refused before any simulation runs."""
import subprocess
import sys

from core.sim.episode import load_episode
from tests.support.paths import MODES, ROOT


def test_cli_simulate(tmp_path):
    out = tmp_path / "ep.npz"
    r = subprocess.run([sys.executable, "main.py", "simulate", "--config", str(MODES / "sim_easy.yaml"),
                        "--steps", "20", "--seed", "1", "--out", str(out), "--quiet"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "goals reached" in r.stdout and "seconds per step" in r.stdout and "Stop" in r.stdout
    ep = load_episode(out)
    assert ep.num_steps == 20 and "config_texts" in ep.meta and "map" in ep.meta["config_texts"]


def test_cli_bad_config_is_clean_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmap: nowhere.yaml\nagents: a.yaml\nontology: o.yaml\nrules: r.rules\n")
    r = subprocess.run([sys.executable, "main.py", "simulate", "--config", str(bad), "--steps", "1"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "bad.yaml:2" in r.stderr and "not found" in r.stderr and "Traceback" not in r.stderr


def test_cli_checks_output_before_simulating(tmp_path):
    for args, msg in ((["--out", str(tmp_path)], "is a folder"), (["--seed", "-1"], "--seed must be >= 0")):
        r = subprocess.run([sys.executable, "main.py", "simulate", "--steps", "1", "--quiet", *args], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr
        assert "mode default" not in r.stdout  # refused before any simulation ran
