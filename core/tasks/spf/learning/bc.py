"""Behaviour cloning from oracle demonstrations: MLP, GNN and NLM policies trained with cross-entropy on the
oracle's actions.

The oracle is a deterministic function of the observation, and the same views recur most steps, so the
demonstrations are reduced to their unique (observation, action) rows with counts; a batch samples rows in
proportion to their count (``balance="none"``) or to count / frequency of the row's action (``"full"``: every
action equally likely, the class balancing the paper uses for the rare Stop), or to count / sqrt(frequency)
(``"sqrt"``). With ``augment="views"`` a share of every batch is replaced by views derived from the sampled rows
(other entities shuffled, a random number of them hidden) and labelled by the oracle (:mod:`.augment`).
``lr_schedule="cosine"`` decays the rate to 0 over the budget; ``nlm_hidden`` / ``nlm_residual`` give NLM-BC's logic
MLPs a hidden ReLU layer / let every NLM layer read all earlier layers (the architecture block records both). The
settings are a :class:`~core.tasks.spf.learning.config.BCConfig`. Demonstrations come from ``--demos FILE``
(``spf collect``) or are collected once and cached in ``demos/`` (git-ignored).
"""
from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from core.base.errors import PolicyError
from core.tasks.spf.demos import Trajectory, collect_oracle, load_demonstrations, save_demonstrations
from core.tasks.spf.env import SPFEnv
from core.tasks.spf.learning.augment import ViewAugmenter
from core.tasks.spf.learning.common import BestKeeper, finish_run, torch_setup
from core.tasks.spf.learning.config import BCConfig, filled
from core.tasks.spf.learning.config_yaml import run_config
from core.tasks.spf.learning.monitor import Monitor
from core.tasks.spf.learning.settings import BALANCES, LR_SCHEDULES
from core.tasks.spf.settings import load_spf_mode

__all__ = ["train_bc", "demonstration_rows", "sampling_weights", "training_accuracy", "lr_factor"]


def lr_factor(schedule: str, done: int, steps: int) -> float:
    """Multiplier of the learning rate after ``done`` of ``steps`` gradient steps (step ``done + 1`` uses it)."""
    if schedule == "constant":
        return 1.0
    if schedule == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * min(done, steps) / max(1, steps)))
    raise ValueError(f"lr_schedule must be one of {', '.join(LR_SCHEDULES)}, got {schedule!r}")


