"""Neural Logic Machine (NLM): a torch implementation for relational inputs (SPF observations, VAP scene graphs).

Why this shape: the LogiCity baselines reason over grounded predicates of a handful of entities. An NLM keeps one
tensor per *arity* (0: global facts ``[B, C0]``, 1: unary ``[B, N, C1]``, 2: binary ``[B, N, N, C2]``, 3: ternary
``[B, N, N, N, C3]``) and in every layer lets each arity read its neighbours:

* **expansion** (arity r−1 → r): a predicate ``p(x1..x_{r-1})`` becomes ``q(x1..x_r) = p(x1..x_{r-1})`` for every
  ``x_r`` (broadcast along a new last entity axis);
* **reduction** (arity r+1 → r): ``exists x_{r+1}: p(x1..x_{r+1})`` (max) and ``forall x_{r+1}: p(...)`` (min) over
  the last entity axis — two channels per input channel. With ``exclude_self`` the reduced variable skips the values
  of ``x1..x_r`` (``exists y != x: p(x, y)``), and entities outside ``mask`` (padding, placeholders) are skipped:
  they count as false for *exists* and true for *forall*;
* **permutation** (arity r ≥ 2): the features of every ordering of the r entity axes are concatenated, so
  ``p(x, y)`` and ``p(y, x)`` are both visible to ``q(x, y)``;
* a per-arity MLP (``hidden_dims`` hidden ReLU layers, then a linear layer to ``output_dims`` and a sigmoid) turns
  the gathered channels into the layer's invented predicates.

The defaults follow the LogiCity baselines: breadth 3, depth 4, 8 invented predicates per arity and layer, no hidden
layers, ``exclude_self=True``, no residual connections.

Interface::

    nlm = LogicMachine(input_dims=[0, U, B, 0])          # channels per arity 0..breadth (0 = absent)
    out = nlm([None, unary, binary, None], mask=valid)  # list per arity: tensors or None
    ego_features = out[1][:, 0]                         # [batch, 8]: the ego's invented unary predicates
    LogicMachine([0, U, B, 0], output_arities=(1,))     # same arity-1 result, skips work nothing reads

``input_dims`` lists the channels per arity 0..breadth (0 or ``None`` = no input of that arity); ``forward`` takes a
list of the same length with tensors or ``None`` and an optional boolean ``mask [B, N]`` of real entities, and
returns the last layer's tensors per arity (``out_dims`` gives their channels; with ``io_residual`` the inputs are
concatenated to them). :func:`split_observation` turns SPF observation vectors into the unary/binary tensors and the
entity mask. torch is imported by this module: import it lazily (never at studio start-up).
"""
from __future__ import annotations

import functools
import itertools
import operator
from typing import Sequence, cast

import torch
from torch import nn

__all__ = ["expand", "reduce_exists_forall", "permute_arity", "NLMLayer", "LogicMachine", "split_observation"]


def expand(x: torch.Tensor, n: int) -> torch.Tensor:
    """Arity r → r+1: ``x [B, N^r, C]`` broadcast along a new last entity axis of size ``n``:
    ``out[b, i1..ir, j, c] = x[b, i1..ir, c]``."""
    r = x.dim() - 2
    return x.unsqueeze(r + 1).expand(*x.shape[:r + 1], n, x.shape[-1])


def _exclusion_mask(x: torch.Tensor, mask: torch.Tensor | None, exclude_self: bool) -> torch.Tensor | None:
    """Boolean ``[B, N^(r+1), 1]``-broadcastable mask of the positions a reduction over the last entity axis of
    ``x [B, N^(r+1), C]`` may use: the reduced entity is real (``mask``) and, with ``exclude_self``, differs from
    every other index."""
    r1 = x.dim() - 2
    n = x.shape[-2]
    keep = None
    if mask is not None:
        shape = [mask.shape[0]] + [1] * (r1 - 1) + [n, 1]
        keep = mask.bool().reshape(shape)
    if exclude_self and r1 >= 2:
        idx = torch.arange(n, device=x.device)
        last_shape = [1] * r1
        last_shape[-1] = n
        last = idx.reshape(last_shape)
        diff = torch.ones([1] * (r1 + 1) + [1], dtype=torch.bool, device=x.device)
        for k in range(r1 - 1):
            shape = [1] * r1
            shape[k] = n
            other = idx.reshape(shape)
            diff = diff & (other != last).unsqueeze(0).unsqueeze(-1)
        keep = diff if keep is None else keep & diff
    return keep


