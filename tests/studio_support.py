"""Helpers shared by the studio tests (Qt-free): the bundled default city and a headless reference run."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODE = ROOT / "configs" / "modes" / "default.yaml"


def default_config():
    from core.sim.config import load_mode

    return load_mode(DEFAULT_MODE)


def run_sim(config, seed: int = 0, steps: int = 20):
    from core.sim.simulation import Simulation

    sim = Simulation(config, seed=seed, record=True)
    for _ in range(steps):
        sim.step()
    return sim