def _demos(mode: str, demos: str | Path | Sequence[str | Path] | None, n_demos: int, demo_seed: int,
           monitor: Monitor, worlds: int = 1) -> tuple[list[Trajectory], str]:
    """The trajectories and where they came from: ``demos`` (one file or several), else ``n_demos`` oracle
    trajectories split evenly over ``worlds`` worlds seeded ``demo_seed``, ``demo_seed + 1``, … (each world:
    ``reset(seed)`` once, then plain resets), every world's share cached in ``demos/``."""
    if demos is not None:
        files = [demos] if isinstance(demos, (str, Path)) else list(demos)
        trajs = []
        for f in files:
            trajs += load_demonstrations(f)[0]
        return trajs, ", ".join(str(f) for f in files)
    if worlds < 1 or worlds > n_demos:
        raise ValueError(f"demo worlds must be in 1..n_demos ({n_demos}), got {worlds}")
    shares = [n_demos // worlds + (1 if w < n_demos % worlds else 0) for w in range(worlds)]
    trajs, sources = [], []
    for w, n in enumerate(shares):
        t, src = _world_demos(mode, n, demo_seed + w, monitor)
        trajs += t
        sources.append(src)
    return trajs, ", ".join(sources)


def _world_demos(mode: str, n_demos: int, demo_seed: int, monitor: Monitor) -> tuple[list[Trajectory], str]:
    name = load_spf_mode(mode, "train").name
    path = Path("demos") / f"spf_{name}_oracle_{n_demos}_seed{demo_seed}.npz"
    if path.is_file():
        trajs, _ = load_demonstrations(path)
        return trajs, str(path)
    monitor.message(f"collecting {n_demos} oracle demonstrations ({name}, train split, seed {demo_seed})")
    done = [0]

    def tick(_t):
        done[0] += 1
        monitor.progress(done[0], n_demos)

    trajs, meta = collect_oracle(mode, n_demos, "train", demo_seed, progress=tick)
    try:
        save_demonstrations(path, trajs, meta)
    except OSError:
        return trajs, f"collected in memory (could not cache to {path})"
    return trajs, str(path)


def demonstration_rows(trajs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique (observation, action) rows of the trajectories: ``(obs [R, D] f4, actions [R] i8, counts [R])``."""
    obs = np.concatenate([t.observations[:-1] for t in trajs]).astype(np.float32)
    act = np.concatenate([t.actions for t in trajs]).astype(np.int64)
    packed = np.concatenate([np.packbits(obs > 0.5, axis=1), act[:, None].astype(np.uint8)], axis=1)
    _, first, counts = np.unique(packed, axis=0, return_index=True, return_counts=True)
    return obs[first], act[first], counts


def sampling_weights(actions: np.ndarray, counts: np.ndarray, balance: str) -> np.ndarray:
    """Probability of drawing each unique row (see the module docstring)."""
    freq = np.bincount(actions, weights=counts, minlength=4)
    if balance == "none":
        w = counts.astype(np.float64)
    elif balance == "full":
        w = counts / freq[actions]
    elif balance == "sqrt":
        w = counts / np.sqrt(freq[actions])
    else:
        raise ValueError(f"balance must be one of {', '.join(BALANCES)}, got {balance!r}")
    return w / w.sum()


def train_bc(config: BCConfig, out: str | Path, monitor: Monitor | None = None) -> dict:
    """Train ``config`` into the run folder ``out`` (the best checkpoint on validation is kept there); returns the
    run's final ``config.yaml`` document."""
    import torch
    import torch.nn.functional as F

    from core.tasks.spf.networks import build_policy_net

    c = config
    monitor = monitor or Monitor()
    out = Path(out)
    steps = filled(c.steps)
    device = torch_setup(c.seed, c.threads)
    env = SPFEnv(c.mode, "train")
    t0 = time.perf_counter()
    trajs, demo_source = _demos(c.mode, c.demos, c.n_demos, c.demo_seed, monitor, c.demo_worlds)
    if trajs and trajs[0].observations.shape[1] != env.layout.size:
        raise PolicyError(f"the demonstrations have {trajs[0].observations.shape[1]} observation values, mode "
                          f"{env.spf.name} has {env.layout.size}", demo_source)
    obs, act, counts = demonstration_rows(trajs)
    p = sampling_weights(act, counts, c.balance)
    base = env.unwrapped
    freq = np.bincount(act, weights=counts, minlength=4).astype(int).tolist()
    labels = {"augment": {"labels": "oracle on the augmented view"}} if c.augment != "none" else {}
    config_doc = run_config(c, env, {
        "unit": "gradient steps", "optimiser": "Adam", "loss": "cross-entropy on the oracle action",
        "device": device,
        "demonstrations": {"source": demo_source, "trajectories": len(trajs), "samples": int(counts.sum()),
                           "unique_rows": int(len(act)), "action_counts": freq},
        **labels, "collect_seconds": round(time.perf_counter() - t0, 1)})
    net = build_policy_net(config_doc["architecture"]).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=filled(c.lr))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: lr_factor(c.lr_schedule, k, steps))
    keeper = BestKeeper(out, config_doc, c.mode, c.val_episodes, monitor)
    writer = _tb_writer(out, c.tensorboard)
    eval_every = filled(c.eval_every)
    rng = np.random.default_rng(c.seed)
    augmenter = ViewAugmenter(base, c.augment_fraction) if c.augment == "views" else None
    X = torch.from_numpy(obs).to(device)
    Y = torch.from_numpy(act).to(device)
    t_train = time.perf_counter()
    cancelled = False
    loss_avg = None
    for step in range(1, steps + 1):
        if monitor.cancelled:
            cancelled = True
            break
        idx = rng.choice(len(act), size=c.batch, p=p)
        if augmenter is None:
            xb, yb = X[idx], Y[idx]
        else:
            ob, ab = augmenter(obs[idx], act[idx], rng)
            xb, yb = torch.from_numpy(ob).to(device), torch.from_numpy(ab).to(device)
        loss = F.cross_entropy(net(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        lv = float(loss.detach())
        loss_avg = lv if loss_avg is None else 0.98 * loss_avg + 0.02 * lv
        if step % 50 == 0 or step == steps:
            monitor.progress(step, steps)
            monitor.metric(step, loss=loss_avg)
            if writer:
                writer.add_scalar("train/loss", loss_avg, step)
        if step % eval_every == 0 or step == steps:
            acc, bal = training_accuracy(net, X, act, counts)
            val = keeper.check(net, step, {"loss": round(loss_avg, 5), "train_accuracy": round(acc, 4),
                                           "train_balanced_accuracy": round(bal, 4)})
            if writer:
                for k in ("TSR", "DSR", "Score"):
                    writer.add_scalar(f"val/{k}", val[k], step)
                writer.add_scalar("train/accuracy", acc, step)
                writer.add_scalar("train/balanced_accuracy", bal, step)
    config_doc["training"]["train_seconds"] = round(time.perf_counter() - t_train, 1)
    if keeper.best is None:  # cancelled before the first validation: keep what there is
        keeper.check(net, step)
    if writer:
        writer.close()
    return finish_run(out, config_doc, time.perf_counter() - t0, cancelled, c.test, monitor)


def training_accuracy(net, X, act: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """Agreement with the oracle on the demonstrated rows: weighted by how often each row was demonstrated, and
    *balanced* (mean over the oracle's actions of the share of that action's rows predicted right). The weighted
    figure alone misleads: easy's demonstrations are 85 % Stop, so a policy that stops everywhere scores 0.85."""
    import torch

    with torch.no_grad():
        pred = net(X).argmax(1).cpu().numpy()
    ok = pred == act
    acc = float((ok * counts).sum() / counts.sum())
    bal = float(np.mean([ok[act == a].mean() for a in np.unique(act)]))
    return acc, bal


def _tb_writer(out: Path, enabled: bool):
    if not enabled:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard missing: training still works
        return None
    return SummaryWriter(str(out / "tb"))
