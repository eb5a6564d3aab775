"""Training throughput of the SPF learners: environment steps per second while DQN and NLM-DQN train
(SB3, each with its run settings: vectorised envs and hyper-parameters of core/tasks/spf/learning/rl.py, no
validation inside the timed part), behaviour-cloning samples per second (MLP, GNN, NLM forward + backward, batch
128), and the NLM extractor's forward + backward with the full machine vs the ego read-out
(core/models/nlm_readout.py). Every figure is given per wall second and per CPU second of this process (on a shared
box the second is the steadier one). Prints figures; the speed target (200k steps in minutes) is checked by reading
them, not asserted.

    python bench/spf_train.py [--mode easy] [--dqn-steps 5000] [--bc-steps 50]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of ``fn()``."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def bench_dqn(mode: str, steps: int, algo: str = "dqn") -> tuple[float, float]:
    import torch
    from stable_baselines3 import DQN
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.rl import TrainingRewardWrapper, _nlm_extractor_class
    from core.tasks.spf.learning.run import env_layout
    from core.tasks.spf.learning.settings import HYPERPARAMETERS, N_ENVS, TRAINING_REWARDS, default_architecture

    torch.set_num_threads(1)
    probe = SPFEnv(mode, "train")
    arch = default_architecture(algo, probe.spf.name, probe.layout.size, env_layout(probe), probe.fov)
    venv = VecMonitor(DummyVecEnv([lambda: TrainingRewardWrapper(SPFEnv(mode, "train"), TRAINING_REWARDS[algo])
                                   for _ in range(N_ENVS[algo])]))
    kw = {"net_arch": arch["hidden"]}
    if algo == "nlm-dqn":
        kw |= {"features_extractor_class": _nlm_extractor_class(),
               "features_extractor_kwargs": {"layout": arch["layout"], "n_entities": arch["n_entities"],
                                             **arch["nlm"]}}
    model = DQN("MlpPolicy", venv, policy_kwargs=kw, seed=0, device="cpu", verbose=0, **HYPERPARAMETERS[algo])
    model.learn(total_timesteps=1200)  # past learning_starts: the timed part includes gradient steps
    wall, cpu = _timed(lambda: model.learn(total_timesteps=steps, reset_num_timesteps=False))
    return steps / wall, steps / cpu


def bench_nlm_extractor(mode: str, reps: int, batch: int = 128) -> dict[str, tuple[float, float]]:
    """Milliseconds (wall, CPU) of one forward + backward of NLM-DQN's extractor on ``batch`` observations: the full
    machine (core.tasks.spf.networks.NLMExtractor) vs the ego read-out SB3 trains with."""
    import numpy as np
    import torch

    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.rl import _nlm_extractor_class
    from core.tasks.spf.learning.run import env_layout
    from core.tasks.spf.learning.settings import default_architecture

    torch.set_num_threads(1)
    env = SPFEnv(mode, "train")
    arch = default_architecture("nlm-dqn", env.spf.name, env.layout.size, env_layout(env), env.fov)
    fast = _nlm_extractor_class()(env.observation_space, arch["layout"], arch["n_entities"], **arch["nlm"])
    x = torch.from_numpy((np.random.default_rng(0).random((batch, env.layout.size)) < 0.2).astype(np.float32))
    out = {}
    for name, f in (("full machine", fast.ext), ("ego read-out", fast)):
        def run(f=f):
            for _ in range(reps):
                f(x).sum().backward()
        run()
        wall, cpu = _timed(run)
        out[name] = (wall / reps * 1000, cpu / reps * 1000)
    return out


def bench_bc(mode: str, algo: str, steps: int) -> float:
    import numpy as np
    import torch
    import torch.nn.functional as F

    from core.tasks.spf.env import SPFEnv
    from core.tasks.spf.learning.run import env_layout
    from core.tasks.spf.learning.settings import default_architecture
    from core.tasks.spf.networks import build_policy_net

    torch.set_num_threads(1)
    env = SPFEnv(mode, "train")
    arch = default_architecture(algo, env.spf.name, env.layout.size, env_layout(env), env.fov)
    net = build_policy_net(arch)
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    x = torch.from_numpy((np.random.default_rng(0).random((128, env.layout.size)) < 0.2).astype(np.float32))
    y = torch.randint(0, 4, (128,))
    for _ in range(3):
        F.cross_entropy(net(x), y).backward()
    t = time.perf_counter()
    for _ in range(steps):
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return steps * 128 / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="easy")
    ap.add_argument("--dqn-steps", type=int, default=5000)
    ap.add_argument("--bc-steps", type=int, default=50)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (1 min)")
    for algo in ("mlp-bc", "gnn-bc", "nlm-bc"):
        print(f"{algo:<8} BC samples/s (batch 128, forward+backward): {bench_bc(args.mode, algo, args.bc_steps):,.0f}")
    for name, (wall, cpu) in bench_nlm_extractor(args.mode, max(5, args.bc_steps // 5)).items():
        print(f"NLM-DQN extractor, {name:<12}: forward+backward, batch 128: {wall:.1f} ms wall, {cpu:.1f} ms CPU")
    from core.tasks.spf.learning.settings import HYPERPARAMETERS, N_ENVS
    for algo in ("dqn", "nlm-dqn"):
        hp = HYPERPARAMETERS[algo]
        per = N_ENVS[algo] * hp["train_freq"] // hp["gradient_steps"]
        wall, cpu = bench_dqn(args.mode, args.dqn_steps if algo == "dqn" else args.dqn_steps // 2, algo)
        print(f"{algo:<8} env steps/s while training ({N_ENVS[algo]} envs, a gradient step of batch {hp['batch_size']}"
              f" per {per} env steps): {wall:,.0f} per wall s ({cpu:,.0f} per CPU s) -> 200k steps in "
              f"{200_000 / wall / 60:.1f} min ({200_000 / cpu / 60:.1f} min of CPU)")
    print(f"load average at the end {os.getloadavg()[0]:.1f} (1 min)")


if __name__ == "__main__":
    main()
