"""Reasoning networks: scene graph (unary [N, U], binary [N, N, B], who sees whom) → action logits per agent.

* :class:`GNNReasoner` — two GINE-style layers (``x_i' = MLP(x_i + Σ_{j→i} ReLU(x_j + W e_ji))``, the update of
  torch_geometric's ``GINEConv`` with eps = 0) over the edges j → i where agent i sees agent j, then a linear layer
  to the actions. The edge feature is ``[binary(i, j), binary(j, i)]`` (both directions: the rules read relations
  either way round, e.g. ``HigherPri(Y, X)`` and ``IsClose(X, Y)``).
* :class:`NLMReasoner` — for each agent, its own entity list (itself, then the agents it sees in index order,
  padded), a Neural Logic Machine (``core.models.nlm.LogicMachine``; breadth 3, depth 4, 8 predicates per arity
  by default) and a linear layer from the ego's invented unary predicates to the actions.

Both take a batch as lists of per-image tensors (agent counts differ) and return ``[ΣN, 4]`` logits.
"""
from __future__ import annotations

import torch
from torch import nn

from core.models.nlm import LogicMachine
from core.models.vap.config import VapModelConfig


def _edges(sees: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """(dst, src, offsets): global indices of every edge j → i with sees[i, j], i ≠ j."""
    dst, src, offs = [], [], []
    off = 0
    for s in sees:
        n = s.shape[0]
        m = s.clone()
        m.fill_diagonal_(False)
        i, j = torch.nonzero(m, as_tuple=True)
        dst.append(i + off)
        src.append(j + off)
        offs.append(off)
        off += n
    dev = sees[0].device if sees else None
    return (torch.cat(dst) if dst else torch.zeros(0, dtype=torch.long, device=dev),
            torch.cat(src) if src else torch.zeros(0, dtype=torch.long, device=dev), offs)


class GINELayer(nn.Module):
    def __init__(self, d_in: int, d_edge: int, d_out: int) -> None:
        super().__init__()
        self.edge = nn.Linear(d_edge, d_in)
        self.mlp = nn.Sequential(nn.Linear(d_in, d_out), nn.ReLU(), nn.Linear(d_out, d_out), nn.ReLU())

    def forward(self, x: torch.Tensor, dst: torch.Tensor, src: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        msg = torch.relu(x[src] + self.edge(e))
        agg = torch.zeros_like(x).index_add_(0, dst, msg)
        return self.mlp(x + agg)


class GNNReasoner(nn.Module):
    def __init__(self, cfg: VapModelConfig) -> None:
        super().__init__()
        u, b, h = cfg.n_unary, cfg.n_binary, cfg.gnn_hidden
        self.layers = nn.ModuleList([GINELayer(u, 2 * b, h), GINELayer(h, 2 * b, h)])
        self.out = nn.Linear(h, len(cfg.actions))

    def forward(self, unary: list[torch.Tensor], binary: list[torch.Tensor], sees: list[torch.Tensor]
                ) -> torch.Tensor:
        x = torch.cat(unary)
        dst, src, offs = _edges(sees)
        feats = []
        for bmat, s, _ in zip(binary, sees, offs):
            m = s.clone()
            m.fill_diagonal_(False)
            i, j = torch.nonzero(m, as_tuple=True)
            feats.append(torch.cat([bmat[i, j], bmat[j, i]], dim=-1))
        e = torch.cat(feats) if feats else x.new_zeros(0, 2 * (binary[0].shape[-1] if binary else 0))
        for layer in self.layers:
            x = layer(x, dst, src, e)
        return self.out(x)


def ego_lists(sees: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """For every agent of the batch: its entity list as global indices ``[A, K]`` (itself, then the agents it sees
    in index order; padding 0) and the mask ``[A, K]`` of real entries."""
    rows: list[list[int]] = []
    off = 0
    for s in sees:
        n = s.shape[0]
        sc = s.cpu()
        for a in range(n):
            others = [j for j in range(n) if j != a and bool(sc[a, j])]
            rows.append([a + off] + [j + off for j in others])
        off += n
    k = max((len(r) for r in rows), default=1)
    dev = sees[0].device if sees else None
    idx = torch.zeros(len(rows), k, dtype=torch.long, device=dev)
    mask = torch.zeros(len(rows), k, dtype=torch.bool, device=dev)
    for r, row in enumerate(rows):
        idx[r, :len(row)] = torch.tensor(row, dtype=torch.long)
        mask[r, :len(row)] = True
    return idx, mask


class NLMReasoner(nn.Module):
    def __init__(self, cfg: VapModelConfig) -> None:
        super().__init__()
        dims = [0, cfg.n_unary, cfg.n_binary] + [0] * (cfg.nlm_breadth - 2)
        self.nlm = LogicMachine(dims, breadth=cfg.nlm_breadth, depth=cfg.nlm_depth, output_dims=cfg.nlm_output,
                                exclude_self=True)
        self.out = nn.Linear(self.nlm.out_dims[1], len(cfg.actions))

    def forward(self, unary: list[torch.Tensor], binary: list[torch.Tensor], sees: list[torch.Tensor]
                ) -> torch.Tensor:
        u = torch.cat(unary)
        t = u.shape[0]
        g = u.new_zeros(t, t, binary[0].shape[-1])
        off = 0
        for bmat in binary:
            n = bmat.shape[0]
            g[off:off + n, off:off + n] = bmat
            off += n
        idx, mask = ego_lists(sees)
        m = mask.to(u.dtype)
        ul = u[idx] * m.unsqueeze(-1)
        bl = g[idx.unsqueeze(2), idx.unsqueeze(1)] * (m.unsqueeze(2) * m.unsqueeze(1)).unsqueeze(-1)
        inputs = [None, ul, bl] + [None] * (len(self.nlm.input_dims) - 3)
        out = self.nlm(inputs, mask=mask)
        return self.out(out[1][:, 0])


def make_reasoner(cfg: VapModelConfig) -> nn.Module:
    return GNNReasoner(cfg) if cfg.reasoning == "gnn" else NLMReasoner(cfg)
