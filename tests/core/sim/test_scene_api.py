"""Public scene API (core.sim.scene): a state captured from a real run and rebuilt steps exactly like the original;
hand-made scenes place agents of given kinds and concepts; bad scenes are clear SceneErrors that change nothing;
coins= forces CollidingClose outcomes without shifting the random stream."""
from dataclasses import replace

import numpy as np
import pytest

from core.base.codes import Action, Kind
from core.sim.checkpoint import capture, restore
from core.sim.config import load_mode
from core.sim.replay import config_from_episode
from core.sim.scene import Scene, SceneAgent, SceneError, apply_scene, build_simulation, capture_scene
from core.sim.simulation import Simulation
from tests.support.paths import MODES

RECORDED = ("positions", "headings", "goals", "path_index", "holds", "decided", "realised", "fired", "witness",
            "reached")


@pytest.fixture(scope="module")
def cfg():
    return load_mode(MODES / "sim_expert.yaml")


@pytest.fixture(scope="module")
def run_with_waiting(cfg):
    """A real run stopped at a state where some agent waits on its goal (so goal-wait counters matter)."""
    sim = Simulation(cfg, seed=5)
    for _ in range(400):
        sim.step()
        if sim.reach_goal.any() and sim.step_index > 20:
            break
    assert sim.reach_goal.any(), "no agent reached its goal in 400 steps"
    return sim


def _cells(cfg, kind):
    """Start candidates of a kind (valid cells away from the map border)."""
    sim = Simulation(cfg, seed=0, record=False)
    return sim.sampler.candidate_cells(kind)


def _remaining_paths(buf, k):
    return [buf.remaining_path(k, i).tolist() for i in range(len(buf.agents))]


def test_captured_state_rebuilt_in_a_fresh_simulation_steps_identically(cfg, run_with_waiting):
    scene = capture_scene(run_with_waiting)
    assert any(a.waiting for a in scene.agents)
    orig = Simulation(cfg, seed=5)
    orig.run(run_with_waiting.step_index)            # the same run, kept going below
    assert capture_scene(orig) == scene
    k0 = orig.step_index
    rebuilt = build_simulation(cfg, scene, seed=123)       # another seed: the scene's rng_state wins
    applied = Simulation(cfg, seed=77)
    applied.run(3)                                         # a simulation somewhere else entirely
    apply_scene(applied, scene)
    for sim in (orig, rebuilt, applied):
        sim.run(60)
    for f in RECORDED:
        want = orig.buffer.array(f)[k0:]
        assert np.array_equal(rebuilt.buffer.array(f), want), f
        assert np.array_equal(applied.buffer.array(f), want), f
    for k in (0, 30, 60):
        assert _remaining_paths(rebuilt.buffer, k) == _remaining_paths(orig.buffer, k0 + k)
    assert np.array_equal(rebuilt.goals_reached, orig.goals_reached)
    assert rebuilt.buffer.meta["start"] == "scene"


def test_capture_apply_capture_round_trip(cfg, run_with_waiting):
    scene = capture_scene(run_with_waiting)
    other = Simulation(cfg, seed=1)
    apply_scene(other, scene)
    assert capture_scene(other) == scene
    assert other.step_index == 0 and other.buffer.num_steps == 0


def test_place_agents_of_given_kinds_cells_and_concepts(cfg):
    car_cells, ped_cells = _cells(cfg, Kind.CAR), _cells(cfg, Kind.PEDESTRIAN)
    car, ped = tuple(int(v) for v in car_cells[5]), tuple(int(v) for v in ped_cells[9])
    scene = Scene((SceneAgent("car", position=car, concepts=("ambulance",)),
                   SceneAgent("pedestrian", position=ped, concepts=("old",)),
                   SceneAgent(Kind.CAR, priority=3)))           # start and goal drawn
    sim = build_simulation(cfg, scene, seed=4)
    assert sim.agents.names == ("Car_1", "Pedestrian_1", "Car_2")
    assert sim.agents.concept_names(0) == ["ambulance"] and sim.agents.concept_names(1) == ["old"]
    assert list(sim.agents.priorities) == [1, 0, 3]
    assert tuple(sim.positions[0]) == car and tuple(sim.positions[1]) == ped
    for i in range(3):
        assert np.array_equal(sim.paths[i][0], sim.positions[i]) and np.array_equal(sim.paths[i][-1], sim.goals[i])
    again = build_simulation(cfg, scene, seed=4)
    assert capture_scene(again) == capture_scene(sim)            # open fields drawn from the seed
    sim.run(5)
    # the recording embeds the scene's agents, not the mode's agent file
    assert config_from_episode(sim.buffer.meta).agents.table().names == ("Car_1", "Pedestrian_1", "Car_2")