def reduce_exists_forall(x: torch.Tensor, mask: torch.Tensor | None = None,
                         exclude_self: bool = True) -> torch.Tensor:
    """Arity r+1 → r: ``x [B, N^(r+1), C]`` with values in [0, 1] → ``[B, N^r, 2C]``: first the C channels of
    ``exists`` (max over the last entity axis), then the C channels of ``forall`` (min). Excluded positions (see
    :func:`_exclusion_mask`) count as 0 for exists and 1 for forall, so an empty range gives exists 0, forall 1."""
    keep = _exclusion_mask(x, mask, exclude_self)
    if keep is None:
        ex, fa = x.amax(dim=-2), x.amin(dim=-2)
    else:
        k = keep.to(x.dtype)
        ex = (x * k).amax(dim=-2)
        fa = (x * k + (1.0 - k)).amin(dim=-2)
    return torch.cat([ex, fa], dim=-1)


def permute_arity(x: torch.Tensor) -> torch.Tensor:
    """``x [B, N^r, C]`` → ``[B, N^r, r!·C]``: the channels of every ordering of the r entity axes, identity first
    (``out[..., i, j, k·C:(k+1)·C] = x[..., p_k(i, j), :]``)."""
    r = x.dim() - 2
    if r < 2:
        return x
    parts = [x.permute(0, *[1 + p for p in perm], r + 1) for perm in itertools.permutations(range(r))]
    return torch.cat(parts, dim=-1)


def _mlp(d_in: int, hidden: Sequence[int], d_out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(d_in, h), nn.ReLU()]
        d_in = h
    layers += [nn.Linear(d_in, d_out), nn.Sigmoid()]
    return nn.Sequential(*layers)


class NLMLayer(nn.Module):
    """One NLM layer: per arity r, concatenate expand(f[r−1]), f[r] and reduce(f[r+1]), permute (r ≥ 2), apply the
    arity's MLP. An arity with no input channels gives ``None``."""

    def __init__(self, breadth: int, input_dims: Sequence[int], output_dims: int | Sequence[int],
                 hidden_dims: Sequence[int] = (), exclude_self: bool = True) -> None:
        super().__init__()
        if len(input_dims) != breadth + 1:
            raise ValueError(f"input_dims needs {breadth + 1} entries (arity 0..{breadth}), got {len(input_dims)}")
        self.breadth = breadth
        self.input_dims = [int(d or 0) for d in input_dims]
        outs = [int(output_dims)] * (breadth + 1) if isinstance(output_dims, int) else [int(d) for d in output_dims]
        self.exclude_self = exclude_self
        self.mlps = nn.ModuleList()
        self.output_dims: list[int] = []
        for r in range(breadth + 1):
            d = self.input_dims[r]
            if r > 0:
                d += self.input_dims[r - 1]
            if r < breadth:
                d += 2 * self.input_dims[r + 1]
            d *= max(1, _factorial(r))
            if d == 0 or outs[r] == 0:
                self.mlps.append(nn.Identity())
                self.output_dims.append(0)
            else:
                self.mlps.append(_mlp(d, hidden_dims, outs[r]))
                self.output_dims.append(outs[r])

    def forward(self, inputs: Sequence[torch.Tensor | None], n: int,
                mask: torch.Tensor | None = None) -> list[torch.Tensor | None]:
        outs: list[torch.Tensor | None] = []
        for r in range(self.breadth + 1):
            if self.output_dims[r] == 0:
                outs.append(None)
                continue
            parts = []
            if r > 0 and self.input_dims[r - 1]:
                parts.append(expand(_given(inputs, r - 1), n))
            if self.input_dims[r]:
                parts.append(_given(inputs, r))
            if r < self.breadth and self.input_dims[r + 1]:
                parts.append(reduce_exists_forall(_given(inputs, r + 1), mask, self.exclude_self))
            x = parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)
            outs.append(self._apply_mlp(r, x))
        return outs

    def _apply_mlp(self, r: int, x: torch.Tensor) -> torch.Tensor:
        """``mlp(permute_arity(x))`` without building the r!-times wider tensor: the first linear layer of the
        concatenation equals the sum over orderings of its weight block applied to ``x`` and then permuted (a
        linear map acts per position), which is exact and several times faster at arity 3."""
        mlp = cast(nn.Sequential, self.mlps[r])   # an arity with outputs has an MLP (see __init__)
        if r < 2:
            return mlp(x)
        first = cast(nn.Linear, mlp[0])
        c = x.shape[-1]

        def ordering(k: int, perm: tuple[int, ...]) -> torch.Tensor:
            part = torch.nn.functional.linear(x, first.weight[:, k * c:(k + 1) * c])
            return part.permute(0, *[1 + p for p in perm], r + 1)

        orderings = itertools.starmap(ordering, enumerate(itertools.permutations(range(r))))
        y = functools.reduce(operator.add, orderings) + first.bias
        for layer in list(mlp)[1:]:
            y = layer(y)
        return y


