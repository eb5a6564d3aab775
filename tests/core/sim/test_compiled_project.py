"""One compiled project per config (core/sim/compiled.py): every reader of a config shares its grounder and engine,
the memo follows the config's lifetime and its parts, and sharing changes no recorded value."""
from __future__ import annotations

import gc
import threading
import weakref
from dataclasses import replace

import numpy as np
import pytest

from core.base.errors import ConfigError
from core.map.generate import generate_city
from core.sim.compiled import compiled_project, make_engine
from core.sim.scene import capture_scene, scene_problems
from core.sim.simulation import Simulation
from core.view.inspect import Inspector
from tests.support.studio import assert_same_episode, default_config


def fresh_config():
    """A config object of its own (the memo is per object)."""
    return replace(default_config())


def test_the_simulation_the_inspector_and_scenes_share_one_grounder(monkeypatch):
    cfg = fresh_config()
    project = compiled_project(cfg)
    assert compiled_project(cfg) is project
    sim = Simulation(cfg, seed=0)
    assert sim.grounder is project.grounder and sim.engine is project.engine()
    assert sim.program is project.program is cfg.program
    assert Inspector(cfg).grounder is project.grounder
    seen = []
    real = type(project.grounder).coin_pairs

    def spy(self, snap):
        seen.append(self)
        return real(self, snap)

    monkeypatch.setattr(type(project.grounder), "coin_pairs", spy)
    scene_problems(cfg, replace(capture_scene(sim), coins={("CollidingClose", 0, 1): True}))
    assert seen and all(g is project.grounder for g in seen)


def test_another_config_object_or_a_replaced_part_gets_its_own_project():
    cfg = fresh_config()
    project = compiled_project(cfg)
    assert compiled_project(replace(cfg)) is not project      # equal content, another object
    cfg.city = generate_city(3, blocks=(2, 2))                 # the city editor replaces the city in place
    rebuilt = compiled_project(cfg)
    assert rebuilt is not project and rebuilt.grounder.city is cfg.city
    assert compiled_project(cfg) is rebuilt


def test_a_dropped_config_frees_its_project():
    cfg = fresh_config()
    project = weakref.ref(compiled_project(cfg))
    del cfg
    gc.collect()
    assert project() is None


def test_threads_asking_at_once_get_one_project():
    cfg = fresh_config()
    start = threading.Barrier(8)
    got = []

    def ask():
        start.wait()
        got.append(compiled_project(cfg))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(p is got[0] for p in got)


def test_engines_are_built_once_per_name():
    project = compiled_project(fresh_config())
    assert project.engine() is project.engine("compiled") is project.engine()
    assert type(project.engine("z3")).__name__ == "Z3Engine" and project.engine("z3") is project.engine("z3")
    with pytest.raises(ConfigError, match="unknown engine 'nope'"):
        make_engine("nope", project.program)


def test_simulations_stepping_on_one_project_record_what_separate_ones_do():
    """Two simulations of one config, stepped in turns (so they share the grounder's and engine's caches), record
    exactly what simulations of two unrelated configs do."""
    shared = fresh_config()
    a, b = Simulation(shared, seed=1), Simulation(shared, seed=2)
    for _ in range(40):
        a.step()
        b.step()
        Inspector(shared).report(a.buffer, a.buffer.num_steps, 3)   # the inspector grounds on the same grounder
    for sim, seed in ((a, 1), (b, 2)):
        alone = Simulation(fresh_config(), seed=seed)
        alone.run(40)
        assert alone.grounder is not sim.grounder
        assert_same_episode(sim.buffer, alone.buffer)
        assert np.array_equal(sim.positions, alone.positions)
