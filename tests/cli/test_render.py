"""`main.py render` on a recorded episode; config embedded in the episode rebuilds the same city."""
import subprocess
import sys

import numpy as np
from PIL import Image

from core.sim.config import load_mode
from core.sim.episode import load_episode
from core.sim.replay import config_from_episode
from core.sim.simulation import Simulation
from tests.support.paths import ROOT


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


def test_render_cli_checks_arguments_before_rendering(tmp_path, capsys, monkeypatch):
    from core.cli import run_cli
    from core.render import renderer

    sim = Simulation(load_mode(ROOT / "configs" / "modes" / "sim_easy.yaml"), seed=1)
    sim.run(2)
    ep = str(sim.buffer.save(tmp_path / "ep.npz"))
    rendered = []
    real_render = renderer.Renderer.render
    monkeypatch.setattr(renderer.Renderer, "render", lambda self, *a, **k: rendered.append(1) or real_render(
        self, *a, **k))
    (tmp_path / "file").write_text("x")
    cases = [  # (arguments, exit code, words of the message)
        (["--crop", "0", "0", "0", "10"], 2, "--crop ROWS and COLS must be positive"),
        (["--crop", "0", "0", "10", "-3"], 2, "--crop ROWS and COLS must be positive"),
        (["--crop", "0", "0", "5000", "5"], 2, "larger than"),
        (["--ppc", "900"], 2, "larger than"),
        (["--out", str(tmp_path / "r.xyz")], 2, "unknown image file extension '.xyz'"),
        (["--out", str(tmp_path / "noext")], 2, "no file extension"),
        (["--out", str(tmp_path)], 2, "is a folder"),
        (["--out", "/proc/x.png"], 1, "cannot write --out /proc/x.png"),
        (["--out", str(tmp_path / "file" / "x.png")], 1, "is a file, not a folder"),
        (["--range", "0", "1", "--out", str(tmp_path / "file")], 2, "give a folder"),
    ]
    for extra, code, words in cases:
        argv = ["render", "--episode", ep] + ([] if "--out" in extra else ["--out", str(tmp_path / "r.png")]) + extra
        assert run_cli(argv) == code, extra
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (extra, err)
    assert rendered == [] and not (tmp_path / "r.png").exists() and not (tmp_path / "r.xyz").exists()
    # bad arguments are reported even before the episode is read
    assert run_cli(["render", "--episode", str(tmp_path / "missing.npz"), "--out", str(tmp_path / "a.png"),
                    "--crop", "0", "0", "0", "1"]) == 2
    assert run_cli(["render", "--episode", ep, "--out", str(tmp_path / "ok.jpg"), "--crop", "0", "0", "4", "4"]) == 0
    assert Image.open(tmp_path / "ok.jpg").size == (32, 32)
