"""SPF episode sets, evaluation metrics, demonstrations, the multi-agent API and the CLI."""
import json
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from core.base.codes import Action
from core.base.errors import EpisodeFileError
from core.tasks.spf.demos import collect_oracle, load_demonstrations, save_demonstrations
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.episodes import (
    default_episode_path,
    load_episode_set,
    quotas_for,
    read_episode_set,
    save_episode_set,
)
from core.tasks.spf.evaluate import EpisodeResult, EvalReport, evaluate, format_table
from core.tasks.spf.make_episodes import make_episode_set
from core.tasks.spf.multi import CityParallelEnv
from core.tasks.spf.policy import RandomPolicy
from core.tasks.spf.policy_files import load_policy
from core.tasks.spf.settings import load_spf_mode
from tests.support.paths import ROOT

MODES = ("easy", "medium", "hard", "expert")


# ---- episode sets ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_shipped_episode_sets(mode):
    for split, count in (("val", 40), ("test", 100)):
        spf = load_spf_mode(mode, split)
        es = load_episode_set(spf)
        assert len(es) == count
        assert es.meta["agents"] == list(spf.config.agents.table().names)
        quotas = quotas_for(spf.split_settings.concepts, count)
        assert Counter(es.concepts()) == Counter(quotas)          # every concept of reset_dist, evenly
        assert len(set(int(s.seed) for s in es.states)) == count
        # validation and test sets use their own agent files (different compositions from training)
        train = load_spf_mode(mode, "train").config.agents.table().names
        assert len(es.states[0].positions) != len(train) or es.meta["agents"] != list(train)


def test_episode_sets_are_regenerated_exactly():
    """The shipped easy validation set is what the documented command produces (byte-identical arrays)."""
    spf = load_spf_mode("easy", "val")
    shipped = read_episode_set(default_episode_path(spf))
    again = make_episode_set("easy", "val", len(shipped), base_seed=shipped.meta["base_seed"])
    assert again.meta["tries"] == shipped.meta["tries"]
    for a, b in zip(shipped.states, again.states):
        for f in ("positions", "headings", "goals", "path_index", "priorities", "reach_goal", "wait"):
            assert np.array_equal(getattr(a, f), getattr(b, f)), f
        assert a.seed == b.seed and a.label["oracle_step"] == b.label["oracle_step"]
        assert all(np.array_equal(p, q) for p, q in zip(a.paths, b.paths))


def test_episode_file_round_trip_and_errors(tmp_path):
    es = make_episode_set("hard", "val", 4, base_seed=7)
    p = save_episode_set(tmp_path / "e.npz", es)
    back = read_episode_set(p)
    assert len(back) == 4 and back.concepts() == es.concepts()
    assert all(np.array_equal(x.paths[3], y.paths[3]) for x, y in zip(es.states, back.states))
    with np.load(p, allow_pickle=False) as z:  # plain numpy can read it
        assert z["positions"].shape[0] == 4
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(EpisodeFileError):
        read_episode_set(tmp_path / "bad.npz")
    with pytest.raises(EpisodeFileError):  # the set was made for the hard agents, not the easy ones
        load_episode_set(load_spf_mode("easy", "val"), p)


def test_quotas():
    assert quotas_for(["a", "b", "c"], 100) == {"a": 34, "b": 33, "c": 33}
    assert quotas_for(["a", "b", "c", "d", "e", "f"], 40) == {"a": 7, "b": 7, "c": 7, "d": 7, "e": 6, "f": 6}


