"""Scene files (core.sim.scene_io): a captured state survives a save/load round trip and still steps like the
original; structural errors name file and line, and so do problems found when the scene is installed."""

import numpy as np
import pytest

from core.base.errors import ConfigError
from core.sim.config import load_mode
from core.sim.scene import SceneError, build_simulation, capture_scene
from core.sim.scene_io import dumps_scene, load_scene, loads_scene, save_scene, scene_from_data, scene_to_data
from core.sim.simulation import Simulation
from tests.support.paths import MODES


@pytest.fixture(scope="module")
def cfg():
    return load_mode(MODES / "sim_expert.yaml")


@pytest.fixture(scope="module")
def captured(cfg):
    sim = Simulation(cfg, seed=5)
    sim.run(30)
    return sim, capture_scene(sim)


def test_round_trip_keeps_the_state_and_its_future(cfg, captured, tmp_path):
    sim, scene = captured
    scene = scene.with_coins({})
    path = save_scene(scene, tmp_path / "state.yaml")
    back = load_scene(path)
    assert back == scene and back.rng_state == scene.rng_state
    assert scene_from_data(scene_to_data(scene)) == scene                   # plain data (JSON) too
    a, b = build_simulation(cfg, scene), build_simulation(cfg, back)
    a.run(25)
    b.run(25)
    for f in ("positions", "decided", "fired", "witness", "reached"):
        assert np.array_equal(a.buffer.array(f), b.buffer.array(f)), f


def test_one_agent_per_line_and_coins_kept(captured):
    _, scene = captured
    forced = scene.with_coins({("Pedestrian_1", "Car_2"): True, ("CollidingClose", 0, 3): False})
    text = dumps_scene(forced)
    lines = text.splitlines()
    assert sum(1 for line in lines if line.startswith("- {type:")) == len(scene)
    assert loads_scene(text).coins == forced.coins


@pytest.mark.parametrize("text, line, words", [
    ("version: 1\nagents:\n- {type: Car}\n- {type: Bus}\n", 4, "type must be 'Pedestrian' or 'Car'"),
    ("version: 1\nagents:\n- {type: Car, colour: red}\n", 3, "unknown key 'colour'"),
    ("version: 1\nagents:\n- {type: Car}\n- {type: Car, position: [1, 2, 3]}\n", 4, "[row, col]"),
    ("version: 1\nagents:\n- {type: Car, path: [[1, 2], [3]]}\n", 3, "path cell 1"),
    ("version: 2\nagents: []\n", 1, "unsupported scene format version 2"),
    ("version: 1\nagents: []\ncoins:\n- {a: 0, b: 1}\n", 4, "missing required key 'outcome'"),
    ("version: 1\nagents: []\nseed: 3\n", 3, "unknown key 'seed'"),
])
def test_structural_errors_are_located(text, line, words):
    with pytest.raises(ConfigError) as err:
        loads_scene(text, "s.yaml")
    assert err.value.file == "s.yaml" and err.value.line == line and words in err.value.message, str(err.value)


def test_problems_found_on_the_city_name_the_agent_line(cfg):
    building = tuple(int(v) for v in np.argwhere(cfg.city.building > 0)[0])
    text = ("version: 1\nagents:\n- {type: Pedestrian}\n"
            f"- {{type: Car, position: [{building[0]}, {building[1]}]}}\n")
    with pytest.raises(SceneError) as err:
        build_simulation(cfg, loads_scene(text, "s.yaml"))
    assert (err.value.file, err.value.line) == ("s.yaml", 4) and "cars drive on" in err.value.message
    dup = "version: 1\nagents:\n- {type: Car, id: 2}\n- {type: Car, id: 2}\n"
    with pytest.raises(SceneError) as err:
        build_simulation(cfg, loads_scene(dup, "d.yaml"))
    assert (err.value.file, err.value.line) == ("d.yaml", 4)
    coins = "version: 1\nagents:\n- {type: Pedestrian}\n- {type: Pedestrian}\ncoins:\n- {a: 0, b: 1, outcome: true}\n"
    with pytest.raises(SceneError) as err:
        build_simulation(cfg, loads_scene(coins, "c.yaml"))
    assert (err.value.file, err.value.line) == ("c.yaml", 5) and "has not moved yet" in err.value.message
