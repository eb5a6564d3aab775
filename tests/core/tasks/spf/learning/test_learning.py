"""Every SPF learner trains on a tiny budget (real torch / stable-baselines3 training, fixed seed) and ends better
than the random policy: BC agrees with the oracle on held-out demonstrations far above chance, RL scores above
random on the same validation episodes."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    from core.tasks.spf.demos import collect_oracle, save_demonstrations

    trajs, meta = collect_oracle("easy", 16, "train", seed=3)
    path = tmp_path_factory.mktemp("demos") / "easy16.npz"
    save_demonstrations(path, trajs[:12], meta | {"total_episodes": 12,
                                                  "total_steps": sum(len(t) for t in trajs[:12])})
    return path, trajs[12:]


def _balanced_accuracy(policy, trajs) -> float:
    obs = np.concatenate([t.observations[:-1] for t in trajs])
    act = np.concatenate([t.actions for t in trajs])
    pred = np.array([policy(o) for o in obs])
    return float(np.mean([np.mean(pred[act == a] == a) for a in np.unique(act)]))


@pytest.mark.parametrize("algo", ["mlp-bc", "gnn-bc", "nlm-bc"])
def test_behaviour_cloning_learns_the_oracle(algo, demos, tmp_path):
    from core.tasks.spf.learning import train
    from core.tasks.spf.learning.run import load_run

    path, held_out = demos
    cfg = train(algo, "easy", tmp_path / algo, steps=150, seed=0, demos=path, val_episodes=1, test=False,
                tensorboard=False, batch=64, lr=3e-3)
    assert cfg["training"]["demonstrations"]["trajectories"] == 12
    assert (tmp_path / algo / "model.safetensors").is_file()
    pol = load_run(tmp_path / algo)
    # random would agree on 25 % of each action; the oracle's rule is learnt from 12 trajectories
    assert _balanced_accuracy(pol, held_out) > 0.7


@pytest.mark.parametrize("algo", ["dqn", "ppo", "a2c", "nlm-dqn"])
def test_reinforcement_learning_beats_random(algo, tmp_path):
    from core.tasks.spf.evaluate import evaluate
    from core.tasks.spf.learning import train
    from core.tasks.spf.learning.run import load_run
    from core.tasks.spf.learning.settings import TrainingReward

    steps = 1600 if algo == "a2c" else 800   # A2C updates every 8 steps per env: it needs more of them
    # on so small a budget A2C first learns to drive into violations under the tuned -1 penalty; the test reward's
    # -10 makes it learn caution within the budget (the training-reward setting is what the test varies)
    reward = TrainingReward(violation=-10.0) if algo == "a2c" else None
    cfg = train(algo, "easy", tmp_path / algo, steps=steps, seed=0, n_envs=2, eval_every=steps, val_episodes=4,
                test=False, tensorboard=False, hyperparameters={"learning_starts": 200} if "dqn" in algo else None,
                reward=reward)
    assert cfg["training"]["reward"]["training"]["violation"] is not None
    assert [h["step"] for h in cfg["metrics"]["history"]][0] >= steps
    pol = load_run(tmp_path / algo)
    episodes = list(range(4))
    learnt = evaluate("easy", pol, "val", episodes=episodes)
    rand = evaluate("easy", "random", "val", episodes=episodes, seed=0)
    assert learnt.score > rand.score
