"""SPF Gymnasium environment: API conformance, observation layout, determinism, pickling, reward arithmetic."""
import copy
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import core.tasks  # noqa: F401  (registers the ids)
from core.base.codes import Action
from core.base.errors import ConfigError
from core.logic.engines.compiled import CompiledEngine, _RowView, check_task
from core.tasks.spf.env import ENV_IDS, SPFEnv
from tests.support.paths import ROOT
from tests.support.spf import at_and_box, plain_cell, scene

SIZES = {"easy": 85, "medium": 140, "hard": 205, "expert": 205}


@pytest.fixture(scope="module")
def envs():
    return {m: SPFEnv(m, "test") for m in SIZES}


@pytest.mark.parametrize("mode", list(SIZES))
def test_check_env_and_registration(mode):
    env = gym.make(ENV_IDS[mode])
    assert env.observation_space.shape == (SIZES[mode],)
    assert env.action_space == gym.spaces.Discrete(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_observation_layout_matches_reference_ranges(envs):
    easy = dict((p, (a, b)) for p, a, b in envs["easy"].layout.describe())
    assert easy["IsPedestrian"] == (0, 4) and easy["IsCar"] == (5, 9) and easy["IsAmbulance"] == (10, 14)
    assert easy["IsOld"] == (15, 19) and easy["IsTiro"] == (20, 24) and easy["IsAtInter"] == (25, 29)
    assert easy["IsInInter"] == (30, 34) and easy["HigherPri"] == (35, 59) and easy["CollidingClose"] == (60, 84)
    full = dict((p, (a, b)) for p, a, b in envs["expert"].layout.describe())
    assert full["IsPedestrian"] == (0, 4) and full["IsInInter"] == (50, 54) and full["IsClose"] == (55, 79)
    assert full["HigherPri"] == (80, 104) and full["CollidingClose"] == (105, 129)
    assert full["LeftOf"] == (130, 154) and full["RightOf"] == (155, 179) and full["NextTo"] == (180, 204)


@pytest.mark.parametrize("mode", ["medium", "expert"])
def test_observation_is_the_ego_grounding(envs, mode):
    env = envs[mode]
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    seen_others = 0
    for _ in range(150):
        obs = env._obs
        g = env.grounding
        ents = g.entities(env.ego)[: env.fov]
        assert ents[0] == env.ego and len(ents) == env._n_real
        seen_others += len(ents) - 1
        for p in g.ontology.grounded:
            for i in range(env.fov):
                if p.arity == 1:
                    want = i < len(ents) and g.truth(p.name, int(ents[i]))
                    assert obs[env.layout.index(p.name, i)] == want, (p.name, i)
                    continue
                for j in range(env.fov):
                    want = i < len(ents) and j < len(ents) and g.truth(p.name, int(ents[i]), int(ents[j]))
                    assert obs[env.layout.index(p.name, i, j)] == want, (p.name, i, j)
        assert obs[env.layout.index("IsCar", 0)] == 1.0
        _, _, term, trunc, _ = env.step(int(rng.integers(4)) if rng.random() < 0.2 else env.oracle_action())
        if term or trunc:
            env.reset()
    assert seen_others > 50  # the ego did see other agents


@pytest.mark.parametrize("mode", list(SIZES))
def test_oracle_and_task_check_agree_with_logic_core(envs, mode):
    """The vector-level evaluators give exactly the logic core's answers on the ego's grounding row."""
    env = envs[mode]
    expert = CompiledEngine(env.spf.config.rules.program("expert"))
    task = env.spf.config.rules.task()
    env.reset(seed=11)
    kinds = set()
    for _ in range(250):
        g = env.grounding
        ref = expert.decide(_RowView(g, env.ego))
        mine = env.oracle_decision()
        assert tuple(ref.holds[0]) == mine.holds
        assert tuple(int(c) for c in ref.clause[0]) == mine.clause
        ents = g.entities(env.ego)
        for a in range(4):
            if mine.clause[a] >= 0:
                nv = len(env.spf.config.rules.program("expert").clauses[mine.clause[a]].variables)
                assert tuple(int(ents[w]) for w in mine.witness[a]) == tuple(int(x) for x in ref.witness[0, a, :nv])
            tc = check_task(task, g, env.ego, a)
            vc = env.check_action(a)
            assert (tc.reward, tc.fail) == (vc.reward, vc.fail)
            assert sorted(v.clause_id for v in tc.violations) == sorted(vc.violated)
            kinds.add((a, vc.fail))
        _, _, term, trunc, _ = env.step(env.oracle_action())
        if term or trunc:
            env.reset()
    assert any(f for _, f in kinds)  # some actions were violations somewhere


def rollout(env, seed, steps=80, policy_seed=1):
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    out = [obs]
    for _ in range(steps):
        a = env.oracle_action() if rng.random() < 0.7 else int(rng.integers(4))
        obs, r, term, trunc, info = env.step(a)
        out += [obs, r, term, trunc]
        if term or trunc:
            obs, info = env.reset()
            out.append(obs)
    return out, env.sim.positions.copy()


def test_same_seed_same_rollout_and_rng_is_np_random():
    a, b = SPFEnv("expert", "train"), SPFEnv("expert", "train")
    ra, pa = rollout(a, 3)
    rb, pb = rollout(b, 3)
    assert all(np.array_equal(x, y) for x, y in zip(ra, rb)) and np.array_equal(pa, pb)
    assert a.sim.rng is a.np_random
    rc, pc = rollout(b, 4)
    assert not np.array_equal(pa, pc)


def test_reset_with_seed_rebuilds_the_world_without_seed_keeps_it():
    env = SPFEnv("easy", "train")
    env.reset(seed=1)
    first = env.sim.positions.copy()
    for _ in range(5):
        env.step(Action.NORMAL)
    moved = env.sim.positions.copy()
    env.reset()
    assert np.array_equal(env.sim.positions[1:], moved[1:])   # background world continues (reference)
    env.reset(seed=1)
    assert np.array_equal(env.sim.positions, first)            # a seed rebuilds it


def test_pickle_and_deepcopy_continue_identically():
    env = SPFEnv("hard", "train")
    env.reset(seed=2)
    for _ in range(7):
        env.step(env.oracle_action())
    clone = pickle.loads(pickle.dumps(env))
    twin = copy.deepcopy(env)
    assert np.array_equal(clone._obs, env._obs) and np.array_equal(twin._obs, env._obs)
    for _ in range(40):
        a = env.oracle_action()
        x, y, z = env.step(a), clone.step(a), twin.step(a)
        assert np.array_equal(x[0], y[0]) and x[1:4] == y[1:4] and np.array_equal(x[0], z[0])
        if x[2] or x[3]:
            break
    assert np.array_equal(env.sim.positions, clone.sim.positions)


def test_spaces_and_bad_input():
    env = SPFEnv("easy", "train")
    with pytest.raises(RuntimeError):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.step(4)
    with pytest.raises(ValueError):
        env.reset(options={"bogus": 1})
    with pytest.raises(ConfigError):
        SPFEnv("nonexistent-mode")


def test_render_rgb_array():
    env = SPFEnv("easy", "train", render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8 and img.std() > 0


# ---- reward arithmetic on hand-made scenes ----------------------------------------------------------------------

def test_action_cost_is_normalised_by_path_length():
    for mode, cost in (("easy", (-2, 0, -2, -5)), ("expert", (-2, -1, -2, -3))):
        env = SPFEnv(mode, "test")
        cell = plain_cell(env.sim.city)
        for a in range(4):
            st = scene(env, cell, ego_len=15, concepts={0: []})
            obs, info = env.reset(options={"start_state": st})
            assert info["path_length"] == 4 * 15 and env.oracle_action() == Action.NORMAL
            _, r, term, trunc, info = env.step(a)
            assert r == pytest.approx(cost[a] / 60)
            assert info["reward_components"] == pytest.approx({"action_cost": cost[a] / 60, "rule": 0.0,
                                                               "overtime": 0.0})
            assert not term and not trunc and not info["fail"] and info["violations"] == ()


def test_dead_violation_ends_with_unnormalised_rule_reward():
    env = SPFEnv("easy", "test")
    at, box = at_and_box(env.sim.city)
    st = scene(env, at, others={1: box}, concepts={0: []})  # a pedestrian in the intersection box
    env.reset(options={"start_state": st})
    assert env.oracle_action() == Action.STOP
    stop = env.check_action(Action.STOP)
    assert not stop.fail and stop.reward == 0
    _, r, term, trunc, info = env.step(Action.NORMAL)
    assert term and not trunc and info["fail"] and not info["is_success"]
    assert r == -10.0 and info["reward_components"] == {"action_cost": 0.0, "rule": -10.0, "overtime": 0.0}
    (v,) = info["violations"]
    assert v["rule"] == "Collision and Intersection" and "IsInInter(Y=Pedestrian_1)" in v["text"]


def test_two_violated_rules_add_up_in_expert():
    """A tiro ego at an intersection (Stop required) with a pedestrian 15 cells away (Slow required if not
    stopping): Fast breaks both rules (-5 each); Slow breaks only Stop; Stop breaks nothing."""
    env = SPFEnv("expert", "test")
    at, box = at_and_box(env.sim.city)
    ped = (at[0] + 15, at[1]) if at[0] + 15 < 240 else (at[0] - 15, at[1])
    st = scene(env, at, others={1: box, 2: ped}, concepts={0: ["tiro"]})
    env.reset(options={"start_state": st})
    checks = {a: env.check_action(a) for a in range(4)}
    assert checks[Action.STOP].reward == 0 and not checks[Action.STOP].fail
    assert checks[Action.SLOW].reward == -5 and checks[Action.SLOW].fail
    assert checks[Action.FAST].reward == -10 and checks[Action.NORMAL].reward == -10
    _, r, term, _, info = env.step(Action.FAST)
    assert term and r == -10.0
    assert {v["rule"] for v in info["violations"]} == {"Stop", "Slow"}


def test_overtime_cost_at_the_horizon():
    env = SPFEnv("easy", "test", max_horizon=2)
    st = scene(env, plain_cell(env.sim.city), ego_len=20, concepts={0: []})
    env.reset(options={"start_state": st})
    _, r1, term, trunc, _ = env.step(Action.STOP)
    assert not term and not trunc and r1 == pytest.approx(-5 / 80)
    _, r2, term, trunc, info = env.step(Action.STOP)
    assert trunc and not term and r2 == pytest.approx(-5 / 80 - 3)
    assert info["reward_components"]["overtime"] == -3 and info["steps_left"] == 0


def test_success_one_step_after_arriving():
    env = SPFEnv("easy", "test")
    st = scene(env, plain_cell(env.sim.city), ego_len=2, concepts={0: []})
    env.reset(options={"start_state": st})
    _, r, term, _, info = env.step(Action.NORMAL)           # moves onto the goal cell
    assert not term and np.array_equal(env.sim.positions[0], st.goals[0]) and r == 0.0
    _, r, term, trunc, info = env.step(Action.STOP)          # flagged on the next step
    assert term and not trunc and info["is_success"] and not info["fail"]
    assert r == pytest.approx(-5 / 8)


def test_non_dead_rule_reward_is_normalised(tmp_path):
    """With a task rule that is not dead, the violation's reward joins the action cost, divided by the path
    length, and the episode goes on (docs/reference.md#spf-reward; no shipped rule file has such a rule)."""
    rules = (ROOT / "configs" / "rules" / "spf_easy.rules").read_text()
    rules = rules.replace('reward=-10 dead=true', 'reward=-4 dead=false')
    assert "dead=false" in rules
    (tmp_path / "r.rules").write_text(rules)
    mode = (ROOT / "configs" / "modes" / "spf_easy.yaml").read_text()
    for key in ("map", "agents_train", "agents_val", "agents_test", "ontology"):
        mode = mode.replace(f"{key}: ../", f"{key}: {ROOT / 'configs'}/")
    mode = mode.replace("rules: ../rules/spf_easy.rules", f"rules: {tmp_path / 'r.rules'}")
    (tmp_path / "spf_soft.yaml").write_text(mode)
    env = SPFEnv(str(tmp_path / "spf_soft.yaml"), "test")
    at, box = at_and_box(env.sim.city)
    env.reset(options={"start_state": scene(env, at, others={1: box}, concepts={0: []})})
    _, r, term, _, info = env.step(Action.FAST)
    assert not term and not info["fail"] and len(info["violations"]) == 1
    assert r == pytest.approx((-2 - 4) / 48)
    assert info["reward_components"] == pytest.approx({"action_cost": -2 / 48, "rule": -4 / 48, "overtime": 0.0})
