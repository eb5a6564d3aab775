"""Reinforcement learning with stable-baselines3: DQN, PPO and A2C with the MLP extractor, and NLM-DQN (DQN whose
features extractor is a Neural Logic Machine reading out the ego's invented predicates).

Vectorised training envs (``DummyVecEnv`` of ``n_envs`` SPF envs on the train split, wrapped in
:class:`TrainingRewardWrapper` with the method's training reward, and ``VecMonitor`` for episode returns); every
``eval_every`` environment steps the current policy is exported to a :class:`~core.tasks.spf.networks.PolicyNet`
and validated on the validation episodes with the fixed test reward; the best one is kept in the run folder.
SB3 itself would save a zip with pickled objects: we never call ``model.save`` — the weights are renamed into the
PolicyNet layout and written as safetensors (:func:`export_policy`).
"""
from __future__ import annotations

import time
from pathlib import Path

import gymnasium as gym
import numpy as np

from core.tasks.spf.env import SPFEnv
from core.tasks.spf.learning.common import BestKeeper, finish_run, torch_setup
from core.tasks.spf.learning.config import RLConfig, filled
from core.tasks.spf.learning.config_yaml import run_config
from core.tasks.spf.learning.monitor import Monitor
from core.tasks.spf.learning.settings import TrainingReward

__all__ = ["train_rl", "TrainingRewardWrapper", "export_policy"]


class TrainingRewardWrapper(gym.Wrapper):
    """Replaces the violation and overtime parts of the SPF reward by the method's training values (the action cost
    part stays as in the test reward); ``info["test_reward"]`` keeps the environment's own reward."""

    def __init__(self, env: gym.Env, reward: TrainingReward) -> None:
        super().__init__(env)
        self.reward = reward

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        c = info["reward_components"]
        rule = c["rule"]
        if info["fail"] and self.reward.violation is not None:
            rule = self.reward.violation
        over = c["overtime"]
        if over and self.reward.overtime is not None:
            over = self.reward.overtime
        info["test_reward"] = r
        return obs, float(c["action_cost"] + rule + over), term, trunc, info


def _nlm_extractor_class():
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    from core.models.nlm_readout import ObservationSplit, Readout
    from core.tasks.spf.networks import NLMExtractor

    class SB3NLMExtractor(BaseFeaturesExtractor):
        """SB3 adapter around :class:`NLMExtractor` (its weights live under ``ext.``). It evaluates the machine
        only where the ego's read-out needs it (:class:`~core.models.nlm_readout.Readout`: the same function,
        several times fewer torch operations; its index buffers are not part of the state dict)."""

        def __init__(self, observation_space, layout, n_entities, **nlm):
            ext = NLMExtractor(layout, n_entities, **nlm)
            super().__init__(observation_space, ext.features_dim)
            self.ext = ext
            self.readout = Readout(ext.nlm, ext.n, 1, [(0,)])
            self.split = ObservationSplit(ext.blocks, ext.n)

        def forward(self, obs):
            inputs, mask_t = self.split(obs.float())
            return self.readout.forward_flat(self.ext.nlm, inputs, mask_t)[0]

    return SB3NLMExtractor


def export_policy(model, algo: str, arch: dict):
    """The SB3 model's acting network as a :class:`PolicyNet` (renamed tensors, exact same function)."""
    from core.tasks.spf.networks import build_policy_net

    net = build_policy_net(arch)
    if algo in ("dqn", "nlm-dqn"):
        sd = {k.replace("features_extractor.ext.", "features_extractor."): v.detach().cpu()
              for k, v in model.policy.q_net.state_dict().items()}
    else:
        n_hidden = len(arch["hidden"])
        sd = {}
        for k, v in model.policy.state_dict().items():
            if k.startswith("mlp_extractor.policy_net."):
                sd["q_net." + k[len("mlp_extractor.policy_net."):]] = v.detach().cpu()
            elif k.startswith("action_net."):
                sd[f"q_net.{2 * n_hidden}." + k[len("action_net."):]] = v.detach().cpu()
    net.load_state_dict(sd, strict=True)
    return net.eval()