def test_given_goal_is_planned_and_a_given_path_is_kept(cfg):
    sim = Simulation(cfg, seed=2)
    path = sim.paths[0].copy()
    mid = len(path) // 2
    scene = capture_scene(sim).replace_agent(0, position=tuple(path[mid]), path_index=None, heading="Right")
    apply_scene(sim, scene)
    assert sim.path_index[0] == mid and sim.headings[0] == 1 and np.array_equal(sim.paths[0], path)
    goal = tuple(int(v) for v in path[-1])
    apply_scene(sim, scene.replace_agent(0, position=tuple(path[0]), path=None, path_index=None, goal=goal))
    assert np.array_equal(sim.paths[0], path)                    # the same planner plans the same route


def _bad(scene_agent_changes, cfg, sim=None):
    sim = sim or Simulation(cfg, seed=3)
    scene = capture_scene(sim)
    return sim, scene.replace_agent(0, **scene_agent_changes)


def test_errors_name_the_agent_and_change_nothing(cfg):
    sim = Simulation(cfg, seed=3)
    city = sim.city
    car0 = sim.kinds[0] == Kind.CAR
    building = tuple(int(v) for v in np.argwhere(city.building > 0)[0])
    other_net = tuple(int(v) for v in np.argwhere((city.street == 1.0) if car0 else (city.street == 2.0))[0])
    path = sim.paths[0]
    gap = np.delete(path, 1, axis=0)
    cases = [
        ({"position": building, "path": None, "path_index": None}, "is a "),
        ({"position": other_net, "path": None, "path_index": None}, "drive on" if car0 else "walk on"),
        ({"position": (10_000, 3), "path": None}, "outside the"),
        ({"position": "here"}, "(row, col) pair"),
        ({"path": gap, "path_index": 0, "position": tuple(gap[0])}, "are not neighbours"),
        ({"goal": tuple(path[0]), "path_index": 0, "position": tuple(path[0])}, "not at the goal"),
        ({"path_index": len(path) + 4}, "outside its path"),
        ({"position": tuple(path[-1]), "path_index": 0}, "is not path cell 0"),
        ({"waiting": True, "wait": 1, "path_index": 0, "position": tuple(path[0])}, "is not the goal"),
        ({"wait": 2, "waiting": False}, "waiting=True"),
        ({"heading": "North"}, "heading must be"),
        ({"concepts": ("old",) if car0 else ("ambulance",)}, "applies to"),
        ({"kind": "pedestrian" if car0 else "car"}, "the scene says"),
        ({"id": 999}, "keeps its agents"),
        ({"path_index": 3, "path": None}, "needs a path"),
        ({"path": [[float(r) + 0.5, float(c)] for r, c in path], "path_index": None}, "integer cells"),
        ({"path": [[1, 2], [3]], "path_index": None}, "integer cells"),
    ]
    before = capture_scene(sim)
    rng_before = sim.rng.bit_generator.state
    for changes, words in cases:
        scene = before.replace_agent(0, **changes)
        with pytest.raises(SceneError) as err:
            apply_scene(sim, scene)
        assert words in str(err.value), (changes, str(err.value))
        assert str(err.value).startswith("agent 0"), str(err.value)
        assert capture_scene(sim) == before and sim.rng.bit_generator.state == rng_before
    with pytest.raises(SceneError, match="has 2 agents but the simulation"):
        apply_scene(sim, Scene(before.agents[:2]))
    with pytest.raises(SceneError, match="already agent 0"):
        build_simulation(cfg, Scene((SceneAgent("car", id=4), SceneAgent("car", id=4))))


