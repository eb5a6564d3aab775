"""Fixtures of the Qt-free session tests: the frames a simulation sends the studio, a saved project."""
from __future__ import annotations

import pytest

from tests.support.studio import save_default_project


@pytest.fixture(scope="module")
def frames(config):
    """The frames a fresh 12-step run of the default city (seed 3) sends the studio: state 0, then one per step."""
    from core.sim.frames import FrameTap
    from core.sim.simulation import Simulation

    sim = Simulation(config, seed=3, record=True)
    tap = FrameTap(sim.buffer)
    out = [tap.initial(sim.agents)]
    for _ in range(12):
        sim.step()
        out.append(tap.frame(sim.agents))
    return out


@pytest.fixture(scope="module")
def saved_root(tmp_path_factory):
    """A saved default-city project (10 recorded steps, step 7 shown, Car_3 selected, a breakpoint at 40)."""
    return save_default_project(tmp_path_factory.mktemp("studio") / "proj")