def _given(inputs: Sequence[torch.Tensor | None], r: int) -> torch.Tensor:
    """The arity-``r`` input of a layer that has input channels there (so it must be given)."""
    x = inputs[r]
    if x is None:
        raise ValueError(f"the layer reads {r}-ary inputs, but none were given")
    return x


def _factorial(r: int) -> int:
    out = 1
    for k in range(2, r + 1):
        out *= k
    return out


class LogicMachine(nn.Module):
    """``depth`` :class:`NLMLayer` s of ``breadth``; see the module docstring for the interface. ``residual``
    concatenates each layer's inputs to its outputs (the next layer reads both); ``io_residual`` concatenates the
    machine's inputs to its final outputs."""

    def __init__(self, input_dims: Sequence[int], *, breadth: int = 3, depth: int = 4, output_dims: int = 8,
                 hidden_dims: Sequence[int] = (), exclude_self: bool = True, residual: bool = False,
                 io_residual: bool = False, output_arities: Sequence[int] | None = None) -> None:
        super().__init__()
        if breadth < 1 or depth < 1:
            raise ValueError(f"breadth and depth must be >= 1, got breadth {breadth}, depth {depth}")
        dims = [int(d or 0) for d in input_dims]
        if len(dims) != breadth + 1:
            raise ValueError(f"input_dims needs {breadth + 1} entries (arity 0..{breadth}), got {len(dims)}")
        self.breadth, self.depth = breadth, depth
        self.input_dims = list(dims)
        self.residual, self.io_residual = residual, io_residual
        # output_arities: only these arities of the last layer are needed (e.g. (1,) for per-entity features), so
        # layer i computes only the arities layer i+1 reads (r-1, r, r+1 of each it needs); results are identical
        need = [set(range(breadth + 1))] * depth
        if output_arities is not None and not residual:
            need = [set()] * depth
            need[-1] = {int(a) for a in output_arities}
            for i in range(depth - 2, -1, -1):
                need[i] = {a for r in need[i + 1] for a in (r - 1, r, r + 1) if 0 <= a <= breadth}
        self.layers = nn.ModuleList()
        for i in range(depth):
            outs = [output_dims if r in need[i] else 0 for r in range(breadth + 1)]
            layer = NLMLayer(breadth, dims, outs, hidden_dims, exclude_self)
            self.layers.append(layer)
            dims = [a + b for a, b in zip(dims, layer.output_dims)] if residual else list(layer.output_dims)
        self.out_dims = [a + b for a, b in zip(dims, self.input_dims)] if io_residual else dims

    def forward(self, inputs: Sequence[torch.Tensor | None],
                mask: torch.Tensor | None = None) -> list[torch.Tensor | None]:
        if len(inputs) != self.breadth + 1:
            raise ValueError(f"expected {self.breadth + 1} inputs (arity 0..{self.breadth}), got {len(inputs)}")
        n = _entity_count(inputs)
        f = [x if d else None for x, d in zip(inputs, self.input_dims)]
        for layer in self.layers:
            out = layer(f, n, mask)
            f = [_cat(a, b) for a, b in zip(f, out)] if self.residual else out
        if self.io_residual:
            f = [_cat(a, b) for a, b in zip(f, [x if d else None for x, d in zip(inputs, self.input_dims)])]
        return f


def _cat(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    if a is None:
        return b
    if b is None:
        return a
    return torch.cat([a, b], dim=-1)


def _entity_count(inputs: Sequence[torch.Tensor | None]) -> int:
    for r, x in enumerate(inputs):
        if x is not None and r >= 1:
            return int(x.shape[1])
    raise ValueError("an NLM needs at least one input of arity >= 1 (it fixes the number of entities)")


def split_observation(obs: torch.Tensor, blocks: Sequence[tuple[int, int]], n: int
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """SPF observation vectors ``[B, D]`` → ``(unary [B, n, U], binary [B, n, n, Bn], mask [B, n])``.
    ``blocks``: (offset, arity) per predicate in observation order (``ObservationLayout.blocks.values()``).
    An entity is real when any of its unary predicates holds (placeholders are all zero; every real entity has a
    type predicate); the ego (entity 0) is always real."""
    un = [obs[:, off:off + n] for off, ar in blocks if ar == 1]
    bi = [obs[:, off:off + n * n].reshape(-1, n, n) for off, ar in blocks if ar == 2]
    b = obs.shape[0]
    unary = torch.stack(un, dim=-1) if un else obs.new_zeros(b, n, 0)
    binary = torch.stack(bi, dim=-1) if bi else obs.new_zeros(b, n, n, 0)
    mask = unary.amax(dim=-1) > 0 if un else torch.ones(b, n, dtype=torch.bool, device=obs.device)
    mask = mask.clone()
    mask[:, 0] = True
    return unary, binary, mask