def train_rl(config: RLConfig, out: str | Path, monitor: Monitor | None = None) -> dict:
    """Train ``config`` into the run folder ``out`` (the best checkpoint on validation is kept there); returns the
    run's final ``config.yaml`` document."""
    import torch
    from stable_baselines3 import A2C, DQN, PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    c = config
    algo, mode, seed = c.algo, c.mode, c.seed
    steps, n_envs, reward = filled(c.steps), filled(c.n_envs), filled(c.reward)
    mon = monitor or Monitor()
    out = Path(out)
    device = torch_setup(seed, c.threads)
    t0 = time.perf_counter()
    probe = SPFEnv(mode, "train")
    arch = c.architecture(probe)
    venv = VecMonitor(DummyVecEnv([lambda: TrainingRewardWrapper(SPFEnv(mode, "train"), reward)
                                   for _ in range(n_envs)]))
    venv.seed(seed)
    hp = dict(filled(c.hyperparameters))
    tb = str(out / "tb") if c.tensorboard and _has_tensorboard() else None
    model: DQN | PPO | A2C
    if algo == "dqn":
        model = DQN("MlpPolicy", venv, policy_kwargs={"net_arch": arch["hidden"]}, seed=seed, device=device,
                    tensorboard_log=tb, verbose=0, **hp)
    elif algo == "nlm-dqn":
        kw = {"layout": arch["layout"], "n_entities": arch["n_entities"], **arch["nlm"]}
        model = DQN("MlpPolicy", venv, policy_kwargs={"net_arch": arch["hidden"],
                                                      "features_extractor_class": _nlm_extractor_class(),
                                                      "features_extractor_kwargs": kw},
                    seed=seed, device=device, tensorboard_log=tb, verbose=0, **hp)
    else:
        cls = PPO if algo == "ppo" else A2C
        model = cls("MlpPolicy", venv, policy_kwargs={"net_arch": {"pi": arch["hidden"], "vf": arch["hidden"]},
                                                      "activation_fn": torch.nn.Tanh},
                    seed=seed, device=device, tensorboard_log=tb, verbose=0, **hp)
    config_doc = run_config(c, probe, {
        "unit": "environment steps", "library": "stable-baselines3 " + _sb3_version(), "vec_env": "DummyVecEnv",
        "device": device, "reward": {"test": "the environment's fixed reward (docs/spf.md)"}})
    keeper = BestKeeper(out, config_doc, mode, c.val_episodes, mon)
    eval_every = filled(c.eval_every)

    class Callback(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.next_eval = eval_every
            self.returns: list[float] = []
            self.cancelled = False
            self.last_progress = 0

        def _on_step(self) -> bool:
            for info in self.locals.get("infos", []):
                ep = info.get("episode")
                if ep:
                    self.returns.append(float(ep["r"]))
            n = self.num_timesteps
            if n - self.last_progress >= 200 or n >= steps:
                self.last_progress = n
                mon.progress(min(n, steps), steps)
                if self.returns:
                    mon.metric(n, reward=float(np.mean(self.returns[-50:])))
            if mon.cancelled:
                self.cancelled = True
                return False
            if n >= self.next_eval:
                self.next_eval += eval_every
                rew = float(np.mean(self.returns[-50:])) if self.returns else float("nan")
                val = keeper.check(export_policy(self.model, algo, arch), n,
                                   {"train_reward": round(rew, 4), "episodes": len(self.returns)})
                for k in ("TSR", "DSR", "Score"):
                    self.logger.record(f"val/{k}", val[k])
            return True

    cb = Callback()
    t_train = time.perf_counter()
    model.learn(total_timesteps=steps, callback=cb, progress_bar=False)
    config_doc["training"]["train_seconds"] = round(time.perf_counter() - t_train, 1)
    config_doc["training"]["env_steps_per_second"] = round(model.num_timesteps / max(1e-9, time.perf_counter()
                                                                                    - t_train), 1)
    if keeper.best is None or (not cb.cancelled and keeper.best_step != model.num_timesteps
                               and model.num_timesteps % eval_every):
        keeper.check(export_policy(model, algo, arch), model.num_timesteps,
                     {"train_reward": round(float(np.mean(cb.returns[-50:])), 4) if cb.returns else None})
    venv.close()
    return finish_run(out, config_doc, time.perf_counter() - t0, cb.cancelled, c.test, mon)


def _has_tensorboard() -> bool:
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


def _sb3_version() -> str:
    import stable_baselines3

    return stable_baselines3.__version__
