"""Algorithms, default architectures per mode, training-reward settings and training hyper-parameters.

Why training rewards differ from the test reward: with the evaluation reward a DQN learns to "almost always Stop"
(a violation costs −10 at once, Stop only −5 / path length per step, the overtime penalty comes at the horizon),
measured in docs/spf.md. The paper keeps the action costs and tunes the violation and overtime penalties per method
(DQN and NLM-DQN share one). :class:`TrainingReward` holds those two numbers; the run's ``config.yaml`` records them
and evaluation always uses the environment's fixed test reward.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["ALGOS", "BC_ALGOS", "RL_ALGOS", "TrainingReward", "TRAINING_REWARDS", "default_architecture",
           "DEFAULT_STEPS", "mlp_hidden"]

BC_ALGOS = ("mlp-bc", "gnn-bc", "nlm-bc")
RL_ALGOS = ("dqn", "ppo", "a2c", "nlm-dqn")
ALGOS = BC_ALGOS + RL_ALGOS

#: default budgets: BC = gradient steps (batches), RL = environment steps (the paper's RL budget is 200k)
DEFAULT_STEPS = {"mlp-bc": 3000, "gnn-bc": 3000, "nlm-bc": 3000, "dqn": 200_000, "ppo": 200_000, "a2c": 200_000,
                 "nlm-dqn": 200_000}


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
    """The MLP's hidden widths (issue 14 / the paper's appendix: 128×64 and 64×64 weight matrices after the input
    layer in easy and medium, 128×64 and 64×128 in hard and expert)."""
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
        # one hidden ReLU layer of 32 in every per-arity MLP: without it the NLM underfits medium's bus rule
        # (docs/spf.md, "Trying to make NLM-BC beat GNN-BC")
        return {**base, "extractor": "nlm", "nlm": {"breadth": 3, "depth": 4, "output_dims": 8, "hidden_dims": [32]},
                "hidden": [], "activation": "relu", "scores": "logits"}
    if algo == "dqn":
        return {**base, "extractor": "flatten", "hidden": [128, 64], "activation": "relu", "scores": "q_values"}
    if algo in ("ppo", "a2c"):
        return {**base, "extractor": "flatten", "hidden": [128, 64], "activation": "tanh", "scores": "logits"}
    if algo == "nlm-dqn":
        return {**base, "extractor": "nlm", "nlm": {"breadth": 3, "depth": 4, "output_dims": 8}, "hidden": [64],
                "activation": "relu", "scores": "q_values"}
    raise ValueError(f"unknown algorithm {algo!r}")