# ---- evaluation ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_oracle_solves_every_validation_episode(mode):
    rep = evaluate(mode, "oracle", "val")
    assert rep.tsr == 1.0 and rep.dsr_mean == 1.0 and rep.dsr_average == 1.0
    assert all(e.steps == e.max_steps // 2 for e in rep.episodes)
    assert all(not e.fail for e in rep.episodes)


@pytest.mark.parametrize("mode", MODES)
def test_oracle_on_test_sample_and_random_range(mode):
    rep = evaluate(mode, "oracle", "test", episodes=list(range(0, 100, 10)))
    assert rep.tsr == 1.0
    rnd = evaluate(mode, "random", "test")
    assert 0.0 <= rnd.tsr <= 0.15
    assert rnd.dsr < 0.5 and rnd.score < rep.score
    again = evaluate(mode, "random", "test", episodes=[0, 1, 2, 3])  # reproducible
    assert [e.actions for e in again.episodes] == [e.actions for e in rnd.episodes[:4]]


def test_metric_arithmetic():
    S, F = int(Action.STOP), int(Action.FAST)
    eps = [EpisodeResult(0, True, False, 10, 20, -1.0, {S: True, F: True}, {S: True, F: False}),
           EpisodeResult(1, False, True, 3, 20, -10.0, {S: True, F: False}, {S: False, F: False}),
           EpisodeResult(2, False, False, 20, 20, -5.0, {S: False, F: True}, {S: False, F: True})]
    rep = EvalReport("expert", "test", "x", eps, (S, F))
    assert rep.tsr == pytest.approx(1 / 3) and rep.score == pytest.approx(-16 / 3)
    assert rep.decision_counts() == {S: (1, 2), F: (1, 2)}
    assert rep.dsr_mean == pytest.approx(2 / 4) and rep.dsr_average == pytest.approx(0.5)
    rep2 = EvalReport("expert", "test", "x", eps[:2], (S, F))  # Stop 1/2, Fast 0/1
    assert rep2.dsr_mean == pytest.approx(1 / 3) and rep2.dsr_average == pytest.approx(0.25)
    text = format_table([rep])
    assert "TSR" in text and "Expert" in text and "0.33" in text


def test_step_limit_penalty_and_policy_files(tmp_path):
    (tmp_path / "always_stop.py").write_text("def policy(obs):\n    return 3\n")
    rep = evaluate("easy", str(tmp_path / "always_stop.py"), "val", episodes=[0])
    e = rep.episodes[0]
    assert e.steps == e.max_steps and not e.success
    env = SPFEnv("easy", "val")
    env.reset(options={"episode": 0})
    pl = env.path_length
    assert e.score == pytest.approx(e.max_steps * (-5 / pl) - 3)
    # an .npz MLP policy whose output always prefers Stop
    d = env.observation_space.shape[0]
    np.savez(tmp_path / "mlp.npz", W0=np.zeros((d, 8), np.float32), b0=np.ones(8, np.float32),
             W1=np.zeros((8, 4), np.float32), b1=np.array([0, 0, 0, 1], np.float32))
    pol = load_policy(tmp_path / "mlp.npz")
    assert pol(np.zeros(d, np.float32), env) == 3
    assert RandomPolicy(0)(None, env) in range(4)


# ---- demonstrations ---------------------------------------------------------------------------------------------------

def test_collect_save_load_demonstrations(tmp_path):
    trajs, meta = collect_oracle("medium", 3, seed=4)
    p = save_demonstrations(tmp_path / "d.npz", trajs, meta)
    back, m = load_demonstrations(p)
    assert m["total_episodes"] == 3 and m["total_steps"] == sum(len(t) for t in trajs)
    assert m["observation_space"]["shape"] == [140] and m["dataset_id"].startswith("logicity/spf-medium")
    for t, b in zip(trajs, back):
        assert np.array_equal(t.observations, b.observations) and len(b.observations) == len(b.actions) + 1
        assert np.array_equal(b.actions, b.infos["oracle_action"][:-1])          # the oracle drove
        assert b.terminations[-1] or b.truncations[-1]
        assert not b.terminations[:-1].any() and not b.truncations[:-1].any()
        assert b.infos["is_success"][-1] == (b.terminations[-1] and not b.infos["fail"][-1])
    # the same seed reproduces the demonstrations
    again, _ = collect_oracle("medium", 3, seed=4)
    assert all(np.array_equal(a.actions, b.actions) for a, b in zip(again, trajs))
    with np.load(p, allow_pickle=False) as z:
        assert "episode_0/observations" in z.files


# ---- multi-agent ---------------------------------------------------------------------------------------------------------

def test_parallel_api_and_default_policy():
    env = CityParallelEnv("expert", max_cycles=60)
    parallel_api_test(env, num_cycles=60)
    obs, infos = env.reset(seed=1)
    assert set(obs) == set(env.possible_agents) and all(o.shape == (205,) for o in obs.values())
    fails = 0
    for _ in range(60):
        rule = env.rule_actions()
        assert rule == {a: infos[a]["rule_action"] for a in env.agents}
        obs, rew, term, trunc, infos = env.step({})  # every agent follows the rule engine
        fails += sum(i["fail"] for i in infos.values())
        if not env.agents:
            break
    assert fails == 0  # in expert the sim rules are the expert rules: the default policy never violates
    env.reset(seed=1)
    _, rew, _, _, infos = env.step({"Car_1": int(Action.FAST)})
    assert "Car_1" in rew and set(rew) == set(env.possible_agents)


def test_parallel_env_is_seeded():
    a, b = CityParallelEnv("easy", max_cycles=20), CityParallelEnv("easy", max_cycles=20)
    oa, _ = a.reset(seed=5)
    ob, _ = b.reset(seed=5)
    for _ in range(15):
        acts = {n: 3 if i % 3 == 0 else 1 for i, n in enumerate(a.agents)}
        ra = a.step(acts)
        rb = b.step(acts)
        assert all(np.array_equal(ra[0][k], rb[0][k]) for k in ra[0]) and ra[1] == rb[1]


# ---- CLI -------------------------------------------------------------------------------------------------------------------

def run_main(*args, cwd=ROOT):
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_cli_eval_collect_info(tmp_path):
    r = run_main("spf", "eval", "--policy", "oracle", "--mode", "hard", "--split", "val", "--episodes", "3",
                 "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stderr
    assert "TSR" in r.stdout and "Hard" in r.stdout and "1.00" in r.stdout and "Mean Decision Succ" in r.stdout
    assert "3/3" in r.stderr or "ep" in r.stderr  # progress bar
    data = json.loads((tmp_path / "r.json").read_text())
    assert data[0]["TSR"] == 1.0 and data[0]["episodes"] == 3
    r = run_main("spf", "collect", "--mode", "easy", "--n", "2", "--out", str(tmp_path / "d.npz"), "--quiet")
    assert r.returncode == 0, r.stderr
    trajs, _ = load_demonstrations(tmp_path / "d.npz")
    assert len(trajs) == 2
    r = run_main("spf", "info", "--mode", "expert")
    assert r.returncode == 0 and "NextTo" in r.stdout and "180..204" in r.stdout
    r = run_main("spf", "eval", "--policy", str(tmp_path / "missing.py"), "--mode", "easy", "--split", "val")
    assert r.returncode == 1 and "not found" in r.stderr
