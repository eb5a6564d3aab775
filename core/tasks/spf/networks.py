"""SPF policy networks (torch): observation vector ``[B, D]`` → 4 action scores ``[B, 4]`` (Slow, Normal, Fast, Stop).

One module, :class:`PolicyNet`, serves every learner so a trained run is always rebuilt the same way from its
``config.yaml`` ``architecture`` block (no pickle: the weights are a safetensors file, the structure is data):

* ``extractor`` turns the observation into features:
  ``flatten`` (the vector itself, MLP learners and SB3's MlpPolicy), ``gnn`` (GIN-style message passing over the
  observed entities, read out at the ego) or ``nlm`` (a :class:`~core.models.nlm.LogicMachine` over the grounded
  predicates, read out as the ego's invented unary predicates);
* ``head`` is an MLP (``hidden`` widths, ``activation`` relu/tanh) ending in 4 scores.

The attribute names mirror stable-baselines3's (``features_extractor`` in a DQN ``QNetwork``; ``q_net`` /
``policy_net`` + ``action_net``), which makes exporting an SB3 policy a renaming of tensors
(:mod:`core.tasks.spf.learning.rl`). The observation layout (offset, arity per predicate, number of entities) comes
from the run's config: this module imports nothing from the task.
"""
from __future__ import annotations

from typing import Any, Sequence

import torch
from torch import nn

from core.models.nlm import LogicMachine, split_observation

__all__ = ["PolicyNet", "NLMExtractor", "GNNExtractor", "build_policy_net", "ACTIVATIONS", "NUM_ACTIONS"]

NUM_ACTIONS = 4
ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


def _blocks(layout: Sequence[Sequence[Any]]) -> list[tuple[int, int]]:
    """``[[name, offset, arity], ...]`` → ``[(offset, arity), ...]``."""
    return [(int(off), int(ar)) for _, off, ar in layout]


class NLMExtractor(nn.Module):
    """Observation → the ego's invented unary predicates of an NLM over the view's entities (``[B, out_dims]``)."""

    def __init__(self, layout: Sequence[Sequence[Any]], n_entities: int, breadth: int = 3, depth: int = 4,
                 output_dims: int = 8, hidden_dims: Sequence[int] = (), exclude_self: bool = True,
                 residual: bool = False) -> None:
        super().__init__()
        self.blocks = _blocks(layout)
        self.n = int(n_entities)
        u = sum(1 for _, ar in self.blocks if ar == 1)
        b = sum(1 for _, ar in self.blocks if ar == 2)
        dims = [0, u, b] + [0] * (breadth - 2)
        self.nlm = LogicMachine(dims[:breadth + 1], breadth=breadth, depth=depth, output_dims=output_dims,
                                hidden_dims=hidden_dims, exclude_self=exclude_self, residual=residual,
                                output_arities=(1,))
        self.features_dim = self.nlm.out_dims[1]

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        unary, binary, mask = split_observation(obs.float(), self.blocks, self.n)
        inputs = [None, unary, binary] + [None] * (self.nlm.breadth - 2)
        return self.nlm(inputs, mask)[1][:, 0]


class GNNExtractor(nn.Module):
    """GIN-style message passing over the observed entities (GINE: ``h_i' = MLP((1+eps) h_i + Σ_j ReLU(h_j +
    W e_ji))`` over the real entities j ≠ i, ``e_ji`` = the binary predicates of the pair), ``layers`` rounds of
    width ``hidden``; the features are the ego's final embedding ``[B, hidden]``."""

    def __init__(self, layout: Sequence[Sequence[Any]], n_entities: int, hidden: int = 128, layers: int = 2) -> None:
        super().__init__()
        self.blocks = _blocks(layout)
        self.n = int(n_entities)
        u = sum(1 for _, ar in self.blocks if ar == 1)
        b = sum(1 for _, ar in self.blocks if ar == 2)
        self.embed = nn.Linear(u, hidden)
        self.edge = nn.ModuleList(nn.Linear(2 * b, hidden) for _ in range(layers))
        self.mlps = nn.ModuleList(nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                                nn.ReLU()) for _ in range(layers))
        self.eps = nn.Parameter(torch.zeros(layers))
        self.features_dim = hidden

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        unary, binary, mask = split_observation(obs.float(), self.blocks, self.n)
        # edge j -> i carries both directions of every binary predicate of the pair
        e = torch.cat([binary.transpose(1, 2), binary], dim=-1)        # [B, i, j, 2b]
        m = mask.float()
        adj = m[:, :, None] * m[:, None, :] * (1 - torch.eye(self.n, device=obs.device))[None]
        h = self.embed(unary)
        for k, mlp in enumerate(self.mlps):
            msg = torch.relu(h[:, None, :, :] + self.edge[k](e))          # [B, i, j, H]
            agg = (msg * adj[..., None]).sum(dim=2)
            h = mlp((1 + self.eps[k]) * h + agg) * m[..., None]
        return h[:, 0]


class PolicyNet(nn.Module):
    """``features_extractor`` then ``q_net`` (an MLP head to 4 scores); see the module docstring."""

    def __init__(self, arch: dict) -> None:
        super().__init__()
        self.arch = dict(arch)
        kind = arch["extractor"]
        if kind == "flatten":
            self.features_extractor: nn.Module = nn.Flatten()
            width = int(arch["obs_size"])
        elif kind == "nlm":
            self.features_extractor = NLMExtractor(arch["layout"], arch["n_entities"], **arch.get("nlm", {}))
            width = self.features_extractor.features_dim
        elif kind == "gnn":
            self.features_extractor = GNNExtractor(arch["layout"], arch["n_entities"], **arch.get("gnn", {}))
            width = self.features_extractor.features_dim
        else:
            raise ValueError(f"unknown extractor {kind!r} (flatten, nlm, gnn)")
        act = ACTIVATIONS[arch.get("activation", "relu")]
        layers: list[nn.Module] = []
        for h in arch.get("hidden", []):
            layers += [nn.Linear(width, int(h)), act()]
            width = int(h)
        layers.append(nn.Linear(width, NUM_ACTIONS))
        self.q_net = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.q_net(self.features_extractor(obs))


def build_policy_net(arch: dict) -> PolicyNet:
    """The network an ``architecture`` block describes (keys: ``extractor``, ``obs_size``, ``layout``,
    ``n_entities``, ``hidden``, ``activation``, and ``nlm``/``gnn`` options)."""
    return PolicyNet(arch)
