"""A many-agent simulation records the same episode with the compiled kernels (numba) as with the plain numpy
path: every recorded array, the final state and the random generator's state; and without numba (it cannot be
imported) the simulator runs the numpy path and still records that episode."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

from core.agents.generate import random_agent_set
from core.logic import fast
from core.map.generate import generate_city
from core.sim.config import SimConfig, load_mode
from core.sim.simulation import Simulation
from tests.support.paths import MODES, ROOT

AGENTS, STEPS = 300, 30


def _config() -> SimConfig:
    base = load_mode(MODES / "sim_expert.yaml")
    return SimConfig(city=generate_city(42, blocks=(8, 8)), agents=random_agent_set(AGENTS, seed=42),
                     ontology=base.ontology, rules=base.rules, name="kernels")


def _episode(kernels: bool) -> tuple[dict[str, np.ndarray], str]:
    old = fast.set_enabled(kernels)
    try:
        sim = Simulation(_config(), seed=3, record=True)
        sim.run(STEPS)
    finally:
        fast.set_enabled(old)
    rows = {name: r.used().copy() for name, r in sim.buffer._rows.items()}
    rows["final_positions"] = sim.positions.copy()
    return rows, json.dumps(sim.rng.bit_generator.state, sort_keys=True)


def _digest(rows: dict[str, np.ndarray], rng_state: str) -> str:
    h = hashlib.sha256(rng_state.encode())
    for name in sorted(rows):
        h.update(name.encode() + rows[name].tobytes())
    return h.hexdigest()


@pytest.mark.skipif(not fast.available(), reason="numba is not importable here")
def test_kernels_and_numpy_record_the_same_episode():
    on, on_rng = _episode(True)
    off, off_rng = _episode(False)
    assert on.keys() == off.keys()
    for name in on:
        assert np.array_equal(on[name], off[name]), name
    assert on_rng == off_rng
    # the scene exercises what the kernels replace: coins, fired clauses with witnesses, moves and new trips
    assert (on["fired"] >= 0).any() and (on["witness"] >= 0).any()
    assert on["reached"].any() and len(on["plan_offsets"]) > AGENTS + 1


_NO_NUMBA = """
import sys
sys.modules["numba"] = None          # import numba now fails, as on a machine without it
sys.path.insert(0, {root!r})
from tests.core.sim import test_kernel_episodes as t
from core.logic import fast
assert fast.kernels() is None and not fast.available()
print(t._digest(*t._episode(True)))
"""


def test_without_numba_the_numpy_path_records_the_same_episode():
    out = subprocess.run([sys.executable, "-c", _NO_NUMBA.format(root=str(ROOT))], capture_output=True, text=True,
                         cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == _digest(*_episode(False))