def test_car_path_against_its_lane_is_refused(cfg):
    sim = Simulation(cfg, seed=3)
    car = next(i for i, k in enumerate(sim.kinds) if k == Kind.CAR)
    lane = sim.city.lane_graph.lanes[0]
    (r0, c0), (r1, c1) = lane.start, lane.end
    n = abs(r1 - r0) + abs(c1 - c0)
    dr, dc = (r1 > r0) - (r1 < r0), (c1 > c0) - (c1 < c0)
    backwards = [(r1 - dr * k, c1 - dc * k) for k in range(n + 1)]     # end → start along the lane line
    scene = capture_scene(sim).replace_agent(car, path=backwards, path_index=0, position=backwards[0], goal=None)
    with pytest.raises(SceneError, match="against the direction of its lane"):
        apply_scene(sim, scene)
    forwards = scene.replace_agent(car, path=backwards[::-1], position=backwards[-1])
    apply_scene(sim, forwards)                                          # the lane's own direction is fine
    assert tuple(sim.positions[car]) == backwards[-1]


def _first_coin_state(cfg):
    """A state of a real run where a pedestrian without concepts draws a coin against another agent."""
    sim = Simulation(cfg, seed=0, record=False)
    for _ in range(400):
        for a, b in sim.grounder.coin_pairs(sim.snapshot())["CollidingClose"]:
            if sim.kinds[a] == Kind.PEDESTRIAN and not sim.agents.concept_names(int(a)):
                return capture_scene(sim), int(a), int(b)
        sim.step()
    pytest.fail("no coin drawn for a plain pedestrian in 400 steps")


def test_coins_force_the_outcome_and_keep_the_random_stream(cfg):
    scene, a, b = _first_coin_state(cfg)
    stop_clauses = set()
    states = []
    for outcome in (True, False):
        sim = build_simulation(cfg, scene.with_coins({(a, b): outcome}))
        grounding, decisions = sim.decide()
        assert grounding.truth("CollidingClose", a, b) is outcome
        states.append(sim.rng.bit_generator.state)          # coins were still drawn: same stream afterwards
        sim.step()
        rec = sim.buffer.step_record(0)
        if outcome:
            assert rec.decided[a] == Action.STOP
            clause = sim.program.clauses[int(rec.fired[a])]
            assert "CollidingClose" in str(clause) and b in rec.witness[a]
            stop_clauses.add(int(rec.fired[a]))
        else:
            assert int(rec.fired[a]) not in stop_clauses
    assert states[0] == states[1]
    by_name = build_simulation(cfg, scene.with_coins({("CollidingClose", scene.agents[a].name,
                                                        scene.agents[b].name): True}))
    assert by_name.decide()[0].truth("CollidingClose", a, b)


def test_forced_coins_replay_after_a_checkpoint_and_apply_to_that_state_only(cfg):
    scene, a, b = _first_coin_state(cfg)
    sim = build_simulation(cfg, scene.with_coins({(a, b): True}))
    cp = capture(sim)
    sim.run(4)
    first = {f: sim.buffer.array(f).copy() for f in RECORDED}
    restore(sim, cp)
    sim.run(4)
    for f in RECORDED:
        assert np.array_equal(sim.buffer.array(f), first[f]), f
    # another state (step 1) is not forced: stepping on never raises, the coins are random again
    assert sim.forced_coins.for_snapshot(sim.snapshot()) is None


