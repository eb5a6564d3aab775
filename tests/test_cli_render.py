"""`main.py render` on a recorded episode; config embedded in the episode rebuilds the same city."""
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from core.sim.config import load_mode
from core.sim.episode import load_episode
from core.sim.replay import config_from_episode
from core.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent


def test_render_cli_and_embedded_config(tmp_path):
    sim = Simulation(load_mode(ROOT / "configs" / "modes" / "sim_easy.yaml"), seed=1)
    sim.run(12)
    ep_path = sim.buffer.save(tmp_path / "ep.npz")
    cfg = config_from_episode(load_episode(ep_path).meta, ep_path)
    assert np.array_equal(cfg.city.street, sim.city.street)
    assert [a.name for a in cfg.agents] == list(sim.agents.names)
    assert len(cfg.program.clauses) == len(sim.program.clauses)
    out = tmp_path / "frame.png"
    r = subprocess.run([sys.executable, "main.py", "render", "--episode", str(ep_path), "--step", "10", "--out",
                        str(out), "--crop", "0", "0", "128", "128"], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    img = Image.open(out)
    assert img.size == (1024, 1024) and img.mode == "RGB"
    r = subprocess.run([sys.executable, "main.py", "render", "--episode", str(ep_path), "--step", "99", "--out",
                        str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "0..12" in r.stderr
