"""Human play (``core.tasks.spf.session.PlaySession``) is scored by the very functions evaluation uses: the same
run gets the same score and decisions, also when the horizon truncates it."""
from __future__ import annotations

import pytest

from core.tasks.spf.env import SPFEnv
from core.tasks.spf.evaluate import run_episode
from core.tasks.spf.policy import FunctionPolicy
from core.tasks.spf.session import PlaySession


def replay(actions):
    it = iter(actions)
    return FunctionPolicy(lambda obs, env: next(it), "replay")


def test_session_and_evaluation_score_the_same_run_identically():
    """Easy val episode 1: Stop until step 170, the oracle until step 210, Stop until step 327, then the oracle;
    the goal is reached on step 354 = max_steps, so the step-limit -3 applies to both (the session must not skip
    it when the last step reaches the goal: -7.0, not -4.0)."""
    s = PlaySession("easy", "val")
    s.start(1)
    for until, driver in ((170, "stop"), (210, "oracle"), (327, "stop"), (None, "oracle")):
        while not s.done and (until is None or s.num_steps < until):
            s.act(3 if driver == "stop" else s.oracle_hint())
    assert s.outcome == "success" and s.num_steps == s.max_steps == 354
    env = SPFEnv("easy", "val")
    res = run_episode(env, 1, replay([r.action for r in s.records]), env.settings.eval_actions)
    assert res.success and res.steps == 354
    assert s.result() == res
    assert s.total_reward == res.score == pytest.approx(sum(r.reward for r in s.records) - 3)
    assert res.score == pytest.approx(-7.0, abs=1e-5)


def test_session_and_evaluation_agree_when_the_horizon_truncates():
    """Truncated by the horizon before the step budget: no step-limit penalty in either."""
    s = PlaySession("easy", "val", SPFEnv("easy", "val", record=True, max_horizon=12))
    s.start(0)
    while not s.done:
        s.act(3)
    assert s.num_steps == 12 < s.max_steps and s.outcome == "out of steps"
    env = SPFEnv("easy", "val", max_horizon=12)
    res = run_episode(env, 0, replay([r.action for r in s.records]), env.settings.eval_actions)
    assert s.result() == res and s.total_reward == res.score
    assert res.score == pytest.approx(sum(r.reward for r in s.records))


def test_session_decisions_match_evaluation_for_the_oracle_and_a_violation():
    for k, driver in ((2, "oracle"), (2, "normal")):
        s = PlaySession("easy", "val")
        s.start(k)
        while not s.done:
            s.act(s.oracle_hint() if driver == "oracle" else 1)
        env = SPFEnv("easy", "val")
        res = run_episode(env, k, replay([r.action for r in s.records]), env.settings.eval_actions)
        assert s.result() == res and s.total_reward == res.score
        assert isinstance(res.decided, dict) and res.success == (driver == "oracle")