def test_handmade_same_cell_coin(cfg):
    ped = tuple(int(v) for v in _cells(cfg, Kind.PEDESTRIAN)[20])
    scene = Scene((SceneAgent("pedestrian", position=ped, heading="Left"),
                   SceneAgent("pedestrian", position=ped, heading="none")),
                  coins={("Pedestrian_1", "Pedestrian_2"): True})
    sim = build_simulation(cfg, scene, seed=1)
    grounding, decisions = sim.decide()
    assert grounding.truth("CollidingClose", 0, 1) and decisions.holds[0, Action.STOP]
    unforced = build_simulation(cfg, replace(scene, coins={(0, 1): False}), seed=1)
    assert not unforced.decide()[0].truth("CollidingClose", 0, 1)
    with pytest.raises(SceneError, match="has not moved yet"):
        build_simulation(cfg, replace(scene, coins={(1, 0): True}))
    with pytest.raises(SceneError, match="names no agent"):
        build_simulation(cfg, replace(scene, coins={("Pedestrian_1", "Car_9"): True}))
    far = scene.replace_agent(1, position=tuple(int(v) for v in _cells(cfg, Kind.PEDESTRIAN)[-1]))
    with pytest.raises(SceneError, match="beyond"):
        build_simulation(cfg, far)


def test_the_documented_example_runs_and_prints_what_the_docs_say(monkeypatch, capsys):
    """docs/scene-api.md's example is executed as written; its output block is what it prints."""
    root = MODES.parent.parent
    text = (root / "docs" / "scene-api.md").read_text(encoding="utf-8")
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    printed = text.split("prints\n\n```\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(root)
    exec(compile(code, "docs/scene-api.md", "exec"), {"__name__": "scene_api_example"})
    assert capsys.readouterr().out == printed


@pytest.mark.parametrize("engine", ["compiled", "z3"])
def test_forced_coin_on_the_large_scene_grounding_path(cfg, engine):
    """Above DENSE_PAIR_AGENTS agents the grounder draws coins pair by pair (no [N, N] tables); forcing works there
    too, and with either engine."""
    from core.logic.grounding.grounder import DENSE_PAIR_AGENTS

    cells = _cells(cfg, Kind.PEDESTRIAN)
    n = DENSE_PAIR_AGENTS + 2 if engine == "compiled" else 2
    same = tuple(int(v) for v in cells[0])
    agents = [SceneAgent("pedestrian", position=same, heading="Left"), SceneAgent("pedestrian", position=same)]
    agents += [SceneAgent("pedestrian", position=tuple(int(v) for v in cells[(37 * k) % len(cells)]))
               for k in range(1, n - 1)]
    for outcome in (True, False):
        sim = build_simulation(cfg, Scene(tuple(agents), coins={(0, 1): outcome}), engine=engine, record=False)
        grounding, decisions = sim.decide()
        assert grounding.truth("CollidingClose", 0, 1) is outcome
        assert bool(decisions.holds[0, Action.STOP]) is outcome


def test_scene_problems_lists_every_agent_problem_without_building(cfg):
    """What the agent editor shows under Problems: one entry per bad agent, with its index, nothing drawn."""
    from core.sim.scene import scene_problems

    building = tuple(int(v) for v in np.argwhere(cfg.city.building > 0)[0])
    ped = tuple(int(v) for v in _cells(cfg, Kind.PEDESTRIAN)[3])
    scene = Scene((SceneAgent("pedestrian", concepts=("ambulance",)),          # a pedestrian cannot be one
                   SceneAgent("car", id=2),
                   SceneAgent("car", id=2),                                  # duplicate name
                   SceneAgent("car", position=building),                     # start on a building
                   SceneAgent("pedestrian", position=ped),                   # fine (goal drawn later)
                   SceneAgent("boat")))
    problems = scene_problems(cfg, scene)
    assert [p.agent for p in problems] == [5, 0, 3, 2]
    assert "kind must be" in problems[0].message and "applies to cars" in problems[1].message
    assert "is a " in problems[2].message and "already agent 1" in problems[3].message
    assert scene_problems(cfg, Scene(scene.agents[4:5])) == []
    coins = Scene((SceneAgent("pedestrian", position=ped), SceneAgent("pedestrian", position=ped)),
                  coins={(0, 1): True})
    [coin_problem] = scene_problems(cfg, coins)
    assert coin_problem.agent is None and "has not moved yet" in coin_problem.message
