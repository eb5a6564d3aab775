"""Algorithms, default architectures per mode, training-reward settings and training hyper-parameters: the
defaults a :class:`~core.tasks.spf.learning.config.BCConfig` or :class:`~core.tasks.spf.learning.config.RLConfig`
fills in.

Why training rewards differ from the test reward: with the evaluation reward a DQN learns to "almost always Stop"
(a violation costs −10 at once, Stop only −5 / path length per step, the overtime penalty comes at the horizon),
measured in docs/spf.md. The paper keeps the action costs and tunes the violation and overtime penalties per method
(DQN and NLM-DQN share one). :class:`TrainingReward` holds those two numbers; the run's ``config.yaml`` records them
and evaluation always uses the environment's fixed test reward.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["ALGOS", "BC_ALGOS", "RL_ALGOS", "TrainingReward", "TRAINING_REWARDS", "default_architecture",
           "DEFAULT_STEPS", "mlp_hidden", "BC_LR", "BALANCES", "AUGMENT", "LR_SCHEDULES", "NLM_BC_HIDDEN",
           "HYPERPARAMETERS", "N_ENVS"]

BC_ALGOS = ("mlp-bc", "gnn-bc", "nlm-bc")
RL_ALGOS = ("dqn", "ppo", "a2c", "nlm-dqn")
ALGOS = BC_ALGOS + RL_ALGOS

#: default budgets: BC = gradient steps (batches), RL = environment steps (the paper's RL budget is 200k)
DEFAULT_STEPS = {"mlp-bc": 3000, "gnn-bc": 3000, "nlm-bc": 3000, "dqn": 200_000, "ppo": 200_000, "a2c": 200_000,
                 "nlm-dqn": 200_000}

#: Adam learning rates of behaviour cloning. The NLM needs a larger one than 1e-3: its sigmoid layers start out
#: nearly constant, and at 1e-3 800 steps left it stopping on most views where the oracle drives (Normal recall 0.70
#: on the demonstrated rows, the same policy for every seed). With its hidden ReLU layer (the default architecture)
#: 5e-3 was fragile (a seed stuck on a plateau, then degraded); 2e-3 trained every seed tried (docs/spf.md)
BC_LR = {"mlp-bc": 1e-3, "gnn-bc": 1e-3, "nlm-bc": 2e-3}
#: how behaviour cloning samples the demonstrated rows (core/tasks/spf/learning/bc.py)
BALANCES = ("full", "sqrt", "none")
#: behaviour cloning's augmentation: none, or views derived from the demonstrated ones (learning/augment.py)
AUGMENT = ("none", "views")
#: ``constant``: the rate throughout; ``cosine``: from the rate down to 0 at the last step (half a cosine)
LR_SCHEDULES = ("constant", "cosine")
#: the width of the hidden ReLU layer in every per-arity MLP of NLM-BC's logic machine: without it the NLM underfits
#: medium's bus rule (docs/spf.md, "Trying to make NLM-BC beat GNN-BC")
NLM_BC_HIDDEN = 32

#: stable-baselines3 settings per algorithm
HYPERPARAMETERS = {
    "dqn": {"learning_rate": 5e-4, "buffer_size": 50_000, "learning_starts": 1000, "batch_size": 64,
            "train_freq": 1, "gradient_steps": 1, "target_update_interval": 1000, "exploration_fraction": 0.2,
            "exploration_final_eps": 0.05, "gamma": 0.99},
    # NLM-DQN: one gradient step of batch 128 per 8 environment steps (8 envs, train_freq 1) — the reference's SB3
    # ratio (2 envs, train_freq 4, batch 128); the NLM's forward/backward, not the simulator, is its cost. lr 5e-3:
    # at 1e-3 the NLM's sigmoid layers stay near-constant for hundreds of Adam steps (as in NLM-BC, docs/spf.md)
    "nlm-dqn": {"learning_rate": 5e-3, "buffer_size": 50_000, "learning_starts": 1000, "batch_size": 128,
                "train_freq": 1, "gradient_steps": 1, "target_update_interval": 1000, "exploration_fraction": 0.2,
                "exploration_final_eps": 0.05, "gamma": 0.99},
    "ppo": {"learning_rate": 3e-4, "n_steps": 128, "batch_size": 128, "n_epochs": 4, "gamma": 0.99,
            "ent_coef": 0.01},
    "a2c": {"learning_rate": 7e-4, "n_steps": 8, "gamma": 0.99, "ent_coef": 0.01},
}

#: vectorised training envs per algorithm (``--n-envs`` overrides)
N_ENVS = {"dqn": 4, "ppo": 4, "a2c": 4, "nlm-dqn": 8}


@dataclass(frozen=True)
class TrainingReward:
    """Training reward = the action cost / path length as in the test reward (fixed), plus ``violation`` instead of
    the violated rules' reward when a dead rule is broken, plus ``overtime`` instead of the mode's overtime cost when
    the horizon truncates the episode. ``None`` keeps the test value."""

    violation: float | None = None
    overtime: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


#: per method; DQN and NLM-DQN share one (as in the paper)
TRAINING_REWARDS = {
    "dqn": TrainingReward(violation=-1.0, overtime=-3.0),
    "nlm-dqn": TrainingReward(violation=-1.0, overtime=-3.0),
    "ppo": TrainingReward(violation=-1.0, overtime=-3.0),
    "a2c": TrainingReward(violation=-1.0, overtime=-3.0),
}


def mlp_hidden(mode_name: str) -> list[int]:
    """The MLP's hidden widths (the paper's appendix: 128×64 and 64×64 weight matrices after the input layer in
    easy and medium, 128×64 and 64×128 in hard and expert)."""
    return [128, 64, 64] if mode_name in ("easy", "medium") else [128, 64, 128]


def default_architecture(algo: str, mode_name: str, obs_size: int, layout: list, n_entities: int) -> dict:
    """The ``architecture`` block of a run (read back by :func:`core.tasks.spf.networks.build_policy_net`)."""
    base = {"obs_size": int(obs_size), "layout": [list(x) for x in layout], "n_entities": int(n_entities)}
    if algo == "mlp-bc":
        return {**base, "extractor": "flatten", "hidden": mlp_hidden(mode_name), "activation": "relu",
                "scores": "logits"}
    if algo == "gnn-bc":
        return {**base, "extractor": "gnn", "gnn": {"hidden": 128, "layers": 2}, "hidden": [],
                "activation": "relu", "scores": "logits"}
    if algo == "nlm-bc":
        return {**base, "extractor": "nlm",
                "nlm": {"breadth": 3, "depth": 4, "output_dims": 8, "hidden_dims": [NLM_BC_HIDDEN]},
                "hidden": [], "activation": "relu", "scores": "logits"}
    if algo == "dqn":
        return {**base, "extractor": "flatten", "hidden": [128, 64], "activation": "relu", "scores": "q_values"}
    if algo in ("ppo", "a2c"):
        return {**base, "extractor": "flatten", "hidden": [128, 64], "activation": "tanh", "scores": "logits"}
    if algo == "nlm-dqn":
        return {**base, "extractor": "nlm", "nlm": {"breadth": 3, "depth": 4, "output_dims": 8}, "hidden": [64],
                "activation": "relu", "scores": "q_values"}
    raise ValueError(f"unknown algorithm {algo!r}")
